"""What the ``mcp`` server's tools answer, read from the archive (offline, read-only).

Every answer is a JSON object whose threads carry their folder (relative to the archive) and
URL. Lists start small (titles, excerpts, ids) and are paged; the full text of a thread, a
turn or a report is given on request, a slice of at most ``max_chars`` characters at a time
with the ``next_offset`` to continue from. A bad argument raises :class:`ToolInputError`
(the server turns it into an MCP error with the message); nothing here writes.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.errors import PplxError
from pplx_archiver.shell.archive import search as search_mod
from pplx_archiver.shell.archive.alerts import AlertBook
from pplx_archiver.shell.archive.store import INDEX_DIR
from pplx_archiver.shell.care.catalog import Catalog, ThreadInfo
from pplx_archiver.shell.care.mcp_args import (
    DEFAULT_TEXT,
    MAX_SEARCH_OFFSET,
    MAX_TEXT,
    REBUILD,
    ToolInputError,
    bounded,
    check_date,
    check_mode,
    domain_of,
    excerpt,
    hit_json,
    section,
    text_slice,
)

__all__ = ["DEFAULT_TEXT", "MAX_SEARCH_OFFSET", "MAX_TEXT", "Reader", "ToolInputError"]
__all__ += ["excerpt", "text_slice"]


class Reader:
    """The tools' logic over one archive."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.catalog = Catalog(self.out)
        # One read-only search connection per worker thread, kept: its page cache and the
        # file's memory map stay warm between calls (a new one per call cost tens of ms).
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def close(self) -> None:
        self.catalog.close()
        with self._lock:
            for db in self._connections:
                # A connection is closed by the process's end when it belongs to another
                # thread (sqlite3 refuses to close it from this one).
                with contextlib.suppress(sqlite3.ProgrammingError):
                    db.close()
            self._connections.clear()

    def _search_db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = search_mod.open_readonly(self.out / INDEX_DIR / "archive.sqlite")
            self._local.db = db
            with self._lock:
                self._connections.append(db)
        return db

    # -- threads ---------------------------------------------------------------------------

    def thread(self, ref: str) -> ThreadInfo:
        try:
            return self.catalog.resolve(ref)
        except LookupError as exc:
            raise ToolInputError(str(exc)) from None

    def _read(self, info: ThreadInfo, name: str) -> str | None:
        path = self.catalog.folder_of(info.path) / name
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return None

    def list_threads(
        self,
        *,
        mode: str | None = None,
        space: str | None = None,
        since: str | None = None,
        until: str | None = None,
        model: str | None = None,
        title: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Threads newest first (by creation), filtered, one page."""
        check_mode(mode)
        start, end = check_date(since, "since"), check_date(until, "until")
        bounded("limit", limit, 1, 200)
        bounded("offset", offset, 0, 10**9)
        wanted = title.casefold() if title else None
        rows = []
        for info in self.catalog.refresh().values():
            if mode and info.mode != mode:
                continue
            if space and space not in (info.space_title, info.space_slug):
                continue
            if model and model not in info.models:
                continue
            if start and info.created < start:
                continue
            if end and info.created[: len(end)] > end:
                continue
            if wanted and wanted not in info.title.casefold():
                continue
            rows.append(info)
        rows.sort(key=lambda t: (t.created, t.uuid), reverse=True)
        page = rows[offset : offset + limit]
        more = offset + len(page) < len(rows)
        return {
            "total": len(rows),
            "threads": [t.brief() for t in page],
            "next_offset": offset + len(page) if more else None,
        }

    def list_spaces(self) -> dict[str, Any]:
        """Every space with its thread count and newest thread."""
        spaces: dict[str, dict[str, Any]] = {}
        for info in self.catalog.refresh().values():
            if not (info.space_title or info.space_slug):
                continue
            key = info.space_slug or info.space_title
            entry = spaces.setdefault(
                key, {"title": info.space_title, "slug": info.space_slug, "threads": 0}
            )
            entry["threads"] += 1
            if info.created > entry.get("newest", ""):
                entry["newest"] = info.created
        items = sorted(spaces.values(), key=lambda s: (-s["threads"], s["slug"]))
        return {"spaces": items, "total": len(items)}

    def get_thread(
        self, ref: str, *, full: bool = False, offset: int = 0, max_chars: int = DEFAULT_TEXT
    ) -> dict[str, Any]:
        """A thread's outline (its turns' questions), or its whole conversation text."""
        info = self.thread(ref)
        answer: dict[str, Any] = {"thread": info.brief()}
        answer["has_report"] = self._read(info, outputs.REPORT.path) is not None
        if full:
            text = self._read(info, outputs.CONVERSATION.path)
            if text is None:
                raise ToolInputError(f"{info.path}: conversation.md is missing (run re-render)")
            answer |= text_slice(text, offset, max_chars)
            return answer
        answer["outline"] = [
            {"turn": n, "query": excerpt(q)} for n, q in self._queries(info) if n <= 200
        ]
        return answer

    def _queries(self, info: ThreadInfo) -> list[tuple[int, str]]:
        out = []
        for n in range(1, info.turns + 1):
            text = self._read(info, outputs.TURN.at(n)) or ""
            out.append((n, section(text, "Query")))
        return out

    def get_turn(
        self, ref: str, turn: int, *, offset: int = 0, max_chars: int = DEFAULT_TEXT
    ) -> dict[str, Any]:
        """One turn's file: query, work process, answer and citations."""
        info = self.thread(ref)
        bounded("turn", turn, 1, max(1, info.turns))
        text = self._read(info, outputs.TURN.at(turn))
        if text is None:
            raise ToolInputError(f"{info.path}: turn {turn} has no file (run re-render)")
        return {"thread": info.brief(), "turn": turn} | text_slice(text, offset, max_chars)

    def get_report(
        self, ref: str, *, offset: int = 0, max_chars: int = DEFAULT_TEXT
    ) -> dict[str, Any]:
        """A deep-research thread's report (``report.md``) and its report assets."""
        info = self.thread(ref)
        text = self._read(info, outputs.REPORT.path)
        if text is None:
            raise ToolInputError(f"thread {info.uuid} has no report (not a deep-research one?)")
        assets = [a for a in self._assets(info) if "REPORT" in str(a.get("asset_type", ""))]
        files = [f"{info.path}/{a['path']}" for a in assets if a.get("status") == "stored"]
        return {"thread": info.brief(), "report_assets": files} | text_slice(
            text, offset, max_chars
        )

    def _assets(self, info: ThreadInfo) -> list[dict[str, Any]]:
        raw = self._read(info, "assets/manifest.json")
        try:
            data = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            return []
        items = data.get("assets") if isinstance(data, dict) else None
        return [a for a in items or [] if isinstance(a, dict) and isinstance(a.get("path"), str)]

    def sources_for(
        self, ref: str, *, domain: str | None = None, limit: int = 50, offset: int = 0
    ) -> dict[str, Any]:
        """The thread's unique sources (``sources.json``), optionally of one domain."""
        info = self.thread(ref)
        bounded("limit", limit, 1, 500)
        bounded("offset", offset, 0, 10**9)
        raw = self._read(info, outputs.SOURCES_JSON.path)
        try:
            data = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            data = {}
        items = [s for s in data.get("sources") or [] if isinstance(s, dict)]
        if domain:
            want = domain.lower().removeprefix("www.")
            items = [s for s in items if domain_of(str(s.get("url", ""))).endswith(want)]
        page = items[offset : offset + limit]
        sources = [
            {
                "name": s.get("name"),
                "url": s.get("url"),
                "domain": domain_of(str(s.get("url", ""))),
                "snippet": excerpt(str(s.get("snippet") or ""), 300),
            }
            for s in page
        ]
        more = offset + len(page) < len(items)
        return {
            "thread": info.brief(),
            "total": len(items),
            "sources": sources,
            "next_offset": offset + len(page) if more else None,
        }

    # -- the index's tables ----------------------------------------------------------------

    def related(self, ref: str, *, kind: str | None = None) -> dict[str, Any]:
        """The thread's edges in the relations graph, with the other thread of each."""
        info = self.thread(ref)
        kinds = ("same_space", "same_prompt", "references", "subagent_of")
        if kind is not None and kind not in kinds:
            raise ToolInputError(f"kind {kind!r}: expected one of {', '.join(kinds)}")
        try:
            rows = self.catalog.archive.index.select(
                "SELECT src, dst, kind, evidence FROM relations WHERE src = ? OR dst = ? "
                "ORDER BY kind, src, dst",
                (info.uuid, info.uuid),
            )
        except (PplxError, sqlite3.Error):
            rows = []  # no relations table yet
        threads = self.catalog.get_many([r[0] for r in rows] + [r[1] for r in rows])
        edges = []
        for src, dst, edge_kind, evidence in rows:
            if kind and edge_kind != kind:
                continue
            other = threads.get(dst if src == info.uuid else src)
            edges.append(
                {
                    "kind": edge_kind,
                    "direction": "out" if src == info.uuid else "in",
                    "evidence": evidence,
                    "other": other.brief() if other else {"uuid": dst},
                }
            )
        note = None if rows else f"no edges: run `pplx-export relations --out {self.out}`"
        return {"thread": info.brief(), "edges": edges, "note": note}

    def alerts(
        self,
        *,
        kind: str | None = None,
        thread: str | None = None,
        since: str | None = None,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Recorded alerts, newest first."""
        bounded("limit", limit, 1, 500)
        start = check_date(since, "since")
        uuid = self.thread(thread).uuid if thread else None
        book = AlertBook(self.catalog.archive.index)
        found = book.list(since=start, kinds=(kind,) if kind else (), thread_uuid=uuid)
        found = found[::-1][:limit]
        threads = self.catalog.get_many(a.thread_uuid for a in found if a.thread_uuid)
        items = []
        for alert in found:
            item = alert.as_json()
            known = threads.get(alert.thread_uuid)
            if known is not None:
                item["thread"] = {"title": known.title, "folder": known.path, "url": known.url}
            items.append(item)
        return {"alerts": items, "count": len(items)}

    # -- search ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        raw: bool = False,
        mode: str | None = None,
        space: str | None = None,
        since: str | None = None,
        until: str | None = None,
        model: str | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> dict[str, Any]:
        """The archive's own search: literal text by default, FTS5 syntax when ``raw``."""
        if not query.strip():
            raise ToolInputError("query: give the text to find")
        bounded("limit", limit, 1, 100)
        bounded("offset", offset, 0, MAX_SEARCH_OFFSET)
        filters = search_mod.Filters(
            mode=check_mode(mode), space=space, since=check_date(since, "since"),
            until=check_date(until, "until"),
        )  # fmt: skip
        allow = None if model is None else self._with_model(model)
        hits, more = self._page(query, filters, offset, limit, raw, allow)
        threads = self.catalog.get_many(h.thread_uuid for h in hits)
        return {
            "query": query,
            "count": len(hits),
            "hits": [hit_json(h, threads.get(h.thread_uuid)) for h in hits],
            "next_offset": offset + len(hits) if more else None,
        }

    def _with_model(self, model: str) -> Callable[[set[str]], set[str]]:
        def allow(uuids: set[str]) -> set[str]:
            found = self.catalog.get_many(uuids)
            return {u for u, info in found.items() if model in info.models}

        return allow

    def _page(
        self,
        query: str,
        filters: search_mod.Filters,
        offset: int,
        limit: int,
        raw: bool,
        allow: Callable[[set[str]], set[str]] | None,
    ) -> tuple[list[search_mod.Hit], bool]:
        db = self._search_db()
        try:
            if search_mod.index_state(db) != "ready":
                raise ToolInputError(
                    "the search index needs a rebuild (an archive made by an older version, "
                    f"or a rebuild in progress): run `{REBUILD.format(out=self.out)}` once; "
                    "the other tools work meanwhile"
                )
            return search_mod.search_page(db, query, filters, offset, limit, raw=raw, allow=allow)
        except PplxError as exc:
            raise ToolInputError(str(exc)) from None
