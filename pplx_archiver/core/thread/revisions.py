"""Versions of a thread as the server gave them: what each entry said, and what changed.

A thread's raw files (``raw_entries.json``, ``raw_blocks.json``) hold the newest server
version; the archive keeps every earlier one as content-addressed chunks (one chunk a page,
see :func:`split_chunks`). This module compares two versions: :func:`digest` reads what each
entry said (query, answer text, sources, models, status) and :func:`compare` what changed
between two digests; :func:`word_diff` is the word-level diff of one answer;
:func:`substitutions` the turns whose served model is not the one chosen.

Pure: bytes in, values out; the same input gives the same output.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pplx_archiver.core.thread.answers import extract_answer
from pplx_archiver.core.thread.citations import dedupe, entry_sources
from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.rawfile import decode_raw_pages
from pplx_archiver.core.thread.values import Entry
from pplx_archiver.errors import PayloadError

# A page of a raw file starts on a line of its own with this (see core/thread/rawfile.py).
PAGE_MARK = b'\n{"request":'


def split_chunks(data: bytes) -> list[bytes]:
    """The bytes of a raw file cut before each page: ``b"".join`` gives them back exactly.

    Any bytes are accepted (a file without the mark is one chunk), so a stored version is
    always rebuilt byte for byte; an unchanged page gives the same chunk in every version
    (but the last, which also carries the file's closing bytes).
    """
    parts = data.split(PAGE_MARK)
    chunks = [parts[0] + (b"\n" if len(parts) > 1 else b"")]
    for i, part in enumerate(parts[1:], start=1):
        tail = b"\n" if i < len(parts) - 1 else b""
        chunks.append(PAGE_MARK[1:] + part + tail)
    return [c for c in chunks if c]


# Signed-URL parameters that move with the time of the fetch alone (the credentials are
# masked already, core/thread/scrub.py): two fetches that differ only in these are the same version.
_TIMED = re.compile(rb"(?i)((?:[?&]|\\u0026)(?:expires|x-amz-date|x-amz-expires)=)[^&\"\\\s#<>']*")


def same_content(old: bytes, new: bytes) -> bool:
    """Whether two raw files differ at most in the expiry times of signed URLs."""
    return old == new or _TIMED.sub(rb"\1", old) == _TIMED.sub(rb"\1", new)


def sha256(data: bytes) -> str:
    """The hex SHA-256 of ``data`` (a chunk's name in the history)."""
    return hashlib.sha256(data).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class EntryDigest:
    """What one entry of a version said."""

    uuid: str
    query: str
    answer: str
    sources: tuple[str, ...]
    chosen_model: str
    served_model: str
    status: str
    created_us: int | None = None

    @property
    def answer_sha(self) -> str:
        """A short fingerprint of the answer text (names a rewrite fact)."""
        return sha256(self.answer.encode("utf-8", "replace"))[:16]


def digest(raw_entries: bytes, raw_blocks: bytes | None, mode: str = "") -> tuple[EntryDigest, ...]:
    """Every entry of one version, in thread order (PayloadError for an unreadable file)."""
    plain = decode_raw_pages(raw_entries, name="raw_entries.json")
    blocks = decode_raw_pages(raw_blocks, name="raw_blocks.json") if raw_blocks else ()
    thread = decode_thread(plain, blocks)
    out = []
    for entry in thread.entries:
        sources = tuple(s.url or s.name for s in dedupe(entry_sources(entry)) if s.url or s.name)
        out.append(
            EntryDigest(
                uuid=entry.uuid or entry.key,
                query=entry.query,
                answer=extract_answer(entry, mode),
                sources=sources,
                chosen_model=entry.user_model,
                served_model=entry.display_model,
                status=entry.status,
                created_us=entry.created_us,
            )
        )
    return tuple(out)


def safe_digest(
    raw_entries: bytes, raw_blocks: bytes | None, mode: str = ""
) -> tuple[EntryDigest, ...] | None:
    """:func:`digest`, or None when the version cannot be read (never raises for it)."""
    try:
        return digest(raw_entries, raw_blocks, mode)
    except PayloadError:
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class EntryChange:
    """How one entry kept under the same id differs between two versions."""

    uuid: str
    turn: int  # 1-based position in the newer version
    answer: bool
    sources_added: tuple[str, ...]
    sources_removed: tuple[str, ...]
    model: tuple[str, str] | None  # served model (old, new) when it changed
    status: tuple[str, str] | None

    @property
    def rewritten(self) -> bool:
        """The answer text or its sources changed under the same entry id."""
        return self.answer or bool(self.sources_added or self.sources_removed)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"entry_uuid": self.uuid, "turn": self.turn}
        if self.answer:
            out["answer"] = True
        if self.sources_added:
            out["sources_added"] = list(self.sources_added)
        if self.sources_removed:
            out["sources_removed"] = list(self.sources_removed)
        if self.model:
            out["model"] = list(self.model)
        if self.status:
            out["status"] = list(self.status)
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class Changes:
    """What changed from one version to the next."""

    turns_added: tuple[str, ...] = ()
    turns_removed: tuple[str, ...] = ()
    entries: tuple[EntryChange, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.turns_added or self.turns_removed or self.entries)

    def as_json(self) -> dict[str, Any]:
        """The summary kept with a version (``history`` prints it)."""
        return {
            "turns_added": list(self.turns_added),
            "turns_removed": list(self.turns_removed),
            "entries": [e.as_json() for e in self.entries],
        }


def _entry_change(turn: int, old: EntryDigest, new: EntryDigest) -> EntryChange | None:
    added = tuple(s for s in new.sources if s not in set(old.sources))
    removed = tuple(s for s in old.sources if s not in set(new.sources))
    model = (old.served_model, new.served_model) if old.served_model != new.served_model else None
    status = (old.status, new.status) if old.status != new.status else None
    answer = old.answer != new.answer
    if not (answer or added or removed or model or status):
        return None
    return EntryChange(new.uuid, turn, answer, added, removed, model, status)


def compare(old: Sequence[EntryDigest], new: Sequence[EntryDigest]) -> Changes:
    """What changed between two versions, entry by entry (matched by entry id)."""
    before = {d.uuid: d for d in old}
    after = {d.uuid for d in new}
    changes = []
    for turn, entry in enumerate(new, start=1):
        if entry.uuid in before:
            change = _entry_change(turn, before[entry.uuid], entry)
            if change is not None:
                changes.append(change)
    return Changes(
        turns_added=tuple(d.uuid for d in new if d.uuid not in before),
        turns_removed=tuple(d.uuid for d in old if d.uuid not in after),
        entries=tuple(changes),
    )


_WORD = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """A word-level diff: ``(op, text)`` pairs, op ``=`` kept, ``-`` removed, ``+`` added.

    Words and the spaces between them are the units (difflib's longest matching blocks), so
    joining the ``=`` and ``-`` texts gives ``old`` and the ``=`` and ``+`` texts ``new``.
    """
    a, b = _WORD.findall(old), _WORD.findall(new)
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out


def substitution_findings(entries: Sequence[Entry]) -> list[tuple[str, dict[str, Any]]]:
    """``MODEL_SUBSTITUTED`` for each turn served by another model than the one chosen
    (both fields present; nothing is guessed when one is missing)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for turn, entry in enumerate(entries, start=1):
        chosen, served = entry.user_model, entry.display_model
        if chosen and served and chosen != served:
            fields = {"turn": turn, "entry_uuid": entry.uuid or entry.key}
            out.append(("MODEL_SUBSTITUTED", {**fields, "chosen": chosen, "served": served}))
    return out


def substitutions(digests: Sequence[EntryDigest]) -> list[dict[str, Any]]:
    """Turns served by another model than the one chosen (both fields present, never guessed)."""
    out = []
    for turn, d in enumerate(digests, start=1):
        if d.chosen_model and d.served_model and d.chosen_model != d.served_model:
            out.append(
                {
                    "entry_uuid": d.uuid,
                    "turn": turn,
                    "chosen": d.chosen_model,
                    "served": d.served_model,
                }
            )
    return out


def rewrite_findings(
    changes: Changes, versions: tuple[int, int], update_moved: bool
) -> list[tuple[str, Mapping[str, Any]]]:
    """``ANSWER_REWRITTEN`` for each entry whose answer or sources changed under its id."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    for change in changes.entries:
        if not change.rewritten:
            continue
        what = [k for k in ("answer", "sources") if _changed(change, k)]
        if change.model:
            what.append("model")
        out.append(
            (
                "ANSWER_REWRITTEN",
                {
                    "entry_uuid": change.uuid,
                    "turn": change.turn,
                    "changed": what,
                    "from_version": versions[0],
                    "to_version": versions[1],
                    "silent": not update_moved,
                    "sources_added": len(change.sources_added),
                    "sources_removed": len(change.sources_removed),
                },
            )
        )
    return out


def _changed(change: EntryChange, what: str) -> bool:
    if what == "answer":
        return change.answer
    return bool(change.sources_added or change.sources_removed)
