"""Markdown fidelity primitives: fences, table cells and tables, LaTeX, and API-text safety.

Every rendered file is assembled from API text (answers, step payloads, titles) and the
structure this package adds around it (headings, ``<details>`` blocks, fences, tables). The
rules here keep the two apart:

* :func:`fence` sizes a code fence to its content, so no backtick run inside can close it;
* :func:`escape_cell` / :func:`md_table` keep every row and column of a table, whatever the
  cells contain (pipes, newlines, backslashes);
* :func:`normalize_latex` turns ``\\[ … \\]`` / ``\\( … \\)`` into ``$$`` / ``$`` outside code;
* :func:`safe_markdown` makes API text unable to close or swallow what follows it: ``<details>``
  and ``<summary>`` tags are escaped outside code, an unclosed fence is closed, an unterminated
  raw-HTML block opener (``<!--``, ``<pre`` …) is escaped. Nothing else changes.

Block structure (which lines are code, which are paragraphs) is decided by a small scanner
that follows the CommonMark block rules for containers (block quotes, list items) and leaves
(fences, indented code, HTML blocks, tables, paragraphs); the test suite checks it against a
real parser (markdown-it-py). All functions are pure: same input, same output.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Sequence

__all__ = [
    "blockquote",
    "bullet",
    "details",
    "escape_cell",
    "fence",
    "heading",
    "longest_backtick_run",
    "md_table",
    "normalize_latex",
    "safe_markdown",
    "single_line",
]

_NEWLINE = re.compile(r"\r\n?|\n")
_BACKTICK_RUN = re.compile(r"`+")


def _lf(text: str) -> str:
    """Normalize CRLF and lone CR line endings to LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


# --------------------------------------------------------------------------- fences


def longest_backtick_run(text: str) -> int:
    """Return the length of the longest run of consecutive backticks in ``text`` (0 if none)."""
    return max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)


def fence(text: str, lang: str = "") -> str:
    """Wrap ``text`` in a backtick fence one backtick longer than its longest run (minimum 3).

    The content is kept byte for byte (line endings normalized to LF); a final newline is
    added when missing so the closing fence sits on its own line. Tildes inside cannot close
    a backtick fence. ``lang`` becomes the info string (first word, backticks removed).
    """
    body = _lf(text)
    marker = "`" * max(3, longest_backtick_run(body) + 1)
    words = lang.replace("`", "").split()
    info = words[0] if words else ""
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{marker}{info}\n{body}{marker}\n"


# --------------------------------------------------------------------------- tables

_PIPE_OR_NEWLINE = re.compile(r"(\\*)(\r\n?|\n|\|)")


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return str(value)


def _escape_pipe_or_newline(match: re.Match[str]) -> str:
    # Backslashes right before a pipe or a line break are doubled, so they stay literal
    # backslashes and cannot turn our ``\|`` or ``<br>`` back into something else.
    slashes = match.group(1) * 2
    return slashes + ("\\|" if match.group(2) == "|" else "<br>")


def escape_cell(value: object) -> str:
    """Return ``value`` as the text of one GFM table cell that cannot split or end the row.

    ``None`` → empty; booleans, numbers → their JSON/str form; dicts and lists → compact JSON;
    ``|`` → ``\\|``; any line break → ``<br>``; backslashes right before either are doubled
    so the escape cannot be undone; ``<details>``/``<summary>`` tags are escaped.
    """
    text = _PIPE_OR_NEWLINE.sub(_escape_pipe_or_newline, _cell_text(value))
    return _escape_structure_tags(text)


