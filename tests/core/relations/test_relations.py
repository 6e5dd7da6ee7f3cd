"""Unit tests of the relation graph core on crafted threads (every kind, chaining, bytes)."""

from __future__ import annotations

from typing import Any

import orjson

from pplx_archiver.core.relations.relations import (
    Edge,
    ThreadFacts,
    build_edges,
    edges_jsonl,
    graph_md,
    normalize_prompt,
    text_links,
    thread_facts,
)
from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.model import RawPage
from tests.core.builders import answer_block, entry, final_step, page, payload, step, workflow

U = [f"{i:08x}-2222-4000-8000-{i:012x}" for i in range(10)]


def facts(
    uuid: str,
    created: int,
    answer_text: tuple[str, ...] = (),
    citation_text: tuple[str, ...] = (),
    **kw: Any,
) -> ThreadFacts:
    """Facts of a thread with the given uuid and creation time (and the links of the given
    answer and citation texts)."""
    links = text_links(answer_text, citation_text)
    return ThreadFacts(uuid=uuid, created_us=created, ids=(uuid,), links=links, **kw)


def decoded(
    uuid: str, plain: list[dict[str, Any]], blocks: list[dict[str, Any]] | None = None
) -> ThreadFacts:
    """Facts of a thread decoded from page bodies, as the shell builds them."""
    thread = decode_thread(
        tuple(RawPage({}, b) for b in plain), tuple(RawPage({}, b) for b in blocks or [])
    )
    return thread_facts(uuid, thread)


def test_normalize_prompt_folds_case_width_space_and_trailing_punctuation() -> None:
    """NFKC, casefold, whitespace collapse and trailing punctuation removal apply together."""
    assert normalize_prompt("  What IS\tthe   ＡＰＩ?!  ") == "what is the api"
    assert normalize_prompt("Straße.") == normalize_prompt("STRASSE")
    assert normalize_prompt("a?b") == "a?b"
    assert normalize_prompt("?!") == ""


def test_same_prompt_chains_in_time_order_not_a_clique() -> None:
    """Three equal prompts give two edges, earliest to latest, never first to last."""
    threads = [
        facts(U[2], 300, first_query="Hello world?"),
        facts(U[0], 100, first_query="hello   WORLD"),
        facts(U[1], 200, first_query="Hello world."),
        facts(U[3], 50, first_query="something else"),
    ]
    edges = build_edges(threads)
    assert edges == (
        Edge(U[0], U[1], "same_prompt", "manual resend"),
        Edge(U[1], U[2], "same_prompt", "manual resend"),
    )


def test_same_prompt_evidence_is_scheduled_task_only_when_both_ends_are_scheduled() -> None:
    """A resend between two scheduled runs is a scheduled task; with a manual end it is not."""
    threads = [
        facts(U[0], 1, first_query="daily news", scheduled=True),
        facts(U[1], 2, first_query="daily news", scheduled=True),
        facts(U[2], 3, first_query="daily news", scheduled=False),
    ]
    assert [e.evidence for e in build_edges(threads)] == ["scheduled task", "manual resend"]


def test_same_space_chains_threads_of_one_space() -> None:
    """Threads of a space are chained in time order; other spaces stay apart."""
    threads = [
        facts(U[0], 3, space="sp-a"),
        facts(U[1], 1, space="sp-a"),
        facts(U[2], 2, space="sp-a"),
        facts(U[3], 1, space="sp-b"),
    ]
    assert build_edges(threads) == (
        Edge(U[1], U[2], "same_space", "space sp-a"),
        Edge(U[2], U[0], "same_space", "space sp-a"),
    )


def test_references_by_url_and_bare_uuid_from_answers_and_citations() -> None:
    """A thread URL or a bare uuid in an answer or citation links the archived thread."""
    threads = [
        facts(
            U[0],
            1,
            answer_text=(f"see https://www.perplexity.ai/search/{U[1]} and {U[2].upper()}",),
        ),
        facts(U[1], 2, citation_text=(f"https://perplexity.ai/search/{U[0]}",)),
        facts(U[2], 3, answer_text=(f"myself {U[2]} and an unknown {U[9]}",)),
        ThreadFacts(uuid=U[3], created_us=4, ids=tuple(sorted({U[3], "my-slug-abc"}))),
        facts(U[4], 5, citation_text=("https://www.perplexity.ai/search/My-Slug-abc",)),
        facts(U[5], 6, answer_text=("as said in perplexity.ai/search/my-slug-abc.",)),
    ]
    assert build_edges(threads) == (
        Edge(U[0], U[1], "references", "answer url"),
        Edge(U[0], U[2], "references", "answer uuid"),
        Edge(U[1], U[0], "references", "citation url"),
        Edge(U[4], U[3], "references", "citation url"),
        Edge(U[5], U[3], "references", "answer url"),
    )


