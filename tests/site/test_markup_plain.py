"""The site's quick Markdown path against markdown-it: the same HTML for every text.

``markup_plain.render`` renders the blocks of a small grammar itself and hands the rest to
markdown-it; whatever it is given, its HTML must be markdown-it's, byte for byte. Checked
over generated documents mixing the grammar with everything that should send a block (or
the whole text) to markdown-it, over hostile fragments, and over every block the render
core makes of the real captured threads.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.model import RawPage, ThreadInput
from pplx_archiver.core.thread.render import render_parts
from pplx_archiver.site import markup, markup_plain
from tests.core.builders import CTX
from tests.samples import REAL

PREFIX = "turn-1-src-"
LINKS = markup_plain.Links(markup._MD.normalizeLink, markup._MD.validateLink)


def _reference(text: str, cites: int = 0) -> str:
    """markdown-it alone, with the site's rules (citations when ``cites``)."""
    env = {"cite_prefix": PREFIX if cites else "", "cite_count": cites}
    html: str = markup._MD.render(text, env)
    return html


def _quick(text: str, cites: int = 0) -> str:
    links = markup_plain.Links(LINKS.normalize, LINKS.validate, PREFIX if cites else "", cites)
    return markup_plain.render(text, lambda chunk: _reference(chunk, cites), links)


def _counting() -> tuple[list[str], Callable[[str], str]]:
    calls: list[str] = []

    def fallback(text: str) -> str:
        calls.append(text)
        return _reference(text)

    return calls, fallback


_WORD = st.sampled_from(
    ["alpha", "Beta", "量子", "naïve", "x", "42", "3.5", "a-b", "it's", '"q"', "(4)", "·", "—"]
)
_MARK = st.sampled_from(
    [
        "*", "**", "_", "`", "``", "\\", "\\_", "\\[", "\\*", "\\`", "[", "]", "<", ">", "&",
        "&amp;", "!", "![x](<https://e.x/i.png>)", "$", "$x$", "~", "~~", "|", "#", "\t",
        "\u00a0", "\u2028", "\x00", "\r", "<b>", "<details>", "</details>", "`a*b`", "` `",
        "` a `", "[n](<https://e.x/a b>)", "[n](<javascript:alert(1)>)", "[n](<https://例.cn/路>)",
        "[n](https://e.x)", "[](<https://e.x>)", "[a\\]b](<https://e.x/?q=1&r=2>)",
        "[n](<https://e.x>)", "**b**", "*e*", "__u__", "http://bare.example", "[1]", "[3]",
        "[7]", "[0]", "\\[2\\]", "[12345]", "[1](<https://e.x>)", "[1][2]", "![1]", "x[2]y",
        "[2](x)", "[[1]]", "**b**:", "**b**x", "x **b** y", "x**b**", "**b **", "** b**",
        "(**b**)", "**a `b` c**", "**[1]**", "**é.**", "**a*b**", "****", "$x$", "$$x$$",
    ]
)  # fmt: skip
_INLINE = st.lists(st.one_of(_WORD, _WORD, _WORD, _MARK), min_size=1, max_size=8).map(
    lambda parts: " ".join(parts)
)
_LINE = st.one_of(
    _INLINE,
    _INLINE.map(lambda t: f"**{t}**"),
    _INLINE.map(lambda t: f"**{t}** (3)"),
    _INLINE.map(lambda t: f"*{t}*"),
)
_CELL = st.one_of(_WORD, _INLINE, st.just(""), st.sampled_from(["**b**", "`c|d`", " x ", "a\\|b"]))
_TABLE = st.tuples(
    st.lists(_CELL, min_size=1, max_size=3),
    st.lists(
        st.sampled_from(["---", ":--", "--:", ":-:", " - ", "", "x", "-"]), min_size=1, max_size=4
    ),
    st.lists(st.lists(_CELL, max_size=4), max_size=3),
).map(lambda t: "\n".join("|" + "|".join(cells) + "|" for cells in (t[0], t[1], *t[2])))
_BLOCK = st.one_of(
    _TABLE,
    st.lists(_LINE, min_size=1, max_size=3).map("\n".join),
    st.lists(_LINE, min_size=1, max_size=3).map(lambda ls: "\n".join(f"- {x}" for x in ls)),
    st.lists(_LINE, min_size=1, max_size=3).map(
        lambda ls: "\n".join(f"{n}. {x}" for n, x in enumerate(ls, 1))
    ),
    st.tuples(st.integers(1, 7), _INLINE).map(lambda h: f"{'#' * h[0]} {h[1]}"),
    _INLINE.map(lambda t: f"<details><summary>{t}</summary>"),
    st.just("</details>"),
    st.sampled_from(
        [
            '```json\n{\n\n  "a": 1\n}\n```',
            "```\nunclosed\n\nfence",
            "~~~\ncode\n~~~",
            "    indented code",
            "  - nested\n    - deeper",
            "| a | b |\n|---|---|\n| 1 | 2 |",
            "$$\nx^2\n\n$$",
            "text\n$$\na\n\nb\n$$",
            "$$ a $$ b\n\nc $$",
            "  $$\n\n  $$",
            "$$$",
            "$$\nnever closed\n\nstill math",
            "[ref]: https://e.x/ref",
            "[ref]",
            "> quote\n> more",
            "- item\n\n  continued",
            "* star item",
            "+ plus item",
            "2) paren item",
            "---",
            "***",
            "Setext\n===",
            "line one  \nhard break",
            "line\\\nbreak",
            " leading space",
            "trailing space ",
            "007. seven",
            "1.5 not a list",
            "<details><summary>a</summary>\nnot a marker",
            "text <details><summary>x</summary>",
        ]
    ),
)
_DOC = st.lists(
    st.tuples(_BLOCK, st.sampled_from(["\n\n", "\n\n", "\n", "\n\n\n", "\n \n"])),
    min_size=1,
    max_size=8,
).map(lambda parts: "".join(block + sep for block, sep in parts))


