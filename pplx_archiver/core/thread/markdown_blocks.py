"""The block scanner of the Markdown primitives: which lines are code, raw HTML or prose.

:func:`scan_blocks` follows the CommonMark block rules for containers (block quotes, list items)
and leaves (fences, indented code, HTML blocks, GFM tables, paragraphs) in one pass over the
lines, without building a tree; tests/core/thread/test_markdown.py checks it against a real parser
(markdown-it-py). Pure: same lines, same classification.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence


def lf(text: str) -> str:
    """Normalize CRLF and lone CR line endings to LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


_QUOTE = re.compile(r" {0,3}>")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|(\d{1,9})[.)])(?=[ \t]|$)")
_HR = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
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
OPEN_TAG = r"<[A-Za-z][A-Za-z0-9\-]*" + _ATTR + r"*\s*/?>"
CLOSE_TAG = r"</[A-Za-z][A-Za-z0-9\-]*\s*>"
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
    (re.compile("(?:" + OPEN_TAG + "|" + CLOSE_TAG + r")\s*$"), None, False),
)

PROSE, CODE, HTML, BLANK = "prose", "code", "html", "blank"
_BLOCK_START = frozenset(" \t>-+*#`~<_=0123456789")  # first characters that may open a block


@dataclasses.dataclass(slots=True)
class Scan:
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


def html_start(rest: str, in_para: bool) -> tuple[re.Pattern[str] | None, bool] | None:
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


def starts_block(rest: str, in_table: bool, lazy: bool = False) -> bool:
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
        or html_start(rest, in_para=True)
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


