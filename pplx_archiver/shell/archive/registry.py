"""The answer-variant registry ``index/answer_variants_log.jsonl``: append-only, idempotent.

One JSON object per line: the variant record (``thread_uuid, uuid8, title, entry_uuid,
sibling_uuid, selection_status, experiment_role`` and ``experiment_override`` when present)
plus ``source`` (``online`` or ``offline``), ``change`` (``new`` or ``changed``) and
``registered_at``. Records are keyed by (thread_uuid, entry_uuid): registering a record that
is already present with identical content appends nothing; a changed record is appended and
the newest line wins when reading. Lines are written whole with one ``write`` + flush + fsync;
a torn last line (a crash mid-append) is cut off when the registry is opened.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.index import Index

META_KEYS = frozenset({"source", "change", "registered_at"})
SOURCES = ("online", "offline")

Key = tuple[str, str]


def utc_now() -> str:
    """The current UTC time, ISO-8601 with a ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record_key(record: Mapping[str, Any]) -> Key:
    """(thread_uuid, entry_uuid) of a record, refusing records without them."""
    thread_uuid = record.get("thread_uuid")
    entry_uuid = record.get("entry_uuid")
    if not isinstance(thread_uuid, str) or not isinstance(entry_uuid, str):
        raise StoreError(f"variant record needs string thread_uuid and entry_uuid: {record!r}")
    return (thread_uuid, entry_uuid)


def strip_meta(line: Mapping[str, Any]) -> dict[str, Any]:
    """The variant record of a registry line (bookkeeping keys removed)."""
    return {k: v for k, v in line.items() if k not in META_KEYS}


def read_lines(
    path: Path, problems: list[tuple[int, str]] | None = None
) -> tuple[list[dict[str, Any]], int | None]:
    """Parse the registry; return its lines and the byte offset of a torn tail (or None).

    A last line that is unterminated or not JSON is torn. A bad line elsewhere is a
    :class:`StoreError` naming its line number, unless ``problems`` is given: then it is
    skipped and recorded there as (line number, reason) so the caller can report it.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], None
    complete = data.split(b"\n")[:-1]  # the part after the last newline is torn (or empty)
    torn = not data.endswith(b"\n") and data != b""
    lines: list[dict[str, Any]] = []
    offset = 0
    for number, raw in enumerate(complete, start=1):
        try:
            value = orjson.loads(raw)
            if not isinstance(value, dict):
                raise ValueError("not an object")
            record_key(value)
        except (orjson.JSONDecodeError, ValueError, StoreError) as exc:
            if number == len(complete):  # a garbled last line: torn by a crash, cut it off
                return lines, offset
            if problems is None:
                raise StoreError(f"{path}:{number}: not a variant record line: {exc}") from None
            problems.append((number, f"not a variant record line: {exc}"))
            offset += len(raw) + 1
            continue
        lines.append(value)
        offset += len(raw) + 1
    return lines, (offset if torn else None)


class Registry:
    """The variant registry of one archive, mirrored in the index's ``variants`` table."""

    def __init__(
        self,
        path: Path,
        index: Index | None = None,
        *,
        clock: Callable[[], str] = utc_now,
        repair: bool = True,
    ) -> None:
        self.path = path
        self._index = index
        self._clock = clock
        self._lock = threading.Lock()
        # Bad lines are skipped and kept here (verify reports them; reindex rewrites the file).
        self.problems: list[tuple[int, str]] = []
        if repair:
            path.parent.mkdir(parents=True, exist_ok=True)
        lines, torn_at = read_lines(path, self.problems)
        if torn_at is not None and repair:
            with open(path, "r+b") as fh:
                fh.truncate(torn_at)
                fh.flush()
                os.fsync(fh.fileno())
        self._current: dict[Key, dict[str, Any]] = {}
        for line in lines:
            self._current[record_key(line)] = strip_meta(line)
        self.repaired = torn_at is not None and repair

    def rewrite(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Replace the file with one line per record (atomic); return the number written.

        ``pplx-export reindex`` uses it to drop bad and duplicate lines: each record keeps
        its bookkeeping keys (``source``, ``change``, ``registered_at``) when it has them.
        """
        from pplx_archiver.shell.archive.fsutil import write_atomic

        chunk = bytearray()
        current: dict[Key, dict[str, Any]] = {}
        count = 0
        for rec in records:
            chunk += orjson.dumps(dict(rec), option=orjson.OPT_SORT_KEYS) + b"\n"
            current[record_key(rec)] = strip_meta(rec)
            count += 1
        with self._lock:
            try:
                write_atomic(self.path, bytes(chunk))
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot rewrite the registry: {exc}") from exc
            self._current = current
            self.problems = []
        return count

    def current(self) -> dict[Key, dict[str, Any]]:
        """The newest record of every (thread, entry) key."""
        with self._lock:
            return {k: dict(v) for k, v in self._current.items()}

    def register(
        self,
        records: Iterable[Mapping[str, Any]],
        source: str,
        *,
        run_id: int | None = None,
    ) -> list[tuple[dict[str, Any], str]]:
        """Append the records that are new or changed; return them with ``new``/``changed``."""
        if source not in SOURCES:
            raise StoreError(f"variant source must be online or offline, got {source!r}")
        out: list[tuple[dict[str, Any], str]] = []
        with self._lock:
            chunk = bytearray()
            pending: dict[Key, dict[str, Any]] = {}
            for rec in records:
                record = strip_meta(rec)
                key = record_key(record)
                known = pending.get(key, self._current.get(key))
                if known == record:
                    continue
                change = "new" if known is None else "changed"
                line = {**record, "source": source, "change": change}
                line["registered_at"] = self._clock()
                chunk += orjson.dumps(line, option=orjson.OPT_SORT_KEYS) + b"\n"
                pending[key] = record
                out.append((record, change))
            if not chunk:
                return out
            try:
                with open(self.path, "ab") as fh:
                    fh.write(bytes(chunk))
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot append: {exc}") from exc
            self._current.update(pending)
        if self._index is not None:
            self._index.put_variants([rec for rec, _ in out], run_id)
        return out