def test_subagent_of_from_background_entry_run_id() -> None:
    """A parent whose background entry carries another thread's uuid makes it a sub-agent."""
    background = entry(
        U[5],
        20,
        query="",
        search_mode="ASI",
        is_background=True,
        blocks=[workflow([payload("toolu_A", completed="2026-07-20T08:00:30Z")])],
    )
    parent_main = entry(
        U[4],
        0,
        query="plan",
        search_mode="ASI",
        blocks=[workflow([payload("toolu_A", anchor=True)])],
    )
    parent = decoded(U[4], [page([parent_main])], [page([parent_main], [background])])
    child = decoded(U[5], [page([entry(U[5], 30, query="")])])
    assert parent.background_ids == ((U[5], "toolu_A"),)
    assert build_edges([parent, child]) == (
        Edge(U[5], U[4], "subagent_of", "sub-agent run toolu_A"),
    )


def test_subagent_of_from_run_subagent_step_anchored_in_parent() -> None:
    """A thread whose run_subagent step id is anchored by another thread is its sub-agent."""
    parent = facts(U[0], 1, anchors=("toolu_B",))
    child = facts(U[1], 2, runs=("toolu_B",))
    assert build_edges([parent, child]) == (
        Edge(U[1], U[0], "subagent_of", "sub-agent run toolu_B"),
    )


def test_subagent_of_from_council_model_slot() -> None:
    """A council member item named <uuid>_<model> makes that archived thread a model slot."""
    member = {
        "id": f"{U[7]}_gpt55_thinking",
        "type": "WORKFLOW_ITEM_WORKFLOW",
        "payload": {
            "workflow_payload": {
                "mode": "LLM_COUNCIL",
                "model": "gpt55_thinking",
                "id": "m",
                "steps": [],
            }
        },
    }
    council = entry(
        U[6],
        0,
        search_mode="AGENTIC_RESEARCH",
        blocks=[
            workflow(
                [step([member], id="council", tool_name="council_research")], mode="LLM_COUNCIL"
            ),
            answer_block("x"),
        ],
    )
    parent = decoded(U[6], [page([council])], [page([council])])
    slot = facts(U[7], 5)
    assert parent.council == ((U[7], "gpt55_thinking"),)
    assert build_edges([parent, slot]) == (
        Edge(U[7], U[6], "subagent_of", "council model gpt55_thinking"),
    )


def test_decoded_facts_read_first_query_scheduled_source_space_and_links() -> None:
    """The facts of a decoded thread carry its first query, scheduled flag, space and links."""
    first = entry(
        U[0],
        0,
        query="Daily digest",
        query_source="scheduled",
        collection_info={"uuid": "space-1", "slug": "s", "title": "Space"},
        text=[final_step(f"see {U[1]}", 1)],
    )
    later = entry("e2", 60, query="follow", text=[final_step("more")])
    f = decoded(U[0], [page([first, later])])
    assert (f.first_query, f.scheduled, f.space) == ("Daily digest", True, "space-1")
    assert (U[1], "answer uuid") in f.links
    assert f.links == text_links([f"see {U[1]}", "more"], ["https://example.com/1"])


def test_no_self_edges_and_evidence_merged_per_pair() -> None:
    """A thread never relates to itself; several channels for one pair give one edge."""
    threads = [
        facts(
            U[0],
            1,
            answer_text=(f"{U[0]} {U[1]}", f"perplexity.ai/search/{U[1]}"),
            citation_text=(f"https://www.perplexity.ai/search/{U[1]}",),
        ),
        facts(U[1], 2),
    ]
    edges = build_edges(threads)
    assert edges == (Edge(U[0], U[1], "references", "answer url; answer uuid; citation url"),)


def test_output_bytes_do_not_depend_on_input_order() -> None:
    """edges.jsonl and graph.md are byte-identical whatever the order of the facts."""
    threads = [
        facts(U[0], 1, first_query="q", space="s", title="A <b>|title|</b>\x07"),
        facts(U[1], 2, first_query="Q?", space="s", answer_text=(U[0],)),
        facts(U[2], 3, first_query="q", anchors=("toolu_C",)),
        facts(U[3], 4, runs=("toolu_C",)),
    ]
    forward = build_edges(threads)
    backward = build_edges(list(reversed(threads)))
    assert edges_jsonl(forward) == edges_jsonl(backward)
    assert graph_md(forward, threads) == graph_md(backward, list(reversed(threads)))
    lines = [orjson.loads(line) for line in edges_jsonl(forward).splitlines()]
    assert {row["kind"] for row in lines} == {
        "same_prompt",
        "same_space",
        "references",
        "subagent_of",
    }
    assert all(set(row) == {"src", "dst", "kind", "evidence"} for row in lines)
    md = graph_md(forward, threads).decode()
    assert "| same_prompt | 2 |" in md and "| subagent_of | 1 |" in md
    assert "<b>" not in md and "\x07" not in md


def test_background_answers_count_as_the_threads_own_references() -> None:
    """A link in a sub-agent's background answer is a reference of the parent thread."""
    main = entry(U[0], 0, query="plan", text=[final_step("main answer")])
    background = entry(U[8], 10, query="", is_background=True, text=[final_step(f"see {U[1]}")])
    parent = decoded(U[0], [page([main], [background])])
    assert build_edges([parent, facts(U[1], 5)]) == (Edge(U[0], U[1], "references", "answer uuid"),)
