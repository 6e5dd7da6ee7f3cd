"""Tests for the Markdown fidelity primitives, checked against a real parser (markdown-it-py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from pplx_archiver.core.thread.markdown import (
    blockquote,
    bullet,
    details,
    escape_cell,
    fence,
    heading,
    longest_backtick_run,
    md_table,
    normalize_latex,
    safe_markdown,
    single_line,
)
from pplx_archiver.core.thread.mdfile import md_bytes

MD = MarkdownIt("commonmark").enable("table")
PIECES = [
    *"ab |\\`~<>/-*#:\n\r\t$[]()!1.=_",
    "```",
    "~~~",
    "    ",
    "</details>",
    "<details>",
    "<summary>",
    "<!--",
    "-->",
    "<pre>",
    "<div>",
    "- ",
    "> ",
    "1. ",
    "\\(",
    "\\)",
    "\\[",
    "\\]",
    "\n\n",
    "2) ",
    "* ",
    "---",
    "|---|",
    "<span>",
    "<?",
    "?>",
]
LINKY = ["[x](", '<a title="`">', "<http://a`b>"]
HOSTILE = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
TEXT = st.one_of(HOSTILE, st.text(max_size=40))
LINKY_TEXT = st.lists(st.sampled_from(PIECES + LINKY), max_size=40).map("".join)


def _code_contents(markdown: str) -> list[str]:
    found: list[str] = []
    for token in MD.parse(markdown):
        if token.type in ("fence", "code_block"):
            found.append(token.content)
        found.extend(c.content for c in token.children or [] if c.type == "code_inline")
    return found


def _tokens(markdown: str) -> list[Token]:
    return MD.parse(markdown)


def _details_balance(html_out: str) -> tuple[int, int]:
    opens = len(re.findall(r"<details[\s>]", html_out, re.IGNORECASE))
    closes = len(re.findall(r"</details\s*>", html_out, re.IGNORECASE))
    return opens, closes


# --------------------------------------------------------------------------- fences


@pytest.mark.parametrize("run", [0, 1, 2, 3, 4, 5, 6])
def test_fence_is_longer_than_any_inner_backtick_run(run: int) -> None:
    """The fence has max(3, longest run + 1) backticks and parses back to the exact text."""
    text = f"before {'`' * run} after\n{'`' * run}\n"
    out = fence(text, "python")
    marker = "`" * max(3, run + 1)
    assert out.startswith(marker + "python\n")
    assert out.endswith("\n" + marker + "\n")
    fences = [t for t in _tokens(out) if t.type == "fence"]
    assert len(fences) == 1
    assert fences[0].content == text


def test_fence_with_tildes_inside() -> None:
    """A ~~~ line inside the text does not close the backtick fence."""
    text = "~~~\nnot the end\n~~~~~~\n"
    tokens = _tokens(fence(text) + "after\n")
    assert [t.type for t in tokens][:1] == ["fence"]
    assert tokens[0].content == text


def test_fence_adds_final_newline_and_normalizes_crlf() -> None:
    """Content without a final newline gets one; CRLF and CR become LF."""
    assert fence("a\r\nb\rc") == "```\na\nb\nc\n```\n"
    assert fence("") == "```\n```\n"


def test_fence_info_string_is_sanitized() -> None:
    """The language cannot inject backticks or extra words into the info string."""
    assert fence("x", "py`th on").startswith("```pyth\n")


def test_longest_backtick_run() -> None:
    """The longest run of consecutive backticks is counted."""
    assert longest_backtick_run("a `` b ````` c ` d") == 5
    assert longest_backtick_run("none") == 0


@settings(max_examples=200, deadline=None)
@given(TEXT, st.sampled_from(["", "python", "md"]))
def test_fence_round_trips_through_a_parser(text: str, lang: str) -> None:
    """Any text inside fence() parses as one fence token whose content is that text."""
    out = fence(text, lang)
    assert out == fence(text, lang)
    tokens = _tokens(out)
    assert [t.type for t in tokens] == ["fence"]
    expected = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    if expected and not expected.endswith("\n"):
        expected += "\n"
    assert tokens[0].content == expected


# --------------------------------------------------------------------------- tables


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("a|b", "a\\|b"),
        ("a\\|b", "a\\\\\\|b"),
        ("line1\nline2\r\nline3\rline4", "line1<br>line2<br>line3<br>line4"),
        (None, ""),
        (3, "3"),
        (True, "true"),
        ({"k": [1, "|"]}, '{"k":[1,"\\|"]}'),
        ("</details>", "&lt;/details&gt;"),
    ],
)
def test_escape_cell(value: object, cell: str) -> None:
    """Pipes, line breaks, backslashes before them, None, JSON values and tags are escaped."""
    assert escape_cell(value) == cell


def _table_shape(markdown: str) -> tuple[int, list[int]]:
    tokens = _tokens(markdown)
    assert [t.type for t in tokens].count("table_open") == 1
    rows: list[int] = []
    header = 0
    in_head = False
    for token in tokens:
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            rows.append(0)
        elif token.type in ("th_open", "td_open"):
            rows[-1] += 1
            if in_head:
                header += 1
    return header, rows[1:]


def _cell_texts(markdown: str) -> list[str]:
    tokens = _tokens(markdown)
    return [t.content for t in tokens if t.type == "inline"]


def test_md_table_keeps_ragged_rows_and_extra_cells() -> None:
    """Short rows are padded and extra cells get col_N header columns."""
    out = md_table(["a", "b"], [["1"], ["1", "2", "3", "4"]])
    assert out.splitlines()[0] == "| a | b | col_3 | col_4 |"
    assert _table_shape(out) == (4, [4, 4])


def test_md_table_with_pipes_and_newlines_stays_a_table() -> None:
    """Cells with pipes, newlines and backslashes keep the table's shape."""
    rows = [["x|y", "a\nb"], ["\\", "\\|"], ["`code|`", "| lead"]]
    out = md_table(["c|1", "c\n2"], rows)
    assert _table_shape(out) == (2, [2, 2, 2])


