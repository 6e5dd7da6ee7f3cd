"""Hypothesis properties: same bytes twice, structure-safe Markdown, only PayloadError escapes."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pplx_archiver.core.thread.model import RawPage, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.errors import PayloadError
from tests.core import builders as b
from tests.core.scenarios import SCENARIOS

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.lists(
    st.sampled_from([*"ab |\n`$<>/-#*_[]()\\x", "</details>", "```", "|---|", "<details>"]),
    max_size=12,
).map("".join)


def _bodies(inp: ThreadInput) -> tuple[list[Any], list[Any]]:
    return ([copy.deepcopy(p.body) for p in inp.plain_pages],
            [copy.deepcopy(p.body) for p in inp.blocks_pages])  # fmt: skip


def _rebuild(plain: list[Any], blocks: list[Any]) -> ThreadInput:
    return ThreadInput("t", tuple(RawPage({}, x) for x in plain),
                       tuple(RawPage({}, x) for x in blocks))  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(_paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.extend(_paths(child, (*prefix, index)))
    return out


REPLACEMENTS = st.one_of(
    st.none(), st.integers(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=5),
    st.just("x" * 200_000), st.just([]), st.just({}),
    st.just(orjson.loads("[" * 200 + "]" * 200)),
    st.just({"steps": [{"items": [{"type": "WORKFLOW_ITEM_WORKFLOW"}]}]}),
)  # fmt: skip


@SETTINGS
@given(
    name=st.sampled_from(sorted(SCENARIOS)),
    pick=st.integers(min_value=0),
    action=st.sampled_from(["drop", "replace"]),
    value=REPLACEMENTS,
)
def test_any_mutation_renders_or_raises_payload_error(
    name: str, pick: int, action: str, value: Any
) -> None:
    """Dropping a key or replacing any value yields a rendering or a PayloadError."""
    plain, blocks = _bodies(SCENARIOS[name]())
    root = {"plain": plain, "blocks": blocks}
    paths = [p for p in _paths(root) if len(p) > 1]
    path = paths[pick % len(paths)]
    parent: Any = root
    for key in path[:-1]:
        parent = parent[key]
    if action == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    try:
        result = render_thread(_rebuild(plain, blocks), b.CTX)
    except PayloadError as exc:
        assert exc.path
    else:
        assert "thread.json" in result.files


@SETTINGS
@given(name=st.sampled_from(sorted(SCENARIOS)))
def test_rendering_is_deterministic(name: str) -> None:
    """The same input renders to byte-identical files and records."""
    first = render_thread(SCENARIOS[name](), b.CTX)
    second = render_thread(SCENARIOS[name](), b.CTX)
    assert first.files == second.files
    assert first.record == second.record


@SETTINGS
@given(
    columns=st.lists(TEXT, min_size=1, max_size=4),
    rows=st.lists(st.lists(TEXT, max_size=4), max_size=5),
    answer=TEXT,
    query=TEXT,
)
def test_markdown_structure_survives_hostile_text(
    columns: list[str], rows: list[list[str]], answer: str, query: str
) -> None:
    """Tables keep their rows and columns and <details> stay balanced, whatever the text."""
    table = {"id": "t", "type": "WORKFLOW_ITEM_TABLE",
             "payload": {"table_payload": {"columns": columns, "rows": rows}}}  # fmt: skip
    thought = b.text_item(answer, "thought")
    e = b.entry(
        "e1",
        0,
        query=query,
        blocks=[b.answer_block(answer), b.workflow([b.step([table, thought])])],
    )
    result = render_thread(b.thread_input([], [b.page([e])]), b.CTX)
    text = result.files["turns/turn_0001.md"].decode()
    width = max([len(columns), *(len(r) for r in rows)])
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables = [i for i, t in enumerate(tokens) if t.type == "table_open"]
    assert tables, text
    start = tables[0]
    end = next(i for i in range(start, len(tokens)) if tokens[i].type == "table_close")
    body = tokens[start:end]
    assert sum(1 for t in body if t.type == "tr_open") == len(rows) + 1
    assert sum(1 for t in body if t.type == "th_open") == width
    html = "".join(
        t.content
        for tok in tokens
        for t in (tok, *(tok.children or ()))
        if t.type in ("html_block", "html_inline")
    )
    assert html.count("<details>") == html.count("</details>")
    assert html.count("<details>") >= 1  # our own fold is there and closed