def md_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    empty_note: str | None = None,
) -> str:
    """Render a GFM table keeping every row and every column.

    Short rows are padded with empty cells; cells beyond the header get extra columns named
    ``col_N`` (N = 1-based column number). A table without any column renders as the note
    line ``empty_note`` (default: an English note with the row count), never as nothing.
    The result ends with a newline; put a blank line before and after it.
    """
    width = max([len(columns), *(len(row) for row in rows)])
    if width == 0:
        note = empty_note or f"(empty table: no columns, {len(rows)} rows)"
        return single_line(note) + "\n"
    header = [*columns, *(f"col_{n}" for n in range(len(columns) + 1, width + 1))]
    lines = [_row(header, width), "|" + "|".join(["---"] * width) + "|"]
    lines.extend(_row(row, width) for row in rows)
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[object], width: int) -> str:
    texts = [escape_cell(cell) for cell in cells]
    texts.extend([""] * (width - len(texts)))
    return "| " + " | ".join(texts) + " |"


# --------------------------------------------------------------------------- block scanner

_QUOTE = re.compile(r" {0,3}>")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|(\d{1,9})[.)])(?=[ \t]|$)")
_HR = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_FENCE_OPEN = re.compile(r" {0,3}(?:(`{3,})[^`]*|(~{3,}).*)$")
_TABLE_DELIM = re.compile(r"[-:|][-:| \t]*$")

_BLOCK_NAMES = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h1|h2|h3|h4|h5|h6|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    "noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    "thead|title|tr|track|ul"
)
_ATTR = (
    r"(?:\s+[a-zA-Z_:][a-zA-Z0-9:._-]*"
    r"(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
)
_OPEN_TAG = r"<[A-Za-z][A-Za-z0-9\-]*" + _ATTR + r"*\s*/?>"
_CLOSE_TAG = r"</[A-Za-z][A-Za-z0-9\-]*\s*>"
# (start, end or None = ends at a blank line, may interrupt a paragraph)
_HTML_BLOCKS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None, bool], ...] = (
    (
        re.compile(r"<(?:script|pre|style|textarea)(?=\s|>|$)", re.IGNORECASE),
        re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE),
        True,
    ),
    (re.compile(r"<!--"), re.compile(r"-->"), True),
    (re.compile(r"<\?"), re.compile(r"\?>"), True),
    (re.compile(r"<![A-Za-z]"), re.compile(r">"), True),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (re.compile(r"</?(?:" + _BLOCK_NAMES + r")(?=\s|/?>|$)", re.IGNORECASE), None, True),
    (re.compile("(?:" + _OPEN_TAG + "|" + _CLOSE_TAG + r")\s*$"), None, False),
)

PROSE, CODE, HTML, BLANK = "prose", "code", "html", "blank"
_BLOCK_START = frozenset(" \t>-+*#`~<_=0123456789")  # first characters that may open a block


@dataclasses.dataclass(slots=True)
class _Scan:
    """What the scanner found: a kind and a paragraph id per line, and what is left open."""

    kinds: list[str]
    paras: list[int]
    tables: set[int]
    open_fence: str | None = None  # marker of a fence left open at document level
    open_html: int | None = None  # line of an unterminated document-level HTML block opener


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _blank(text: str) -> bool:
    return not text.strip(" \t")


def _html_start(rest: str, in_para: bool) -> tuple[re.Pattern[str] | None, bool] | None:
    """Return (end pattern, terminated-on-this-line) when ``rest`` opens an HTML block."""
    body = rest.lstrip(" ")
    if not body.startswith("<") or len(rest) - len(body) > 3:
        return None
    for start, end, interrupts in _HTML_BLOCKS:
        if start.match(body) and (interrupts or not in_para):
            return end, end is not None and end.search(body) is not None
    return None


def _list_item(rest: str, in_para: bool, in_table: bool) -> int | None:
    """Return the content width of the list item ``rest`` opens, or None."""
    match = _LIST_ITEM.match(rest)
    if match is None or _HR.match(rest):
        return None
    end = match.end()
    after = rest[end:]
    empty = _blank(after)
    if in_para and not in_table and (empty or match.group(1) not in (None, "1")):
        return None
    if in_para and not in_table and match.group(1) is not None and int(match.group(1)) != 1:
        return None
    if empty:
        return end + 1
    spaces = _indent(after)
    return end + 1 if spaces >= 5 else end + spaces