@dataclasses.dataclass(slots=True)
class _Scanner:
    """The state of one pass over the lines: open containers, the open leaf block, results."""

    lines: list[str]  # tabs expanded
    kinds: list[str] = dataclasses.field(default_factory=list)
    paras: list[int] = dataclasses.field(default_factory=list)
    tables: set[int] = dataclasses.field(default_factory=set)
    containers: list[int] = dataclasses.field(default_factory=list)  # -1 quote, n item width
    leaf: str = ""  # "", "para", "table", "fence", "html", "icode"
    fence_char: str = ""
    fence_len: int = 0
    fence_marker: str = ""
    html_end: re.Pattern[str] | None = None
    html_at: int = 0
    para: int = -1
    empty_item: int = -1  # depth of a list item opened on this line with no content yet

    def emit(self, kind: str) -> None:
        self.kinds.append(kind)
        self.paras.append(self.para if kind == PROSE else -1)

    def match_containers(self, line: str) -> tuple[int, int]:
        """Return (position after the open containers the line continues, how many)."""
        pos = 0
        matched = 0
        fresh, self.empty_item = self.empty_item, -1
        for width in self.containers:
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
        return pos, matched

    def continue_leaf(self, rest: str, inner: bool) -> str:
        """The kind of a line that continues the open leaf block, or "" when it does not."""
        leaf = self.leaf
        blank = _blank(rest)
        if inner and leaf == "fence":
            stripped = rest.strip(" \t")
            if (
                _indent(rest) <= 3
                and stripped.startswith(self.fence_char * self.fence_len)
                and not stripped.strip(self.fence_char)
            ):
                self.leaf = ""
            return CODE
        if inner and leaf == "html":
            if self.html_end is None and blank:
                self.leaf = ""
                return BLANK
            if self.html_end is not None and self.html_end.search(rest):
                self.leaf = ""
            return HTML
        if inner and leaf == "icode" and (blank or _indent(rest) >= 4):
            return BLANK if blank else CODE
        if (
            not inner
            and leaf in ("para", "table")
            and not blank
            and not starts_block(rest, in_table=leaf == "table", lazy=True)
        ):
            return PROSE  # lazy continuation line
        return ""

    def open_containers(self, line: str, pos: int) -> int:
        """Open the block quotes and list items starting at ``pos``; return the new position."""
        while True:
            rest = line[pos:]
            if _indent(rest) >= 4:
                return pos
            quote = _QUOTE.match(rest)
            if quote is not None:
                pos += quote.end()
                if line[pos : pos + 1] == " ":
                    pos += 1
                self.containers.append(-1)
                self.leaf = ""
                continue
            if self.leaf == "para" and SETEXT.match(rest):
                return pos
            leaf = self.leaf
            item = _list_item(rest, in_para=leaf in ("para", "table"), in_table=leaf == "table")
            if item is None:
                return pos
            pos += min(item, len(rest))
            self.containers.append(item)
            if _blank(line[pos:]):
                self.empty_item = len(self.containers) - 1
            self.leaf = ""

    def table_follows(self, index: int, rest: str, pos: int) -> bool:
        following = self.lines[index + 1][pos:] if index + 1 < len(self.lines) else None
        return following is not None and _table_starts(rest, following)

    def open_leaf(self, index: int, rest: str, pos: int) -> str:
        """Start (or continue) the leaf block of a non-blank line; return the line's kind."""
        fence_open = _FENCE_OPEN.match(rest) if _indent(rest) <= 3 else None
        opened = html_start(rest, in_para=self.leaf == "para")
        if self.leaf == "table" and (_indent(rest) >= 4 or _ATX.match(rest) or _HR.match(rest)):
            self.leaf = ""
        leaf = self.leaf
        if _indent(rest) >= 4 and leaf not in ("para", "table"):
            self.leaf = "icode"
            return CODE
        if fence_open is not None:
            self.fence_marker = fence_open.group(1) or fence_open.group(2)
            self.fence_char, self.fence_len = self.fence_marker[0], len(self.fence_marker)
            self.leaf = "fence"
            return CODE
        if opened is not None:
            self.html_end, done = opened
            self.leaf = "" if done else "html"
            self.html_at = index
            return HTML
        if _ATX.match(rest) or (leaf != "para" and _HR.match(rest)):
            self.para += 1
            self.leaf = ""
        elif leaf == "para" and SETEXT.match(rest):
            self.leaf = ""
        elif leaf == "table":
            self.tables.add(index)
        elif leaf == "para":
            if self.table_follows(index, rest, pos):
                self.para += 1
                self.leaf = "table"
                self.tables.add(index)
        else:
            self.para += 1
            self.leaf = "para"
            if self.table_follows(index, rest, pos):
                self.leaf = "table"
                self.tables.add(index)
        return PROSE

    def line(self, index: int, line: str) -> None:
        """Classify one line (the slow path: any container or block rule may apply)."""
        if self.containers:
            pos, matched = self.match_containers(line)
        else:
            pos, matched, self.empty_item = 0, 0, -1
        inner = matched == len(self.containers)
        kind = self.continue_leaf(line[pos:], inner)
        if kind:
            self.emit(kind)
            if kind == PROSE and self.leaf == "table":
                self.tables.add(index)
            return
        if not inner:
            del self.containers[matched:]
            self.leaf = ""
        pos = self.open_containers(line, pos)
        rest = line[pos:]
        if _blank(rest):
            if self.leaf != "icode":
                self.leaf = ""
            self.emit(BLANK)
            return
        self.emit(self.open_leaf(index, rest, pos))

    def result(self) -> Scan:
        scan = Scan(self.kinds, self.paras, self.tables)
        if not self.containers and self.leaf == "fence":
            scan.open_fence = self.fence_marker
        if not self.containers and self.leaf == "html" and self.html_end is not None:
            scan.open_html = self.html_at
        return scan


def scan_blocks(lines: Sequence[str]) -> Scan:
    """Classify each line as prose, code, raw HTML or blank (the CommonMark block rules)."""
    state = _Scanner([line.expandtabs(4) if "\t" in line else line for line in lines])
    kinds, paras, tables = state.kinds, state.paras, state.tables
    for index, line in enumerate(state.lines):
        leaf = state.leaf
        if not state.containers and line and leaf in ("", "para", "table"):
            # fast path: a line starting with a character that opens no block is paragraph text
            if line[0] not in _BLOCK_START and ("|" not in line or leaf == "table"):
                if leaf == "":
                    state.para += 1
                    state.leaf = "para"
                elif leaf == "table":
                    tables.add(index)
                kinds.append(PROSE)
                paras.append(state.para)
                continue
        elif not state.containers and leaf == "fence" and line.lstrip(" ")[:1] != state.fence_char:
            kinds.append(CODE)  # fast path: fence content that cannot be the closing line
            paras.append(-1)
            continue
        state.line(index, line)
    return state.result()


def paragraph_groups(scan: Scan) -> list[tuple[int, int]]:
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
