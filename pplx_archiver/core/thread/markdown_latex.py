"""LaTeX delimiters of the Markdown primitives: ``\\[ … \\]`` → ``$$``, ``\\( … \\)`` → ``$``.

Only prose is touched (the block scanner says which lines are prose; inline code spans are
protected), and no conversion may change the block structure around it. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pplx_archiver.core.thread.markdown_blocks import (
    PROSE,
    SETEXT,
    Scan,
    html_start,
    lf,
    paragraph_groups,
    scan_blocks,
    starts_block,
)
from pplx_archiver.core.thread.markdown_inline import code_spans

_MATH_DELIM = re.compile(r"\\[\[\]()]")
_PREFIX = re.compile(r"((?:[ \t]*>)*[ \t]*)((?:[-+*]|\d{1,9}[.)])[ \t]+)?")


def _unescaped(text: str, at: int) -> bool:
    """True when the backslash at ``at`` is not itself escaped by a preceding backslash."""
    count = 0
    while at - count - 1 >= 0 and text[at - count - 1] == "\\":
        count += 1
    return count % 2 == 0


def _inside(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """True when ``[start, end)`` touches any protected span."""
    return any(start < span_end and span_start < end for span_start, span_end in spans)


def _line_prefix(text: str, at: int) -> str:
    """Container prefix (quote markers, list indentation) of the line holding ``at``."""
    line_start = text.rfind("\n", 0, at) + 1
    match = _PREFIX.match(text, line_start)
    assert match is not None  # the pattern matches the empty string
    prefix = match.group(1)
    if match.group(2):
        prefix += " " * len(match.group(2))
    return prefix


def _convert_math(text: str, spans: Sequence[tuple[int, int]], table_lines: set[int]) -> str:
    """Convert the balanced, unprotected LaTeX delimiters of one run of prose lines."""
    out: list[str] = []
    last = 0
    search_from = 0
    while (opener := _MATH_DELIM.search(text, search_from)) is not None:
        start = opener.start()
        kind = opener.group()[1]
        search_from = start + 2
        if kind not in "[(" or not _unescaped(text, start) or _inside(spans, start, start + 2):
            continue
        want = "\\]" if kind == "[" else "\\)"
        close = text.find(want, start + 2)
        while close >= 0 and not _unescaped(text, close):
            close = text.find(want, close + 2)
        if close < 0 or _inside(spans, start, close + 2):
            continue
        raw_inner = text[start + 2 : close]
        inner = raw_inner.strip()
        if not inner:
            continue
        head = text[last:start]
        last = search_from = close + 2
        multiline = "\n" in raw_inner
        if kind == "(":
            # a line break inside stays where it was, so no line changes its block meaning
            out.append(f"{head}${raw_inner if multiline else inner}$")
            continue
        line_start = text.rfind("\n", 0, start) + 1
        before = text[line_start:start]
        lead = _PREFIX.match(before)
        assert lead is not None  # the pattern matches the empty string
        own_line = lead.end() == len(before)
        line_end = text.find("\n", close)
        after = text[close + 2 : line_end if line_end >= 0 else len(text)].lstrip(" \t")
        if multiline:
            first, rest = raw_inner.split("\n", 1)
            closer_line = rest.rsplit("\n", 1)[-1]
            if own_line and not after and not first.strip() and _PREFIX.fullmatch(closer_line):
                out.append(f"{head}$$\n{rest}$$")  # \[ and \] already on lines of their own
            else:
                out.append(f"{head}$${raw_inner}$$")
            continue
        if "\n" not in text[start:close] and text.count("\n", 0, start) in table_lines:
            out.append(f"{head}$${inner}$$")  # a table row must stay one line
            continue
        if any(line and _may_change_blocks(line) for line in (inner, after, before[lead.end() :])):
            out.append(f"{head}$${inner}$$")  # new lines here would change the block structure
            continue
        prefix = _line_prefix(text, start)
        if not own_line:
            head = head.rstrip(" \t") + "\n" + prefix
        out.append(f"{head}$$\n{prefix}{inner}\n{prefix}$$")
        if after:
            out.append("\n" + prefix)
            while last < len(text) and text[last] in " \t":
                last += 1
            search_from = last
    out.append(text[last:])
    return "".join(out)


def _may_change_blocks(line: str) -> bool:
    """True when ``line`` could be more than paragraph text once it starts or ends a line."""
    body = line.strip(" \t")
    return (
        starts_block(line, in_table=True)
        or SETEXT.match(body) is not None
        or html_start(body, in_para=False) is not None
        or "|" in body
        or body.endswith("#")
    )


def normalize_latex(md: str) -> str:
    """Turn ``\\[ … \\]`` into a ``$$`` display block and ``\\( … \\)`` into ``$…$``.

    Display math goes on lines of its own (inside a table row it stays inline as
    ``$$…$$``). Fenced and indented code, inline code spans and raw HTML are not touched.
    Delimiters escaped with a backslash, unbalanced ones and empty ones are left as written,
    so no text is ever lost. Line endings become LF.
    """
    text = lf(md)
    if "\\[" not in text and "\\(" not in text:
        return text
    lines = text.split("\n")
    scan = scan_blocks(lines)
    out: list[str] = []
    index, size = 0, len(lines)
    while index < size:
        if scan.kinds[index] != PROSE:
            out.append(lines[index])
            index += 1
            continue
        end = index
        while end < size and scan.kinds[end] == PROSE:
            end += 1
        chunk = "\n".join(lines[index:end])
        if "\\[" in chunk or "\\(" in chunk:
            spans: list[tuple[int, int]] = []
            offset = 0
            for first, last in paragraph_groups(
                Scan(scan.kinds[index:end], scan.paras[index:end], set())
            ):
                para_text = "\n".join(lines[index + first : index + last])
                base = offset + sum(len(line) + 1 for line in lines[index : index + first])
                spans.extend((base + a, base + b) for a, b in code_spans(para_text))
            table_lines = {line - index for line in range(index, end) if line in scan.tables}
            chunk = _convert_math(chunk, spans, table_lines)
        out.append(chunk)
        index = end
    return "\n".join(out)


# --------------------------------------------------------------------------- structure helpers