def _starts_block(rest: str, in_table: bool, lazy: bool = False) -> bool:
    """True when ``rest`` would interrupt a paragraph (or end a table).

    ``lazy``: the line did not match all open containers, so it is only a paragraph
    continuation if nothing starts; any list item starts then (no "must start with 1").
    """
    if _blank(rest):
        return True
    if in_table and _indent(rest) >= 4:
        return True
    if _indent(rest) >= 4:
        return False
    return bool(
        _QUOTE.match(rest)
        or _ATX.match(rest)
        or _HR.match(rest)
        or _FENCE_OPEN.match(rest)
        or _html_start(rest, in_para=True)
        or _list_item(rest, in_para=True, in_table=in_table or lazy) is not None
    )


def _table_starts(head: str, delim: str) -> bool:
    """markdown-it's table start test for a header line and the delimiter line after it."""
    if "|" not in head or "-" not in delim:
        return False
    delim_body = delim.strip(" \t")
    if _indent(head) >= 4 or _indent(delim) >= 4 or not _TABLE_DELIM.match(delim_body):
        return False
    if len(delim_body) < 2 or (delim_body[0] == "-" and delim_body[1] in " \t"):
        return False
    parts = delim_body.split("|")
    aligns = 0
    for index, part in enumerate(parts):
        cell = part.strip(" \t")
        if not cell:
            if index in (0, len(parts) - 1):
                continue
            return False
        if not re.fullmatch(r":?-+:?", cell):
            return False
        aligns += 1
    header = head.strip(" \t")
    if "|" not in header:
        return False
    cells = _split_cells(header)
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return bool(cells) and len(cells) == aligns


def _split_cells(line: str) -> list[str]:
    """Split a table line at pipes not preceded by a backslash (markdown-it's rule)."""
    return re.split(r"(?<!\\)\|", line)


