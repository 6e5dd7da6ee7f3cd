"""Every server version of a thread, kept in its folder (``history/``).

Layout, inside the thread folder::

    history/versions.jsonl          one JSON object a version, oldest first
    history/chunks/<sha256>         the bytes of one page of a raw file (content-addressed)

A version line: ``version`` (1, 2, …), ``fetched_at``, ``run_id``, ``updated_at`` (the
listing's update time then), ``files`` (raw file name → the SHA-256 of its chunks, in
order: joined, they are the file), ``sha256`` (raw file name → the file's SHA-256) and
``changes`` (what changed from the version before; null for the first).

The newest version is the thread's raw files themselves; the chunks of every earlier
version are in ``history/chunks``, each stored once however many versions share it. A thread
fetched once has no ``history/`` at all; an unchanged fetch adds nothing. :func:`plan_step`
reads (the writer applies its result: chunks first, then ``versions.jsonl``, then the raw
files); :func:`versions` and :func:`raw_of` read a folder's history back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread.layout import normalize_timestamp_key
from pplx_archiver.core.thread.revisions import (
    compare,
    rewrite_findings,
    safe_digest,
    same_content,
    sha256,
    split_chunks,
)
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.files import RAW_BLOCKS, RAW_ENTRIES, RAW_FILES

if TYPE_CHECKING:
    from pplx_archiver.shell.archive.index_schema import ThreadRow

HISTORY_DIR = "history"
VERSIONS = f"{HISTORY_DIR}/versions.jsonl"
CHUNKS = f"{HISTORY_DIR}/chunks"


@dataclasses.dataclass(frozen=True, slots=True)
class HistoryStep:
    """What a commit adds to a thread's history: chunks, the new versions file, findings."""

    chunks: Mapping[str, bytes]  # "history/chunks/<sha>" -> bytes (not stored yet)
    versions: bytes
    version: int
    findings: tuple[tuple[str, Mapping[str, Any]], ...]


def versions(folder: Path) -> list[dict[str, Any]]:
    """The version lines of a thread folder ([] when it has no history)."""
    try:
        data = (folder / VERSIONS).read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"{folder / VERSIONS}: cannot read: {exc.strerror or exc}") from None
    out = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise StoreError(f"{folder / VERSIONS}:{number}: not a version line: {exc}") from None
        if not isinstance(value, dict) or not isinstance(value.get("version"), int):
            raise StoreError(f"{folder / VERSIONS}:{number}: not a version line")
        out.append(value)
    return out


def version_line(
    number: int, when: str | None, run_id: int | None, updated: str | None, raw: Mapping[str, bytes]
) -> dict[str, Any]:
    """A version line for raw files ``raw`` (``changes`` filled in by the caller)."""
    return {
        "version": number,
        "fetched_at": when,
        "run_id": run_id,
        "updated_at": updated,
        "files": {name: [sha256(c) for c in split_chunks(data)] for name, data in raw.items()},
        "sha256": {name: sha256(data) for name, data in raw.items()},
        "changes": None,
    }


def _read_raw(folder: Path) -> dict[str, bytes]:
    out = {}
    for name in RAW_FILES:
        try:
            out[name] = (folder / name).read_bytes()
        except FileNotFoundError:
            continue
    return out


def _committed_raw(source: Path, previous: ThreadRow | None) -> dict[str, bytes] | None:
    """The stored raw files when they are what a finished commit wrote (their size and hash
    as the index recorded them), else None: the leftovers of a run that stopped mid-commit
    (a crash, a full disk) are not a version the server gave and the archive kept."""
    recorded = previous.files if previous is not None else None
    if not isinstance(recorded, Mapping):
        return None
    old = {n: d for n, d in _read_raw(source).items() if n in recorded}
    if RAW_ENTRIES not in old:
        return None
    for name, data in old.items():
        expected = recorded.get(name)
        if not isinstance(expected, list | tuple) or len(expected) != 2:
            return None
        if len(data) != expected[0] or sha256(data) != expected[1]:
            return None
    return old


def _dump(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(line, option=orjson.OPT_SORT_KEYS) + b"\n" for line in lines)


