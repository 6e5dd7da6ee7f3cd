"""Thread-detail paging as a pure generator: it yields page requests and receives page bodies.

The shell drives it (``req = gen.send(body)``) and never decides paging itself, so the rules
are unit-tested without HTTP: follow ``next_cursor`` verbatim (``offset`` is ignored by the
server), stop on ``has_next_page`` false or an empty cursor, stop on a repeated cursor (a loop)
and on a page cap, and report what happened in a :class:`PagingRecord` for ``thread.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Mapping
from typing import Any

from pplx_archiver.core.thread.values import Thread
from pplx_archiver.errors import PayloadError

PLAIN = "plain"
BLOCKS = "blocks"

# The use cases pplx-export asks for; they decide which blocks the server includes.
BLOCK_USE_CASES = (
    "workflow_steps",
    "unified_assets",
    "asset_diff_assets",
    "write_delta",
    "bash_delta",
    "run_subagent_delta",
    "background_agents",
    "markdown",
)
DEFAULT_PAGE_LIMIT = 100
MAX_PAGES = 200


@dataclasses.dataclass(frozen=True, slots=True)
class PageRequest:
    """One GET the shell must make: path and ordered query parameters (no secrets)."""

    path: str
    params: tuple[tuple[str, str], ...]

    def as_record(self) -> dict[str, Any]:
        """The request as stored next to the raw body."""
        return {"method": "GET", "path": self.path, "params": [list(p) for p in self.params]}


@dataclasses.dataclass(frozen=True, slots=True)
class PagingRecord:
    """How paging ended: pages fetched, cursors followed, and whether it was complete."""

    pages: int
    cursor_chain: tuple[str, ...]
    complete: bool
    stop_reason: str  # "last_page", "empty_cursor", "cursor_loop", "page_cap"


def page_request(
    thread_id: str, flavour: str, cursor: str | None, limit: int = DEFAULT_PAGE_LIMIT
) -> PageRequest:
    """The request for one page of a thread in the given flavour."""
    params: list[tuple[str, str]] = []
    if flavour == BLOCKS:
        params += [
            ("with_schematized_response", "true"),
            ("with_parent_info", "true"),
            ("limit", str(limit)),
            ("offset", "0"),
            ("from_first", "false"),
        ]
        params += [("supported_block_use_cases", uc) for uc in BLOCK_USE_CASES]
    else:
        params.append(("limit", str(limit)))
    if cursor:
        params.append(("cursor", cursor))
    return PageRequest(path=f"/rest/thread/{thread_id}", params=tuple(params))


def _paging_fields(body: Any) -> tuple[bool, str | None]:
    if not isinstance(body, Mapping):
        raise PayloadError("$", f"thread page must be a JSON object, got {type(body).__name__}")
    has_next = body.get("has_next_page", False)
    cursor = body.get("next_cursor")
    if has_next is not None and not isinstance(has_next, bool):
        raise PayloadError("has_next_page", f"expected a boolean, got {type(has_next).__name__}")
    if cursor is not None and not isinstance(cursor, str):
        raise PayloadError("next_cursor", f"expected a string, got {type(cursor).__name__}")
    return bool(has_next), cursor


def thread_pages(
    thread_id: str,
    flavour: str = PLAIN,
    *,
    limit: int = DEFAULT_PAGE_LIMIT,
    max_pages: int = MAX_PAGES,
) -> Generator[PageRequest, Any, PagingRecord]:
    """Yield each page request; receive the decoded body; return the paging record."""
    cursor: str | None = None
    seen: set[str] = set()
    chain: list[str] = []
    pages = 0
    while True:
        body = yield page_request(thread_id, flavour, cursor, limit)
        pages += 1
        has_next, next_cursor = _paging_fields(body)
        if not has_next:
            return PagingRecord(pages, tuple(chain), True, "last_page")
        if not next_cursor:
            return PagingRecord(pages, tuple(chain), True, "empty_cursor")
        if next_cursor in seen:
            return PagingRecord(pages, tuple(chain), False, "cursor_loop")
        if pages >= max_pages:
            return PagingRecord(pages, tuple(chain), False, "page_cap")
        seen.add(next_cursor)
        chain.append(next_cursor)
        cursor = next_cursor


def completeness(thread: Thread) -> dict[str, Any]:
    """``thread.json.completeness``: pages per flavour and whether each cursor chain ended."""
    plain = [p for p in thread.pages if p.flavour == "plain"]
    blocks = [p for p in thread.pages if p.flavour == "blocks"]

    def finished(pages: list[Any]) -> bool:
        if not pages:
            return True
        cursors = [p.next_cursor for p in pages if p.next_cursor]
        last = pages[-1]
        ended = not last.has_next_page or not last.next_cursor
        return ended and len(cursors) == len(set(cursors))

    return {
        "plain_pages": len(plain),
        "blocks_pages": len(blocks),
        "entries": len(thread.entries),
        "background_entries": len(thread.background),
        "cursor_chain": [p.next_cursor for p in plain],
        "complete": bool(plain or blocks) and finished(plain) and finished(blocks),
    }