def _scan(lines: Sequence[str]) -> _Scan:  # noqa: C901 (one pass of the CommonMark block rules)
    """Classify each line as prose, code, raw HTML or blank; see the module docstring."""
    kinds: list[str] = []
    paras: list[int] = []
    tables: set[int] = set()
    containers: list[int] = []  # -1: block quote; n > 0: list item with content width n
    leaf = ""  # "", "para", "table", "fence", "html", "icode"
    fence_char, fence_len, fence_marker = "", 0, ""
    html_end: re.Pattern[str] | None = None
    html_at = 0
    para = -1
    empty_item = -1  # depth of a list item opened on this line with no content yet
    expanded = [line.expandtabs(4) if "\t" in line else line for line in lines]
    for index, line in enumerate(expanded):
        if not containers and line and leaf in ("", "para", "table"):
            # fast path: a line starting with a character that opens no block is paragraph text
            if line[0] not in _BLOCK_START and ("|" not in line or leaf == "table"):
                if leaf == "":
                    para += 1
                    leaf = "para"
                elif leaf == "table":
                    tables.add(index)
                kinds.append(PROSE)
                paras.append(para)
                continue
        elif not containers and leaf == "fence" and line.lstrip(" ")[:1] != fence_char:
            kinds.append(CODE)  # fast path: fence content that cannot be the closing line
            paras.append(-1)
            continue
        pos = 0
        matched = 0
        fresh, empty_item = empty_item, -1
        for width in containers:
            rest = line[pos:]
            if matched == fresh and _blank(rest):
                break  # an item may begin with at most one blank line
            if width < 0:
                quote = _QUOTE.match(rest)
                if quote is None:
                    break
                pos += quote.end()
                if line[pos : pos + 1] == " ":
                    pos += 1
            elif not _blank(rest):
                if _indent(rest) < width:
                    break
                pos += width
            matched += 1
        rest = line[pos:]
        blank = _blank(rest)
        inner = matched == len(containers)
        kind = ""
        if inner and leaf == "fence":
            kind = CODE
            stripped = rest.strip(" \t")
            if (
                _indent(rest) <= 3
                and stripped.startswith(fence_char * fence_len)
                and not stripped.strip(fence_char)
            ):
                leaf = ""
        elif inner and leaf == "html":
            if html_end is None and blank:
                kind, leaf = BLANK, ""
            else:
                kind = HTML
                if html_end is not None and html_end.search(rest):
                    leaf = ""
        elif inner and leaf == "icode" and (blank or _indent(rest) >= 4):
            kind = BLANK if blank else CODE
        elif (
            not inner
            and leaf in ("para", "table")
            and not blank
            and not _starts_block(rest, in_table=leaf == "table", lazy=True)
        ):
            kind = PROSE  # lazy continuation line
        if kind:
            kinds.append(kind)
            paras.append(para if kind == PROSE else -1)
            if kind == PROSE and leaf == "table":
                tables.add(index)
            continue
        if not inner:
            del containers[matched:]
            leaf = ""
        # open new containers
        while True:
            rest = line[pos:]
            if _indent(rest) >= 4:
                break
            quote = _QUOTE.match(rest)
            if quote is not None:
                pos += quote.end()
                if line[pos : pos + 1] == " ":
                    pos += 1
                containers.append(-1)
                leaf = ""
                continue
            if leaf == "para" and _SETEXT.match(rest):
                break
            item = _list_item(rest, in_para=leaf in ("para", "table"), in_table=leaf == "table")
            if item is None:
                break
            pos += min(item, len(rest))
            containers.append(item)
            if _blank(line[pos:]):
                empty_item = len(containers) - 1
            leaf = ""
        rest = line[pos:]
        if _blank(rest):
            if leaf != "icode":
                leaf = ""
            kinds.append(BLANK)
            paras.append(-1)
            continue
        kind = PROSE
        fence_open = _FENCE_OPEN.match(rest) if _indent(rest) <= 3 else None
        html_start = _html_start(rest, in_para=leaf == "para")
        if leaf == "table" and (_indent(rest) >= 4 or _ATX.match(rest) or _HR.match(rest)):
            leaf = ""
        if _indent(rest) >= 4 and leaf not in ("para", "table"):
            kind, leaf = CODE, "icode"
        elif fence_open is not None:
            fence_marker = fence_open.group(1) or fence_open.group(2)
            fence_char, fence_len = fence_marker[0], len(fence_marker)
            kind, leaf = CODE, "fence"
        elif html_start is not None:
            html_end, done = html_start
            kind, leaf = HTML, ("" if done else "html")
            html_at = index
        elif _ATX.match(rest) or (leaf != "para" and _HR.match(rest)):
            para += 1
            leaf = ""
        elif leaf == "para" and _SETEXT.match(rest):
            leaf = ""
        elif leaf == "table":
            tables.add(index)
        elif leaf == "para":
            if index + 1 < len(expanded) and _table_starts(rest, expanded[index + 1][pos:]):
                para += 1
                leaf = "table"
                tables.add(index)
        else:
            para += 1
            leaf = "para"
            if index + 1 < len(expanded) and _table_starts(rest, expanded[index + 1][pos:]):
                leaf = "table"
                tables.add(index)
        kinds.append(kind)
        paras.append(para if kind == PROSE else -1)
    scan = _Scan(kinds, paras, tables)
    if not containers and leaf == "fence":
        scan.open_fence = fence_marker
    if not containers and leaf == "html" and html_end is not None:
        scan.open_html = html_at
    return scan


# --------------------------------------------------------------------------- inline code spans

_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_INLINE_SKIP = re.compile(
    r"<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^<>\x00-\x20]*>"  # autolink
    r"|<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"  # e-mail autolink
    rf"|{_OPEN_TAG}|{_CLOSE_TAG}"
    r"|<!---?>|<!--(?:[^-]|-[^-]|--[^>])*-->"
    r"|<[?][\s\S]*?[?]>|<![A-Za-z][^>]*>|<!\[CDATA\[[\s\S]*?\]\]>"
)