def test_md_table_zero_columns_is_an_explicit_note() -> None:
    """A table with no columns renders a note line, never nothing."""
    assert md_table([], []) == "(empty table: no columns, 0 rows)\n"
    assert md_table([], [[], []], empty_note="表格为空") == "表格为空\n"


def test_md_table_header_only() -> None:
    """A table with columns and no rows is still a table with its header."""
    assert _table_shape(md_table(["a", "b"], [])) == (2, [])


CELL = st.one_of(
    st.none(),
    st.integers(),
    st.text(alphabet=st.sampled_from(list("a |\\`\n\r<>-:*_#")), max_size=12),
    st.text(max_size=8),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=6), max_size=4),
    st.lists(st.lists(CELL, max_size=5), max_size=5),
)
def test_md_table_shape_survives_a_parser(columns: list[str], rows: list[list[object]]) -> None:
    """Parsed with markdown-it, the table has one row per input row and every column."""
    out = md_table(columns, rows)
    assert out == md_table(columns, rows)
    width = max([len(columns), *(len(r) for r in rows)])
    if width == 0:
        assert "table_open" not in [t.type for t in _tokens(out)]
        assert out.strip()
        return
    assert _table_shape(out) == (width, [width] * len(rows))


# --------------------------------------------------------------------------- LaTeX


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Inline \\(a+b\\) end", "Inline $a+b$ end"),
        ("\\[\nE = mc^2\n\\]", "$$\nE = mc^2\n$$"),
        ("\\[E = mc^2\\]", "$$\nE = mc^2\n$$"),
        ("so \\[x\\] then", "so\n$$\nx\n$$\nthen"),
        ("mixed \\(a\\) and\n\\[b\\]\n", "mixed $a$ and\n$$\nb\n$$\n"),
        ("`\\(code\\)` and \\(x\\)", "`\\(code\\)` and $x$"),
        ("```\n\\[fenced\\]\n```\n\\(y\\)", "```\n\\[fenced\\]\n```\n$y$"),
        ("    \\(indented code\\)", "    \\(indented code\\)"),
        ("unbalanced \\( open", "unbalanced \\( open"),
        ("stray \\) close and \\] too", "stray \\) close and \\] too"),
        ("escaped \\\\(not math\\\\)", "escaped \\\\(not math\\\\)"),
        ("empty \\(\\) stays", "empty \\(\\) stays"),
        ("- item \\[x\\]", "- item\n  $$\n  x\n  $$"),
        ("> \\[q\\]", "> $$\n> q\n> $$"),
        ("| a | b |\n|---|---|\n| \\[x\\] | \\(y\\) |", "| a | b |\n|---|---|\n| $$x$$ | $y$ |"),
        ("no math at all", "no math at all"),
    ],
)
def test_normalize_latex(source: str, expected: str) -> None:
    """LaTeX delimiters become $$/$ outside code; everything else is kept as written."""
    assert normalize_latex(source) == expected


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_normalize_latex_is_deterministic_and_loses_no_text(text: str) -> None:
    """Output is stable, and removing delimiters/whitespace leaves the same characters.

    Display math inside a blockquote repeats the quote marker on each line it opens, so
    line-leading ``>`` markers are not counted as text.
    """
    out = normalize_latex(text)
    assert out == normalize_latex(text)

    def letters(value: str) -> str:
        value = "\n".join(line.lstrip(" \t>") for line in value.splitlines())
        return re.sub(r"[\s$]|\\[\[\]()]", "", value)

    assert letters(out) == letters(text)


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_normalize_latex_leaves_code_untouched(text: str) -> None:
    """Every fenced, indented and inline code span parses to the same content after the change."""
    source = text.replace("\r", "")
    assert _code_contents(normalize_latex(source)) == _code_contents(source)


