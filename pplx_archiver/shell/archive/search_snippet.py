"""What a search hit shows: a one-line snippet around the match, safe for a terminal."""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Sequence

from pplx_archiver.core.thread.prose import FIELDS
from pplx_archiver.shell.archive.search_grams import fold

SNIPPET_CHARS = 60
ORDER = (1, 0, 2, 3, 4)  # the field a snippet prefers: query, title, answer, subagents, sources


def printable(text: str) -> str:
    """One line for a terminal: control and format characters become spaces."""
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)


def _find(text: str, query: str, exact: bool = False) -> tuple[int, int] | None:
    """Where ``query`` is in ``text`` (folded both, unless ``exact``), in ``text``'s
    characters (folding may change a character's length: NFKC's ``㎞`` is ``km``)."""
    if exact:
        at = text.find(query)
        return (at, at + len(query)) if at >= 0 else None
    low = text.lower()
    at = low.find(query.lower())
    if at >= 0 and len(low) == len(text):  # the query as written: no need to fold the text
        return at, at + len(query)
    needle = fold(query)
    low = fold(text)
    at = low.find(needle)
    if at < 0:
        return None
    if len(low) == len(text):
        return at, at + len(needle)
    ends: list[int] = []  # the folded length after each character of text
    total = 0
    for char in text:
        total += len(fold(char))
        ends.append(total)
    start = bisect.bisect_right(ends, at)
    end = bisect.bisect_left(ends, at + len(needle)) + 1
    return start, min(end, len(text))


def make_snippet(
    values: Sequence[str], query: str | None, *, exact: bool = False
) -> tuple[str, str, tuple[int, int] | None]:
    """(field, one-line snippet, match span in the snippet) for a row's values."""
    if query:
        for index in ORDER:
            span = _find(values[index], query, exact)
            if span is None:
                continue
            start = max(0, span[0] - SNIPPET_CHARS)
            end = min(len(values[index]), span[1] + SNIPPET_CHARS)
            lead = "…" if start else ""
            tail = "…" if end < len(values[index]) else ""
            snippet = lead + printable(values[index][start:end]) + tail
            at = len(lead) + span[0] - start
            return FIELDS[index], snippet, (at, at + span[1] - span[0])
    for index in ORDER:
        if values[index].strip():
            text = values[index]
            cut = text[: 2 * SNIPPET_CHARS]
            return FIELDS[index], printable(cut) + ("…" if len(text) > len(cut) else ""), None
    return FIELDS[0], "", None