def _code_spans(text: str) -> list[tuple[int, int]]:
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
            for closer in _BACKTICK_RUN.finditer(text, end):
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


def _protected_spans(text: str, table: bool) -> list[tuple[int, int]]:
    """Code spans whose content is certainly code, so tags inside may stay as written.

    Where a backtick might belong to something this scanner does not model (a link
    destination or title, a reference definition, a table cell) no span is trusted and tags
    are escaped everywhere: that can only show an escaped tag inside code, never let a raw
    tag through.
    """
    if table or "](" in text or text.lstrip(" >").startswith("["):
        return []
    return _code_spans(text)


# --------------------------------------------------------------------------- API-text safety

_STRUCTURE_TAG = re.compile(r"<(/?(?:details|summary)(?=[\s/>]|$)[^<>]*)(>?)", re.IGNORECASE)


def _escape_tag(match: re.Match[str]) -> str:
    return "&lt;" + match.group(1) + ("&gt;" if match.group(2) else "")


def _escape_structure_tags(text: str) -> str:
    """Escape every ``<details>``/``<summary>`` open or close tag in ``text``."""
    if "<" not in text:
        return text
    return _STRUCTURE_TAG.sub(_escape_tag, text)


def _escape_outside(text: str, spans: Sequence[tuple[int, int]]) -> str:
    if not spans:
        return _escape_structure_tags(text)
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(_escape_structure_tags(text[last:start]))
        parts.append(text[start:end])
        last = end
    parts.append(_escape_structure_tags(text[last:]))
    return "".join(parts)


def _paragraph_groups(scan: _Scan) -> list[tuple[int, int]]:
    """Return ``[first, last)`` line ranges of consecutive prose lines of one paragraph."""
    groups: list[tuple[int, int]] = []
    index, size = 0, len(scan.kinds)
    while index < size:
        if scan.kinds[index] != PROSE:
            index += 1
            continue
        end = index + 1
        while end < size and scan.kinds[end] == PROSE and scan.paras[end] == scan.paras[index]:
            end += 1
        groups.append((index, end))
        index = end
    return groups


def _escape_tags_outside_code(lines: list[str], scan: _Scan) -> bool:
    """Escape structure tags in prose and raw-HTML lines in place; True if anything changed."""
    changed = False
    for index, kind in enumerate(scan.kinds):
        if kind == HTML and "<" in lines[index]:
            new = _escape_structure_tags(lines[index])
            changed |= new != lines[index]
            lines[index] = new
    for first, last in _paragraph_groups(scan):
        text = "\n".join(lines[first:last])
        if "<" not in text or not _STRUCTURE_TAG.search(text):
            continue
        table = any(index in scan.tables for index in range(first, last))
        new = _escape_outside(text, _protected_spans(text, table))
        if new != text:
            changed = True
            lines[first:last] = new.split("\n")
    return changed


def safe_markdown(md: str) -> str:
    """Return API Markdown that cannot break the structure around it; otherwise verbatim.

    Outside code (fenced or indented code blocks, inline code spans) ``<details>``,
    ``</details>``, ``<summary>``, ``</summary>`` tags are escaped (``&lt;/details&gt;``). A
    raw-HTML block opener with no terminator (``<!--`` without ``-->``, ``<pre`` without
    ``</pre>`` …) is escaped, since it would swallow the rest of the document. A fence left
    open at the end is closed. Line endings become LF. Nothing is removed or shortened.
    """
    text = _lf(md)
    if not any(mark in text for mark in ("<", "```", "~~~")):
        return text
    lines = text.split("\n")
    while True:
        scan = _scan(lines)
        if _escape_tags_outside_code(lines, scan):
            continue
        if scan.open_html is not None:
            line = lines[scan.open_html]
            at = line.index("<")
            lines[scan.open_html] = line[:at] + "&lt;" + line[at + 1 :]
            continue
        break
    text = "\n".join(lines)
    if scan.open_fence is not None:
        text += ("" if text.endswith("\n") else "\n") + scan.open_fence
    return text