# --------------------------------------------------------------------------- safety


@settings(max_examples=200, deadline=None)
@given(st.one_of(TEXT, LINKY_TEXT))
def test_safe_markdown_leaves_no_raw_structure_tag(text: str) -> None:
    """Rendered to HTML, safe text holds no raw details/summary tag, wherever it stood."""
    rendered = MD.render(safe_markdown(text))
    assert not re.findall(r"</?(?:details|summary)(?=[\s/>]|$)", rendered, re.IGNORECASE)


def test_safe_markdown_escapes_structure_tags_outside_code_only() -> None:
    """Details/summary tags are escaped in prose and raw HTML but kept inside code."""
    source = "a </details> b <summary>s</Summary>\n\n`</details>`\n\n```\n</details>\n```\n"
    out = safe_markdown(source)
    assert out == (
        "a &lt;/details&gt; b &lt;summary&gt;s&lt;/Summary&gt;\n\n`</details>`\n\n"
        "```\n</details>\n```\n"
    )


def test_safe_markdown_closes_an_unclosed_fence() -> None:
    """An unclosed fence is closed with its own marker so it cannot swallow what follows."""
    assert safe_markdown("text\n````py\ncode") == "text\n````py\ncode\n````"
    assert safe_markdown("~~~\ncode\n") == "~~~\ncode\n~~~"


def test_safe_markdown_leaves_balanced_text_verbatim() -> None:
    """Text with balanced fences and no structure tags comes back unchanged."""
    source = "# T\n\n```js\nlet a = `x`;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert safe_markdown(source) == source


def test_safe_markdown_escapes_unterminated_html_block_openers() -> None:
    """An HTML comment or <pre> block without its terminator is escaped, not left open."""
    assert safe_markdown("a\n\n<!-- never closed\nmore") == "a\n\n&lt;!-- never closed\nmore"
    assert safe_markdown("<pre>\nx") == "&lt;pre>\nx"
    assert safe_markdown("<!-- closed -->\nok") == "<!-- closed -->\nok"


def test_safe_markdown_fence_in_list_item_is_not_closed_twice() -> None:
    """A fence inside a list item ends with the item, so no closing fence is added."""
    source = "- item\n\n  ```\n  code\n"
    assert safe_markdown(source) == source


def test_safe_markdown_empty_list_item_then_blank_line_ends_the_item() -> None:
    """After an empty item and a blank line the text is top-level, so an open comment is escaped."""
    assert safe_markdown("- \n\n  <!-- open") == "- \n\n  &lt;!-- open"


def test_safe_markdown_lazy_line_can_start_any_ordered_list() -> None:
    """A lazy line like '2) x' starts a new list, so tags on it are judged at that level."""
    source = "* a ```\n2) b ``` <summary>"
    assert "<summary>" not in MD.render(safe_markdown(source))