def plan_step(
    source: Path, previous: ThreadRow | None, plan: ThreadCommit, now: str
) -> HistoryStep | None:
    """The history a commit adds when its raw files differ from the stored ones (reads only).

    None for a new thread and for a fetch whose raw files are the stored ones.
    """
    old = _committed_raw(source, previous)
    new = {RAW_ENTRIES: plan.raw_entries}
    if plan.raw_blocks is not None:
        new[RAW_BLOCKS] = plan.raw_blocks
    if old is None or (old.keys() == new.keys() and all(same_content(old[k], new[k]) for k in new)):
        return None  # a new thread, or the same version (signed URLs renewed at most)
    lines = versions(source)
    old_sha = {name: sha256(data) for name, data in old.items()}
    if not lines or lines[-1].get("sha256") != old_sha:
        # the stored raw files are a version not yet listed (the first one, most often)
        when = previous.archived_at if previous else None
        run = previous.updated_in_run if previous else None
        updated = previous.last_updated if previous else None
        lines.append(version_line(len(lines) + 1, when, run, updated, old))
    chunks: dict[str, bytes] = {}
    for data in old.values():
        for chunk in split_chunks(data):
            key = f"{CHUNKS}/{sha256(chunk)}"
            if key not in chunks and not (source / key).is_file():
                chunks[key] = chunk
    updated_now = plan.listing_updated_at or None
    line = version_line(len(lines) + 1, now, plan.run_id, updated_now, new)
    mode = plan.result.mode
    before = safe_digest(old[RAW_ENTRIES], old.get(RAW_BLOCKS), mode)
    after = safe_digest(plan.raw_entries, plan.raw_blocks, mode)
    findings: list[tuple[str, Mapping[str, Any]]] = []
    if before is not None and after is not None:
        changes = compare(before, after)
        line["changes"] = changes.as_json()
        old_key = normalize_timestamp_key(previous.last_updated or "") if previous else ""
        moved = normalize_timestamp_key(updated_now or "") != old_key
        findings = rewrite_findings(changes, (line["version"] - 1, line["version"]), moved)
    else:
        line["changes"] = {"unreadable": True}
    lines.append(line)
    return HistoryStep(chunks, _dump(lines), int(line["version"]), tuple(findings))


def raw_of(folder: Path, line: Mapping[str, Any]) -> dict[str, bytes]:
    """The raw files of one version, rebuilt from the folder (StoreError when a piece is gone).

    The newest version's files may be the thread's own raw files: they are used when their
    hash is the version's.
    """
    out: dict[str, bytes] = {}
    hashes = line.get("sha256") or {}
    for name, chunk_ids in (line.get("files") or {}).items():
        if name not in RAW_FILES:
            raise StoreError(
                f"{folder / VERSIONS}: version {line.get('version')}: bad file {name!r}"
            )
        current = folder / name
        if current.is_file():
            data = current.read_bytes()
            if sha256(data) == hashes.get(name):
                out[name] = data
                continue
        parts = []
        for chunk_id in chunk_ids:
            path = folder / CHUNKS / str(chunk_id)
            if len(str(chunk_id)) != 64 or not path.is_file():
                raise StoreError(
                    f"{path}: chunk of version {line.get('version')} is missing; "
                    "the version cannot be rebuilt"
                )
            parts.append(path.read_bytes())
        data = b"".join(parts)
        if sha256(data) != hashes.get(name):
            raise StoreError(
                f"{folder / HISTORY_DIR}: version {line.get('version')} of {name} does not "
                "match its recorded hash"
            )
        out[name] = data
    return out


def all_versions(folder: Path, row: ThreadRow | None) -> list[dict[str, Any]]:
    """Every version of a thread: the recorded ones, or the stored raw files as version 1."""
    lines = versions(folder)
    if lines:
        return lines
    raw = _read_raw(folder)
    if RAW_ENTRIES not in raw:
        return []
    when = row.archived_at if row else None
    run = row.updated_in_run if row else None
    return [version_line(1, when, run, row.last_updated if row else None, raw)]


def problems(folder: Path) -> list[str]:
    """What is wrong with a folder's history: unreadable lines, chunks missing or altered."""
    try:
        lines = versions(folder)
    except StoreError as exc:
        return [str(exc)]
    found = []
    for line in lines:
        try:
            raw_of(folder, line)
        except (StoreError, OSError) as exc:
            found.append(str(exc))
    chunk_dir = folder / CHUNKS
    if chunk_dir.is_dir():
        for path in sorted(chunk_dir.iterdir()):
            if path.is_file() and sha256(path.read_bytes()) != path.name:
                found.append(f"{path}: bytes do not match the chunk's name (altered)")
    return found