# --------------------------------------------------------------------------- LaTeX

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
        _starts_block(line, in_table=True)
        or _SETEXT.match(body) is not None
        or _html_start(body, in_para=False) is not None
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
    text = _lf(md)
    if "\\[" not in text and "\\(" not in text:
        return text
    lines = text.split("\n")
    scan = _scan(lines)
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
            for first, last in _paragraph_groups(
                _Scan(scan.kinds[index:end], scan.paras[index:end], set())
            ):
                para_text = "\n".join(lines[index + first : index + last])
                base = offset + sum(len(line) + 1 for line in lines[index : index + first])
                spans.extend((base + a, base + b) for a, b in _code_spans(para_text))
            table_lines = {line - index for line in range(index, end) if line in scan.tables}
            chunk = _convert_math(chunk, spans, table_lines)
        out.append(chunk)
        index = end
    return "\n".join(out)


# --------------------------------------------------------------------------- structure helpers

_LEADING_BLOCK_CHAR = re.compile(r"[#>+*=|`~_-]|\d+(?=[.)])")


def single_line(text: str) -> str:
    """Return ``text`` as one line of inline Markdown that cannot start a block.

    Line breaks (and the whitespace around them) become one space, outer whitespace is
    stripped, structure tags are escaped and a leading block marker (``#``, ``>``, ``-``,
    ``1.``, a fence …) is backslash-escaped.
    """
    flat = re.sub(r"[ \t]*(?:\r\n?|\n)[ \t]*", " ", text).strip()
    flat = _escape_structure_tags(flat)
    match = _LEADING_BLOCK_CHAR.match(flat)
    if match is None:
        return flat
    if match.group().isdigit():
        end = match.end()
        return flat[:end] + "\\" + flat[end:]
    return "\\" + flat


def heading(level: int, text: str) -> str:
    """Return an ATX heading line (with a newline) whose text is one line and stays whole.

    A trailing run of ``#`` is escaped so it is not taken as the closing sequence.
    """
    if not 1 <= level <= 6:
        raise ValueError(f"heading level must be 1..6, got {level}")
    body = single_line(text)
    trailing = re.search(r"(?:^|[ \t])(#+)$", body)
    if trailing is not None:
        body = body[: trailing.start(1)] + "\\" + body[trailing.start(1) :]
    return f"{'#' * level} {body}".rstrip() + "\n"


def bullet(text: str) -> str:
    """Return a ``- `` list item line (with a newline) holding ``text`` as one line."""
    return f"- {single_line(text)}".rstrip() + "\n"


def blockquote(text: str) -> str:
    """Return ``text`` (API Markdown, made safe) as a block quote, ending with a newline."""
    body = safe_markdown(text).rstrip("\n")
    return "\n".join(f"> {line}" if line.strip() else ">" for line in body.split("\n")) + "\n"


_SUMMARY_BREAK = re.compile(r"\s*(?:\r\n?|\n)\s*")


def details(summary: str, body: str, *, trusted: bool = False) -> str:
    """Return a folded ``<details>`` block: ``<details><summary>…</summary>`` + body.

    The summary is HTML-escaped and made one line. The body is API text and goes through
    :func:`safe_markdown`, unless ``trusted`` says it is Markdown this package assembled
    (whose API pieces were already made safe), e.g. nested ``details`` blocks.
    """
    flat = (
        _SUMMARY_BREAK.sub(" ", summary).strip()
        if "\n" in summary or "\r" in summary
        else summary.strip()
    )
    title = html.escape(flat, quote=False)
    inner = (body if trusted else safe_markdown(body)).strip("\n")
    middle = f"{inner}\n\n" if inner.strip() else ""
    return f"<details><summary>{title}</summary>\n\n{middle}</details>\n"