def test_details_block_shape() -> None:
    """details() wraps a body in a folded block with an escaped one-line summary."""
    out = details("Step <1>\n& more", "body </details>")
    assert out == (
        "<details><summary>Step &lt;1&gt; &amp; more</summary>\n\n"
        "body &lt;/details&gt;\n\n</details>\n"
    )


def test_details_trusted_body_keeps_nested_blocks() -> None:
    """A trusted body (our own nested details) is kept as assembled."""
    inner = details("inner", "x")
    out = details("outer", inner, trusted=True)
    assert _details_balance(MD.render(out)) == (2, 2)


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_details_stays_balanced_for_any_body(summary: str, body: str) -> None:
    """Whatever the body, the rendered HTML holds exactly our one <details> and its close."""
    out = details(summary, body)
    assert out == details(summary, body)
    rendered = MD.render(out + "\nafter\n")
    assert _details_balance(rendered) == (1, 1)
    assert rendered.rstrip().endswith("</details>\n<p>after</p>") or rendered.rstrip().endswith(
        "<p>after</p>"
    )
    tail = _tokens(out + "\n# after\n")[-3:]
    assert [t.type for t in tail] == ["heading_open", "inline", "heading_close"]


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_safe_markdown_cannot_swallow_following_heading(text: str) -> None:
    """A heading written after safe API text is always parsed as that heading."""
    tokens = _tokens(safe_markdown(text) + "\n\n## Sources\n")
    assert [t.type for t in tokens[-3:]] == ["heading_open", "inline", "heading_close"]
    assert tokens[-2].content == "Sources"


# --------------------------------------------------------------------------- helpers


def test_heading_is_one_line_and_keeps_hashes() -> None:
    """Heading text is flattened; leading and trailing # are escaped so they stay text."""
    out = heading(2, "# Title\nsecond #")
    assert out == "## \\# Title second \\#\n"
    tokens = _tokens(out)
    assert tokens[0].tag == "h2"
    assert tokens[1].content == "\\# Title second \\#"


def test_heading_level_is_checked() -> None:
    """A level outside 1..6 is rejected with a clear error."""
    with pytest.raises(ValueError, match=r"1\.\.6"):
        heading(7, "x")


def test_bullet_and_single_line_escape_block_starts() -> None:
    """List items hold one line and cannot start a nested block."""
    assert bullet("1. first\nsecond") == "- 1\\. first second\n"
    assert single_line("> quote") == "\\> quote"
    assert single_line("```") == "\\```"
    tokens = _tokens(bullet("# not a heading"))
    assert "heading_open" not in [t.type for t in tokens]


def test_blockquote_prefixes_every_line() -> None:
    """Each line is quoted, blank lines as a bare marker, and an open fence is closed inside."""
    assert blockquote("a\n\nb") == "> a\n>\n> b\n"
    tokens = _tokens(blockquote("```\ncode") + "\nafter\n")
    assert tokens[-2].content == "after"


# --- md_bytes: the bytes of every Markdown file -----------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _md_bytes_reference(text: str) -> bytes:
    """Each C0 control but tab and newline, and DEL, as its control picture; then UTF-8."""
    shown = _CONTROL.sub(
        lambda m: "\u2421" if m.group() == "\x7f" else chr(0x2400 + ord(m.group())), text
    )
    return shown.encode("utf-8", "replace")


@settings(max_examples=400)
@given(st.text(alphabet=st.characters(max_codepoint=0x10FFFF), max_size=60))
def test_md_bytes_shows_every_control_as_its_picture(text: str) -> None:
    data = md_bytes(text)
    assert data == _md_bytes_reference(text)
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", data)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", b"plain"),
        ("tab\tand\nnewline", b"tab\tand\nnewline"),
        ("bell\x07", "bell\u2407".encode()),
        ("del\x7f", "del\u2421".encode()),
        ("量子\x00", "量子\u2400".encode()),
        ("lone \ud800 surrogate", b"lone ? surrogate"),
    ],
)
def test_md_bytes_examples(text: str, expected: bytes) -> None:
    assert md_bytes(text) == expected
