"""A quick path for plain Markdown blocks: markdown-it's HTML without running markdown-it.

Most of what the site renders is Markdown the render core assembled itself (work-process
steps, sub-agent work: fold markers, bold labels, paragraphs and lists of escaped text and
``[name](<url>)`` links) and answers made mostly of plain paragraphs, lists and tables.
:func:`render` splits a text into blocks, renders each block in the grammar below itself
and hands every other run of blocks to a fallback (markdown-it, as configured in
:mod:`pplx_archiver.site.markup`), so the HTML is markdown-it's byte for byte;
``tests/site/test_markup_plain.py`` checks the two agree over generated and hostile text.

The grammar, per block (blocks are separated by blank lines, never inside fenced code or
``$$`` math):

- a fold marker line, ``<details><summary>…</summary>`` or ``</details>`` (balanced);
- a heading line, ``#`` to ``######`` and inline text;
- a paragraph: lines of inline text;
- a list: lines all ``- item`` or all ``N. item`` (a list right after another block holding
  a list line is joined to it: markdown-it may read them as one);
- a table: every line begins and ends with ``|``, the second is the alignment row;

where inline text has no character with a meaning in Markdown besides backslash escapes of
ASCII punctuation, code spans of single backticks, ``**bold**`` opened at a line's start or
after a space, ``*emphasis*`` as a whole line or item, ``[N]`` (a citation link when the
caller asks for them) and links to http(s) URLs. Whitespace at a line's edges, tabs,
control characters, ``&`` (entities), ``<``, ``![`` and the characters that open headings,
quotes, code, tables, math or other lists send a block to the fallback.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Callable

from markdown_it.common.utils import escapeHtml

_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# Characters that never appear outside the constructs handled below.
_DECLINE = re.compile(r"[*_`<&$~|\[\]\\\x00-\x09\x0b-\x1f\x7f]")
_LINE_START = re.compile(r"[#>+=\-]|\*(?=\s|$)|\d{1,9}[.)]")  # "*x" is not a list
_ORDERED = re.compile(r"(\d{1,9})\. ")
_FOLD_OPEN = re.compile(r"<details><summary>([^\n]*)</summary>")
_LINK = re.compile(r"\[((?:[^\[\]\\\n]|\\[^\n])*)\]\(<([^<>\\\n&]*)>\)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LIST_START = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_ANY_LIST = re.compile(r"[\s>]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# A fence indented past what the block split sees (inside a list item).
_WHOLE = re.compile(r"(?m)^[ \t]{4,}[>\s]*(?:`{3,}|~{3,})")
_ALIGN = re.compile(r":?-+:?")
_HEADING = re.compile(r"(#{1,6}) (\S(?:.*\S)?)")
_EM = re.compile(r"\*([^*\s](?:[^*\n]*[^*\s])?)\*")
_NUMBER = re.compile(r"\[\d{1,9}\](?![(\[])")  # "[12]": text (a citation when in range)
_CITE = re.compile(r"\[(\d{1,4})\]")  # what markup's citation rule links


@dataclasses.dataclass(frozen=True, slots=True)
class Links:
    """How links come out: markdown-it's own ``normalizeLink`` and ``validateLink``, and
    the citation rule's prefix and count (``[N]`` links to ``#<prefix>N`` for N in 1..count;
    no citations when the count is 0)."""

    normalize: Callable[[str], str]
    validate: Callable[[str], bool]
    cite_prefix: str = ""
    cite_count: int = 0


def _text(raw: str, links: Links) -> str:
    """A text run as markdown-it writes it, ``[N]`` made a citation link as markup does."""
    if not links.cite_count or "[" not in raw:
        return escapeHtml(raw)
    out: list[str] = []
    pos = 0
    for m in _CITE.finditer(raw):
        number = int(m.group(1))
        if not 1 <= number <= links.cite_count:
            continue
        out.append(escapeHtml(raw[pos : m.start()]))
        out.append(
            f'<a href="#{escapeHtml(links.cite_prefix)}{number}" class="cite">[{number}]</a>'
        )
        pos = m.end()
    out.append(escapeHtml(raw[pos:]))
    return "".join(out)


def _plain(text: str, links: Links | None, line_start: bool = False) -> str | None:
    """HTML of text with no link: escapes, ``[N]``, single-backtick code spans and
    ``**bold**`` (opened at the start of a line or after a space) resolved, None at any
    other mark. ``links`` None: a link's label (no citations, no bold)."""
    cites = links if links is not None else _NO_CITES
    if not _DECLINE.search(text):
        return _text(text, cites)
    out: list[str] = []
    raw: list[str] = []  # the text run so far (escapes resolved)
    i = 0
    while i < len(text):
        mark = _DECLINE.search(text, i)  # the run up to the next mark is plain text
        if mark is None:
            raw.append(text[i:])
            break
        if mark.start() > i:
            raw.append(text[i : mark.start()])
            i = mark.start()
        ch = text[i]
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt not in _PUNCT or nxt in ("", "`"):
                return None
            raw.append(nxt)
            i += 2
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            if end < 0 or text[i + 1 : i + 2] == "`" or text[end + 1 : end + 2] == "`":
                return None  # no closer, or a run of backticks: left to markdown-it
            content = text[i + 1 : end]
            if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
                content = content[1:-1]
            out.append(_text("".join(raw), cites))
            raw.clear()
            out.append(f"<code>{escapeHtml(content)}</code>")
            i = end + 1
            continue
        if ch == "*" and links is not None:
            strong = _strong(text, i, line_start)
            if strong is None:
                return None
            inner = _plain(text[i + 2 : strong], links)
            if inner is None:
                return None
            out.append(_text("".join(raw), cites))
            raw.clear()
            out.append(f"<strong>{inner}</strong>")
            i = strong + 2
            continue
        if ch == "[":
            number = _NUMBER.match(text, i)
            if number is None or text[i - 1 : i] == "!":
                return None
            raw.append(number.group(0))
            i = number.end()
            continue
        return None
    out.append(_text("".join(raw), cites))
    return "".join(out)


