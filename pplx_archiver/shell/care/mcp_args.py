"""The arguments and small texts of the ``mcp`` tools: bounds, refusals, slices, excerpts.

A bad argument raises :class:`ToolInputError`, whose message the server sends back as the
tool's error.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from pplx_archiver.core.thread import mode_table
from pplx_archiver.errors import PplxError
from pplx_archiver.shell.archive import search as search_mod
from pplx_archiver.shell.care.catalog import ThreadInfo

MAX_TEXT = 200_000  # characters of text in one answer at most
DEFAULT_TEXT = 20_000
MAX_SEARCH_OFFSET = 900  # search pages reach the 1,000th hit at most
REBUILD = "pplx-export search --rebuild --out {out}"


class ToolInputError(ValueError):
    """An argument a tool cannot use; the message says which and why."""


def bounded(name: str, value: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ToolInputError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
    return value


def check_mode(mode: str | None) -> str | None:
    names = mode_table.VIEWS.names
    if mode is not None and mode not in names:
        raise ToolInputError(f"mode {mode!r}: expected one of {', '.join(names)}")
    return mode


def check_date(value: str | None, name: str) -> str | None:
    try:
        return search_mod.check_date(value, name)
    except PplxError as exc:
        raise ToolInputError(str(exc)) from None


def text_slice(text: str, offset: int, max_chars: int) -> dict[str, Any]:
    """A slice of ``text`` with where it stops and where the next one starts."""
    bounded("offset", offset, 0, 10**9)
    bounded("max_chars", max_chars, 1, MAX_TEXT)
    part = text[offset : offset + max_chars]
    end = offset + len(part)
    return {
        "text": part,
        "offset": offset,
        "total_chars": len(text),
        "next_offset": end if end < len(text) else None,
    }


def excerpt(text: str, size: int = 160) -> str:
    """One line of at most ``size`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"


def hit_json(hit: search_mod.Hit, info: ThreadInfo | None) -> dict[str, Any]:
    return {
        "thread_uuid": hit.thread_uuid,
        "turn": hit.turn,
        "title": hit.title,
        "mode": hit.mode,
        "space": hit.space or None,
        "date": hit.date,
        "field": hit.field,
        "excerpt": hit.snippet,
        "file": hit.path,
        "folder": info.path if info else hit.path.rsplit("/", 2 if hit.turn else 1)[0],
        "url": info.url if info else f"https://www.perplexity.ai/search/{hit.thread_uuid}",
    }


def domain_of(url: str) -> str:
    host = urllib.parse.urlsplit(url).hostname or ""
    return host.lower().removeprefix("www.")


_HEADING = re.compile(r"^## (.+)$", re.MULTILINE)


def section(text: str, name: str) -> str:
    """The body of the ``## name`` section of a turn file ("" when absent)."""
    for match in _HEADING.finditer(text):
        if match.group(1).strip() == name:
            rest = text[match.end() :]
            following = _HEADING.search(rest)
            return (rest[: following.start()] if following else rest).strip()
    return ""
