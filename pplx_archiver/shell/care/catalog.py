"""A read-only catalog of an archive's threads, for ``mcp`` and ``vault`` (never writes).

Each thread the index marks done is described once from its index row and its
``thread.json`` (title, mode, models, space, dates, URL, folder); a thread is read again only
when its index row says it was archived again (``archived_at``), so a catalog kept open beside
a running ``sync`` follows it at the cost of one index query per refresh. The index is opened
read-only (``Archive(out, read_only=True)``): no lock, no write, also on a read-only archive.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.store import THREAD_JSON, Archive

_SELECT = (
    "SELECT uuid, account, title, mode, path, created, last_updated, archived_at "
    # `+status`: the status index would make SQLite walk every done thread for a lookup by
    # uuid or path; those have their own indexes.
    "FROM threads WHERE +status = 'done' AND path IS NOT NULL"
)


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadInfo:
    """What a reader knows of one archived thread."""

    uuid: str
    account: str
    title: str
    mode: str
    path: str
    url: str
    created: str
    updated: str
    space_title: str
    space_slug: str
    models: tuple[str, ...]
    turns: int
    sources: int
    stamp: str

    def brief(self) -> dict[str, Any]:
        """The small JSON object every answer carries about a thread."""
        return {
            "uuid": self.uuid,
            "title": self.title,
            "mode": self.mode,
            "created": self.created,
            "updated": self.updated,
            "space": self.space_title or self.space_slug or None,
            "models": list(self.models),
            "turns": self.turns,
            "folder": self.path,
            "url": self.url,
        }


def _text(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    return value if isinstance(value, str) else ""


def models_of(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The display models a thread's record names (``mode_signals.display_models``)."""
    signals = record.get("mode_signals")
    found = signals.get("display_models") if isinstance(signals, Mapping) else None
    if not isinstance(found, list):
        return ()
    return tuple(str(m) for m in found if isinstance(m, str) and m)


def read_record(folder: Path) -> dict[str, Any]:
    """A thread folder's ``thread.json`` ({} when missing or unreadable)."""
    try:
        record = orjson.loads((folder / THREAD_JSON).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return record if isinstance(record, dict) else {}


def _turn_files(folder: Path) -> int:
    """The number of turn files of a folder (a record without ``counts``, as older ones)."""
    try:
        return sum(1 for _ in folder.glob(outputs.TURN.path.replace(outputs.TURN_FIELD, "*")))
    except OSError:
        return 0


def info_from(row: Any, record: Mapping[str, Any], folder: Path | None = None) -> ThreadInfo:
    """A :class:`ThreadInfo` from an index row and the thread's record (its folder counts
    the turns when the record does not)."""
    space = record.get("space")
    space = space if isinstance(space, Mapping) else {}
    counts = record.get("counts")
    counts = counts if isinstance(counts, Mapping) else {}
    uuid = str(row["uuid"])
    return ThreadInfo(
        uuid=uuid,
        account=str(row["account"] or ""),
        title=_text(record, "title") or str(row["title"] or ""),
        mode=_text(record, "mode") or str(row["mode"] or ""),
        path=str(row["path"] or ""),
        url=_text(record, "url") or f"https://www.perplexity.ai/search/{uuid}",
        created=_text(record, "created") or str(row["created"] or ""),
        updated=_text(record, "last_updated") or str(row["last_updated"] or ""),
        space_title=str(space.get("title") or ""),
        space_slug=str(space.get("slug") or ""),
        models=models_of(record),
        turns=(
            int(counts.get("turns") or 0)
            if "turns" in counts or folder is None
            else _turn_files(folder)
        ),
        sources=int(counts.get("sources") or 0),
        stamp=str(row["archived_at"] or ""),
    )


class Catalog:
    """The done threads of one archive, refreshed from the index on demand (thread-safe)."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.archive = Archive(self.out, read_only=True)
        self._lock = threading.Lock()
        self._threads: dict[str, ThreadInfo] = {}

    def close(self) -> None:
        """Close the index connection."""
        self.archive.index.close()

    def _info(self, row: Any) -> ThreadInfo:
        """The thread of an index row, its record read again only when it was re-archived."""
        uuid = str(row["uuid"])
        with self._lock:
            known = self._threads.get(uuid)
        if known is not None and known.stamp == str(row["archived_at"] or ""):
            return known
        folder = self.folder_of(str(row["path"]))
        info = info_from(row, read_record(folder), folder)
        with self._lock:
            self._threads[uuid] = info
        return info

    def _rows(self, where: str, args: Sequence[Any]) -> list[ThreadInfo]:
        rows = self.archive.index.select(f"{_SELECT} AND ({where})", args)
        return [self._info(row) for row in rows]

    def refresh(self) -> dict[str, ThreadInfo]:
        """Every done thread, re-reading only the records of threads archived again."""
        infos = self._rows("1", ())
        fresh = {info.uuid: info for info in infos}
        with self._lock:
            self._threads = fresh
        return dict(fresh)

    def get_many(self, uuids: Iterable[str]) -> dict[str, ThreadInfo]:
        """The done threads among ``uuids`` (by uuid)."""
        wanted = sorted(set(uuids))
        found: dict[str, ThreadInfo] = {}
        for first in range(0, len(wanted), 500):
            chunk = wanted[first : first + 500]
            marks = ", ".join("?" for _ in chunk)
            found.update((i.uuid, i) for i in self._rows(f"uuid IN ({marks})", chunk))
        return found

    def folder_of(self, rel: str) -> Path:
        """The absolute folder of a thread path, confined to the archive."""
        try:
            return self.archive.folder(rel)
        except (StoreError, ValueError, OSError) as exc:
            raise StoreError(f"{rel}: not a folder inside the archive") from exc

    def resolve(self, ref: str) -> ThreadInfo:
        """A thread by full uuid, a unique uuid prefix (8 characters or more), its folder
        (relative to the archive) or its URL."""
        key = ref.strip().rstrip("/")
        if not key:
            raise LookupError("thread: give a thread uuid, uuid prefix, folder or URL")
        if key.startswith(("http://", "https://")):
            key = key.rsplit("/", 1)[-1]
        found = self._rows("uuid = ?", (key,)) or self._rows("path = ?", (key,))
        if not found and len(key) >= 8 and not any(c in key for c in "*?["):
            found = self._rows("uuid GLOB ?", (key + "*",))
            if len(found) > 1:
                raise LookupError(f"thread {ref!r}: the prefix matches {len(found)} threads")
        if found:
            return found[0]
        raise LookupError(
            f"thread {ref!r}: no archived thread has this uuid, folder or URL "
            "(list_threads or search give the ids)"
        )