def _strong(text: str, i: int, line_start: bool) -> int | None:
    """Where the ``**`` closing the one opened at ``i`` begins, when markdown-it would read
    the pair as a plain strong span (the opener preceded by a space or the line's start and
    followed by a non-space; nothing starred inside; the closer after a letter or digit, or
    followed by a space or the end), else None."""
    if not text.startswith("**", i) or not (text[i - 1 : i] == " " or (i == 0 and line_start)):
        return None
    close = text.find("**", i + 2)
    inner = text[i + 2 : close] if close > 0 else ""
    if not inner or inner[0].isspace() or inner[-1].isspace() or "*" in inner:
        return None
    after = text[close + 2 : close + 3]
    if after in ("*", "_") or not (after in ("", " ") or inner[-1].isalnum()):
        return None
    return close


def _inline(line: str, links: Links) -> str | None:
    """HTML of one line of inline text, or None."""
    out: list[str] = []
    pos = 0
    em = _EM.fullmatch(line)
    if em is not None:
        inner = _plain(em.group(1), links)
        return None if inner is None else f"<em>{inner}</em>"
    while pos < len(line):
        start = _link_start(line, pos)
        if start > pos:
            if line[start - 1] in "!\\":
                return None
            piece = _plain(line[pos:start], links, line_start=pos == 0)
            if piece is None:
                return None
            out.append(piece)
        if start == len(line):
            break
        link = _LINK.match(line, start)
        if link is None:
            return None
        label = _plain(link.group(1), None)
        if label is None or not link.group(2):
            return None
        url = link.group(2)
        if not url.startswith(("https://", "http://")) or " " in url:
            return None
        href = links.normalize(url)
        if not links.validate(href):
            return None
        rel = "noopener noreferrer nofollow"
        out.append(f'<a href="{escapeHtml(href)}" rel="{rel}">{label}</a>')
        pos = link.end()
    return "".join(out)


