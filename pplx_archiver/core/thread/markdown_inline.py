"""Inline pieces of the Markdown primitives: code spans and ``<details>``/``<summary>`` tags.

:func:`code_spans` finds the inline code spans of a paragraph (CommonMark precedence:
backslash escapes, then code spans, autolinks and raw tags skipped as units);
:func:`escape_structure_tags` escapes the tags that would close or open the folded blocks the
renderer adds around API text. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pplx_archiver.core.thread.markdown_blocks import CLOSE_TAG, OPEN_TAG

BACKTICK_RUN = re.compile(r"`+")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_INLINE_SKIP = re.compile(
    r"<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^<>\x00-\x20]*>"  # autolink
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"  # e-mail autolink
    rf"|{OPEN_TAG}|{CLOSE_TAG}"
    r"|<!---?>|<!--(?:[^-]|-[^-]|--[^>])*-->"
    r"|<[?][\s\S]*?[?]>|<![A-Za-z][^>]*>|<!\[CDATA\[[\s\S]*?\]\]>"
)


def code_spans(text: str) -> list[tuple[int, int]]:
    """Return ``[start, end)`` ranges of the inline code spans of one paragraph's text.

    Follows the inline precedence of CommonMark: backslash escapes, then code spans, with
    autolinks and raw HTML tags (which may hold backticks) skipped as units.
    """
    spans: list[tuple[int, int]] = []
    if "`" not in text:
        return spans
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == "\\" and index + 1 < size and text[index + 1] in _ASCII_PUNCT:
            index += 2
        elif char == "`":
            end = index
            while end < size and text[end] == "`":
                end += 1
            length = end - index
            for closer in BACKTICK_RUN.finditer(text, end):
                if closer.end() - closer.start() == length:
                    spans.append((index, closer.end()))
                    end = closer.end()
                    break
            index = end
        elif char == "<" and (tag := _INLINE_SKIP.match(text, index)) is not None:
            index = tag.end()
        else:
            index += 1
    return spans


def protected_spans(text: str, table: bool) -> list[tuple[int, int]]:
    """Code spans whose content is certainly code, so tags inside may stay as written.

    Where a backtick might belong to something this scanner does not model (a link
    destination or title, a reference definition, a table cell) no span is trusted and tags
    are escaped everywhere: that can only show an escaped tag inside code, never let a raw
    tag through.
    """
    if table or "](" in text or text.lstrip(" >").startswith("["):
        return []
    return code_spans(text)


STRUCTURE_TAG = re.compile(r"<(/?(?:details|summary)(?=[\s/>]|$)[^<>]*)(>?)", re.IGNORECASE)


def _escape_tag(match: re.Match[str]) -> str:
    return "&lt;" + match.group(1) + ("&gt;" if match.group(2) else "")


def escape_structure_tags(text: str) -> str:
    """Escape every ``<details>``/``<summary>`` open or close tag in ``text``."""
    if "<" not in text:
        return text
    return STRUCTURE_TAG.sub(_escape_tag, text)


def escape_outside(text: str, spans: Sequence[tuple[int, int]]) -> str:
    if not spans:
        return escape_structure_tags(text)
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(escape_structure_tags(text[last:start]))
        parts.append(text[start:end])
        last = end
    parts.append(escape_structure_tags(text[last:]))
    return "".join(parts)