@settings(max_examples=600, deadline=None)
@given(_DOC, st.sampled_from([0, 0, 3]))
@example("**Steps**\n\n- a [n](<https://e.x/a>) — s\n\n1. b\n2. c\n\n</details>", 0)
@example("- a\n\n- b", 0)
@example("1. a\n\n1. b", 0)
@example("- a\n\n    code", 0)
@example("<details><summary>S</summary>\n\n- a\n\n</details>\n\n</details>", 0)
@example("[x]\n\n[x]: https://e.x", 0)
@example("| A | B [1] |\n|:-|--:|\n| **x** | [y](<https://e.x>) |\n||z|", 3)
@example("Seen in \\[2\\] and [3], not [4] or [0].[1]", 3)
@example("**Bold [1]** `[2]` [l [3]](<https://e.x>)", 3)
def test_quick_path_gives_markdown_its_html(text: str, cites: int) -> None:
    """Any document mixing the grammar and everything else renders as markdown-it does,
    with and without citation links."""
    assert _quick(text, cites) == _reference(text, cites)


def test_quick_path_renders_the_core_steps_itself() -> None:
    """A work-process fold of the render core's shape never reaches markdown-it, and a
    fence inside it sends only that block."""
    steps = (
        "<details><summary>Steps (3)</summary>\n\n**Initial query**\n\nWhy not?\n\n*Really.*\n\n"
        "**Search results** (2)\n\n1. [One](<https://e.x/1>) — Snippet.\n"
        "2. [Two \\[2\\]](<https://例子.example.cn/2>) — `code_span`.\n\n"
        "#### Sub-agent: x · `gpt`\n\n- file\\_name: r.md\n\n</details>"
    )
    calls, fallback = _counting()
    got = markup_plain.render(steps, fallback, LINKS)
    assert got == _reference(steps) and calls == []
    fenced = steps.replace("- file\\_name: r.md", '```json\n{\n\n"a": 1\n}\n```')
    got = markup_plain.render(fenced, fallback, LINKS)
    assert got == _reference(fenced)
    assert calls == ['```json\n{\n\n"a": 1\n}\n```']
    calls.clear()
    math = steps.replace("- file\\_name: r.md", "$$\nx\n\ny\n$$")
    assert markup_plain.render(math, fallback, LINKS) == _reference(math)
    assert calls == ["$$\nx\n\ny\n$$"]  # display math spanning a blank line, alone


def test_text_reaching_across_blocks_goes_to_markdown_it_whole() -> None:
    """A reference definition or a fold marker inside another block makes the whole text
    markdown-it's."""
    texts = ("[a]\n\n[a]: https://e.x", "<details><summary>x</summary>\nmore")
    for text in texts:
        calls, fallback = _counting()
        markup_plain.render(text, fallback, LINKS)
        assert calls == [text]


def _sample_blocks() -> tuple[list[str], list[tuple[str, int]]]:
    blocks: list[str] = []
    answers: list[tuple[str, int]] = []
    for path in sorted(REAL.glob("thread_*.json")):
        body = orjson.loads(path.read_bytes())
        parts = render_parts(ThreadInput("t", (RawPage({}, body),)), CTX)
        for turn in parts.turns:
            blocks.extend((turn.query, *turn.work, *turn.subagents))
            answers.append((turn.answer, len(turn.citations)))
        blocks.extend(parts.appendix)
        if parts.report:
            blocks.append(parts.report)
    return blocks, answers


def test_every_block_of_the_real_threads_renders_as_markdown_it() -> None:
    """Each query, work and sub-agent block of the captured threads, and each answer with
    its citation links: the same HTML."""
    blocks, answers = _sample_blocks()
    assert len(blocks) >= 10 and len(answers) >= 4
    for block in blocks:
        assert _quick(block) == _reference(block), block[:200]
    for answer, cites in answers:
        assert _quick(answer, cites) == _reference(answer, cites), answer[:200]


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "[x](<javascript:alert(1)>)",
        "[x](<data:text/html,<b>>)",
        "<details><summary><img src=x onerror=alert(1)></summary>",
        "**<b>**",
        "`</code><script>`",
        '- [a](<https://e.x/"onmouseover="x>)',
    ],
)
def test_hostile_text_stays_text(text: str) -> None:
    """What markdown-it keeps inert stays inert: the same HTML, no live tag."""
    got = _quick(text)
    assert got == _reference(text)
    assert not re.search(r"<(script|img)\b", got) and 'href="javascript' not in got