def _link_start(line: str, pos: int) -> int:
    """Where the next ``[`` that is not a ``[N]`` begins (the line's end when none)."""
    while True:
        start = line.find("[", pos)
        if start < 0:
            return len(line)
        number = _NUMBER.match(line, start)
        if number is None:
            return start
        pos = number.end()


_NO_CITES = Links(str, bool)  # a link label's text: escaped, never a citation


def _line_ok(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line[-1].isspace()


def _math_opens(line: str) -> bool:
    """True when ``line`` may open a ``$$`` block that goes on to later lines (it begins
    with ``$$`` and does not end the block itself)."""
    body = line.strip()
    return body.startswith("$$") and not (len(body) > 3 and body.endswith("$$"))


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The blocks of ``lines`` as (first, past the last) line numbers: split at blank
    lines outside fenced code and ``$$`` math (either may span blank lines; one that never
    closes runs to the end)."""
    blocks: list[tuple[int, int]] = []
    first = -1
    fence = ""
    math = False
    for n, line in enumerate(lines):
        if fence:
            close = _FENCE.match(line)
            if (
                close
                and close.group(1)[0] == fence[0]
                and len(close.group(1)) >= len(fence)
                and not line[close.end() :].strip(" \t")
            ):
                fence = ""
            continue
        if math:
            math = not line.strip().endswith("$$")
            continue
        if not line.strip(" \t"):
            if first >= 0:
                blocks.append((first, n))
                first = -1
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
        elif _math_opens(line):
            math = True
        if first < 0:
            first = n
    if first >= 0:
        blocks.append((first, len(lines)))
    return blocks


def _joined(lines: list[str], blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Neighbouring blocks markdown-it may read as one thing, joined (with the blank lines
    between them): an indented block (the continuation of a list item, or code) with the
    one before it, a block starting with a list marker with one before it that holds any
    list line (the lists merge). Joining more than needed is safe: a joined block is
    rendered by markdown-it whole."""
    out: list[tuple[int, int]] = []
    for first, last in blocks:
        head = lines[first]
        if out and (
            head[:1].isspace()
            or (
                _LIST_START.match(head)
                and any(_ANY_LIST.match(x) for x in lines[out[-1][0] : out[-1][1]])
            )
        ):
            out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return out


def render(text: str, fallback: Callable[[str], str], links: Links) -> str:
    """markdown-it's HTML for ``text``: blocks in this module's grammar rendered here, the
    others by ``fallback`` (markdown-it), runs of them together as they stand in the text;
    the whole text by ``fallback`` when something in it may reach across blocks (``]:`` of
    a link reference definition, a fold marker outside its own block, a deeply indented
    fence).

    ``links`` carries markdown-it's own link functions, so a link's href is exactly the one
    markdown-it writes, and the citations ``fallback`` links too.
    """
    if "\r" in text or "\x00" in text or "]:" in text or _WHOLE.search(text):
        return fallback(text)
    lines = text.split("\n")
    out: list[str] = []
    slow: list[int] = []  # first and past-the-last line of the run left to markdown-it
    depth = 0

    def flush() -> bool:
        if not slow:
            return True
        chunk = "\n".join(lines[slow[0] : slow[1]])
        slow.clear()
        if "<details>" in chunk or "</details>" in chunk:
            return False  # a fold marker markdown-it would pair with ones outside the chunk
        out.append(fallback(chunk))
        return True

    for first, last in _joined(lines, _blocks(lines)):
        block = lines[first:last]
        quick: str | None = None
        if len(block) == 1:
            fold = _FOLD_OPEN.fullmatch(block[0])
            if fold is not None and "<" not in fold.group(1) and "&" not in fold.group(1):
                quick = f"<details><summary>{html.escape(fold.group(1), quote=False)}</summary>\n"
                depth += 1
            elif block[0] == "</details>" and depth > 0:
                quick = "</details>\n"
                depth -= 1
        if quick is None:
            quick = _quick_block(block, links)
        if quick is None:
            slow[:] = [slow[0] if slow else first, last]
            continue
        if not flush():
            return fallback(text)
        out.append(quick)
    if not flush():
        return fallback(text)
    out.extend("</details>\n" for _ in range(depth))
    return "".join(out)


def _quick_block(lines: list[str], links: Links) -> str | None:
    """HTML of one heading, paragraph or list block in the grammar, else None."""
    if not all(_line_ok(line) for line in lines) or any("\t" in line for line in lines):
        return None
    if len(lines) == 1:
        heading = _HEADING.fullmatch(lines[0])
        if heading is not None:
            level, content = len(heading.group(1)), heading.group(2)
            inner = None if content.endswith("#") else _inline(content, links)
            return None if inner is None else f"<h{level}>{inner}</h{level}>\n"
    if len(lines) >= 2 and all(line[0] == "|" and line[-1] == "|" for line in lines):
        return _table(lines, links)
    kind = _list_kind(lines)
    if kind is None:
        return None
    return _block(lines, kind, links)


def _table(lines: list[str], links: Links) -> str | None:
    """A table whose every line begins and ends with ``|`` (no escaped pipe), as
    markdown-it's table rule writes it, else None."""
    if any("\\|" in line for line in lines) or len(lines) * lines[0].count("|") > 10_000:
        return None
    aligns: list[str] = []
    for cell in lines[1][1:-1].split("|"):
        mark = cell.strip(" ")
        if not _ALIGN.fullmatch(mark):
            return None
        aligns.append(
            ("center" if mark[0] == ":" else "right")
            if mark[-1] == ":"
            else ("left" if mark[0] == ":" else "")
        )
    rows = [line[1:-1].split("|") for line in (lines[0], *lines[2:])]
    if len(rows[0]) != len(aligns):
        return None
    out = ["<table>\n<thead>\n"]
    for number, cells in enumerate(rows):
        tag = "th" if number == 0 else "td"
        if number == 1:
            out.append("<tbody>\n")
        out.append("<tr>\n")
        for column, align in enumerate(aligns):
            content = cells[column].strip(" ") if column < len(cells) else ""
            if content[:1].isspace() or content[-1:].isspace():
                return None
            inner = _inline(content, links)
            if inner is None:
                return None
            style = f' style="text-align:{align}"' if align else ""
            out.append(f"<{tag}{style}>{inner}</{tag}>\n")
        out.append("</tr>\n")
        if number == 0:
            out.append("</thead>\n")
    if len(rows) > 1:
        out.append("</tbody>\n")
    out.append("</table>\n")
    return "".join(out)


def _list_kind(lines: list[str]) -> str | None:
    """ "-" or "." for a bullet or ordered list, "" for a paragraph, None for neither."""
    if all(line.startswith("- ") for line in lines):
        return "-"
    if all(_ORDERED.match(line) for line in lines):
        return "."
    if any(_LINE_START.match(line) for line in lines):
        return None
    return ""


def _block(lines: list[str], kind: str, links: Links) -> str | None:
    if not kind:
        parts = [_inline(line, links) for line in lines]
        if any(p is None for p in parts):
            return None
        return "<p>" + "\n".join(p for p in parts if p is not None) + "</p>\n"
    items: list[str] = []
    start = 1
    for n, line in enumerate(lines):
        if kind == "-":
            body = line[2:]
        else:
            marker = _ORDERED.match(line)
            assert marker is not None
            if n == 0:
                start = int(marker.group(1))
            body = line[marker.end() :]
        if not _line_ok(body) or _LINE_START.match(body):
            return None
        html = _inline(body, links)
        if html is None:
            return None
        items.append(f"<li>{html}</li>\n")
    if kind == "-":
        return "<ul>\n" + "".join(items) + "</ul>\n"
    head = "<ol>\n" if start == 1 else f'<ol start="{start}">\n'
    return head + "".join(items) + "</ol>\n"
