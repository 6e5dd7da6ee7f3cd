"""Edges of placement, interruptions, modes and headings (issue 39), one crafted thread each."""

from __future__ import annotations

from typing import Any

import orjson

from pplx_archiver.core.thread.model import RawPage, RenderResult, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.run.pipeline import row_from_arg
from tests.core import builders as b
from tests.core.scenarios import SCENARIOS

LIMIT = "spending_limit_exceeded"
AWAITING = "WORKFLOW_AWAITING_NEXT_STEPS"


def _render(
    entries: list[dict[str, Any]], background: list[dict[str, Any]] | None = None, **meta: Any
) -> RenderResult:
    page = b.page(entries, background, **meta)
    return render_thread(ThreadInput("t", (RawPage({}, page),), (RawPage({}, page),)), b.CTX)


def _at(second: int, fraction: str) -> str:
    """``ts(second)`` with another fraction of a second (``"600000"`` → .6 s)."""
    return b.ts(second)[:-13] + f".{fraction}+00:00"


def _blocked_run(updated: str) -> RenderResult:
    """A limit-interrupted computer task: a blocked 2-step run without ``completed_at`` whose
    background entry was last updated at ``updated``; its stub turn was created at 100 s."""
    steps = [b.step([b.text_item("one", "thought")]), b.step([b.text_item("two", "thought")])]
    run = b.payload("toolu_X", AWAITING, steps=steps)
    bg = b.entry(
        "bg",
        60,
        is_background=True,
        search_mode="ASI",
        blocks=[b.workflow([run], AWAITING)],
        locked_reason=LIMIT,
        entry_updated_datetime=updated,
    )
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("Working on it.")])
    stub = b.entry("stub", 100, query="", search_mode="ASI", trigger="subagent_result", blocks=[])
    return _render([first, stub], [bg])


def test_run_without_completion_time_lands_on_its_stub_by_its_entry_update() -> None:
    """No ``completed_at``: the entry's update time (0.6 s after the stub) is matched, and the
    stub turn shows the run with its ⏸ annotation; the interruption is recorded there."""
    result = _blocked_run(_at(100, "600000"))
    assert result.record["background"] == [{"payload_id": "toolu_X", "landing": "stub", "turn": 2}]
    assert result.record["interruptions"] == [
        {
            "location": "turn_0002/subagent_stub",
            "kind": "limit_interrupted",
            "headline": "Agent toolu_X",
            "status": AWAITING,
        }
    ]
    conversation = result.files["conversation.md"].decode()
    turn2 = conversation.split("## Turn 2\n\n", 1)[1]
    assert "#### Sub-agent: Agent toolu\\_X ⏸ limit-interrupted" in turn2
    assert "Background tasks" not in conversation


def test_run_whose_entry_update_is_over_10_s_from_the_stub_goes_to_the_appendix() -> None:
    """More than 10 s between the entry's update and the stub's creation: the appendix."""
    result = _blocked_run(_at(110, "000001"))
    assert [x["landing"] for x in result.record["background"]] == ["appendix"]
    assert [r["location"] for r in result.record["interruptions"]] == ["background_unassigned"]


def _inner(status: str = "WORKFLOW_CANCELED") -> dict[str, Any]:
    return b.payload("inner", status, steps=[b.step([b.text_item("inner work", "thought")])])


def test_anchor_nested_in_a_subagent_with_steps_renders_once() -> None:
    """An anchor one level down (inside a sub-agent that has steps) is anchored: shown in the
    turn only, recorded and logged once."""
    outer = b.payload(
        "outer", steps=[b.step([b.text_item("look")]), b.payload("inner", anchor=True)]
    )
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a"), b.workflow([outer])])
    bg = b.entry("bg", 30, is_background=True, search_mode="ASI", blocks=[b.workflow([_inner()])])
    result = _render([first], [bg])
    assert result.record["background"] == [
        {"payload_id": "inner", "landing": "anchored", "turn": 1}
    ]
    everything = "".join(v.decode() for k, v in result.files.items() if k.endswith(".md"))
    assert everything.count("Sub-agent: Agent inner") == 1
    assert "Background tasks" not in everything
    assert [r["kind"] for r in result.record["interruptions"]] == ["canceled"]
    logged = [f for f in result.findings if f.event == "WORKFLOW_INTERRUPTED"]
    assert len(logged) == 1


def test_payload_anchored_inside_another_payload_lands_with_it() -> None:
    """A run anchored in another run's workflow is shown inside that run's block, once, and
    lands where that run lands."""
    host = b.payload("host", steps=[b.payload("inner", anchor=True)])
    first = b.entry(
        "e1",
        1,
        search_mode="ASI",
        blocks=[b.answer_block("a"), b.workflow([b.payload("host", anchor=True)])],
    )
    bg1 = b.entry("bg1", 30, is_background=True, search_mode="ASI", blocks=[b.workflow([host])])
    bg2 = b.entry("bg2", 40, is_background=True, search_mode="ASI", blocks=[b.workflow([_inner()])])
    result = _render([first], [bg1, bg2])
    assert [(x["payload_id"], x["landing"], x["turn"]) for x in result.record["background"]] == [
        ("host", "anchored", 1),
        ("inner", "anchored", 1),
    ]
    turn = result.files["turns/turn_0001.md"].decode()
    assert turn.count("Sub-agent: Agent inner") == 1
    assert "Background tasks" not in result.files["conversation.md"].decode()
    assert len(result.record["interruptions"]) == 1


def test_limit_interrupted_turn_without_steps_shows_the_marker() -> None:
    """A step-less limit-interrupted turn: ⏸ on its answer in the turn file and conversation."""
    stopped = b.workflow([], AWAITING, locked_reason=LIMIT)
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("Partial answer"), stopped])
    result = _render([first])
    assert [r["location"] for r in result.record["interruptions"]] == ["turn_0001"]
    marker = "Answer ⏸ limit-interrupted (content stops at the interruption point)\n\nPartial"
    assert f"## {marker}" in result.files["turns/turn_0001.md"].decode()
    assert f"### {marker}" in result.files["conversation.md"].decode()


def test_display_model_against_a_computer_signal_is_reported() -> None:
    """No search_mode, ``pplx_study`` and metadata mode 4: computer, with MODE_SIGNAL_CONFLICT."""
    study = b.entry(
        "e1", 1, search_mode=None, display_model="pplx_study", blocks=[b.answer_block("a")]
    )
    result = _render([study], mode="4")
    assert result.mode == "computer"
    conflicts = [f.fields for f in result.findings if f.event == "MODE_SIGNAL_CONFLICT"]
    assert conflicts and conflicts[0]["mode"] == "computer"
    assert conflicts[0]["conflicting"] == ["study"]


def test_computer_task_url_is_the_url_signal_not_the_listing() -> None:
    """``export …/computer/tasks/<id>``: ``computer_url`` true, no listing mode credited."""
    row = row_from_arg("https://www.perplexity.ai/computer/tasks/abc-123")
    assert row.thread_id == "abc-123" and row.mode is None
    entry = b.entry("e1", 1, search_mode=None, display_model=None, blocks=[b.answer_block("a")])
    page = b.page([entry])
    result = render_thread(
        ThreadInput("abc-123", (RawPage({}, page),), (RawPage({}, page),), listing=row), b.CTX
    )
    signals = result.record["mode_signals"]
    assert result.mode == "computer" and signals["decided_by"] == "computer_signal"
    assert signals["computer_url"] is True and signals["listing_mode"] is None
    assert "/computer/tasks/" in result.record["url"]


def test_step_status_heading_never_shows_a_raw_unknown_status() -> None:
    """An unknown step status is not printed; known unfinished/failed ones read as words."""
    steps = [
        b.step([b.text_item("x")], id="a", status="WORKFLOW_ZZ_FUTURE", title="Odd"),
        b.step([b.text_item("y")], id="b", status="WORKFLOW_FAILED", title="Broken"),
    ]
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a"), b.workflow(steps)])
    turn = _render([first]).files["turns/turn_0001.md"].decode()
    assert "ZZ_FUTURE" not in turn
    assert "**1. Odd**\n" in turn and "**2. Broken** · failed" in turn


def test_stub_turn_has_a_query_line_and_prompts_are_separated() -> None:
    """A stub turn's Query section is not empty; two prompts of a run are two paragraphs."""
    run = b.payload("toolu_P", completed=b.ts(99), objective_chunks=["Summarise A", "Compare B"])
    bg = b.entry("bg", 60, is_background=True, search_mode="ASI", blocks=[b.workflow([run])])
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    stub = b.entry("stub", 100, query="", search_mode="ASI", trigger="subagent_result", blocks=[])
    result = _render([first, stub], [bg])
    turn = result.files["turns/turn_0002.md"].decode()
    assert "## Query\n\n*(sub-agent results: no query of its own)*\n\n" in turn
    assert "### Query\n\n*(sub-agent results" in result.files["conversation.md"].decode()
    assert "Summarise A\n\nCompare B" in turn


def test_streamed_prompt_chunks_are_joined_as_streamed() -> None:
    """Chunks of one streamed prompt (split mid-word or at a space) are not separated."""
    chunks = ["Research the hist", "ory of ", "Rome and", " its roads"]
    run = b.payload("toolu_S", completed=b.ts(99), objective_chunks=chunks)
    bg = b.entry("bg", 60, is_background=True, search_mode="ASI", blocks=[b.workflow([run])])
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    turn = _render([first, _stub("s", 100)], [bg]).files["turns/turn_0002.md"].decode()
    assert "Research the history of Rome and its roads" in turn


def _numbered(section: str) -> list[str]:
    """The items of the first numbered list in ``section``, in order."""
    items: list[str] = []
    for line in section.splitlines():
        head, _, rest = line.partition(". ")
        if head.isdigit() and int(head) == len(items) + 1:
            items.append(rest)
        elif items:
            break
    return items


def _citations_resolve(result: RenderResult) -> None:
    """Every turn's [n] names the same source in its turn file, in conversation.md, and (by
    the by-turn map) in sources.md."""
    sources_md = result.files["sources.md"].decode()
    thread_list = _numbered(sources_md.partition("\n\n")[2])
    mapping = {}
    for line in sources_md.splitlines():
        if line.startswith("- Turn "):
            turn_no, _, pairs = line[len("- Turn ") :].partition(": ")
            mapping[int(turn_no)] = [int(p.split(" → ")[1]) for p in pairs.split(" · ")]
    conversation = result.files["conversation.md"].decode()
    for name, data in result.files.items():
        if not name.startswith("turns/"):
            continue
        number = int(name[len("turns/turn_") : -3])
        text = data.decode()
        if "\n## Citations (" not in text:
            assert number not in mapping
            continue
        own = _numbered(text.split("\n## Citations (", 1)[1].split("\n\n", 1)[1])
        turn_section = conversation.split(f"## Turn {number}\n\n", 1)[1].split("\n## Turn ")[0]
        shown = _numbered(turn_section.split("\n### Citations (", 1)[1].split("\n\n", 1)[1])
        assert shown == own
        assert [thread_list[k - 1] for k in mapping[number]] == own


def test_source_without_url_is_kept_by_name_and_citations_resolve_everywhere() -> None:
    """A cited source with no URL stays (by name) in every list; turn 2's [1] is the same source
    in its turn file, in conversation.md and through sources.md's by-turn map."""
    memo = {"name": "Internal memo", "url": "", "snippet": "not online"}
    first = b.entry("e1", 1, text=[b.final_step("See [1] and [2].", 1, 2)])
    inner = b.final_step("Also [1], [2], [3].", 3, 1)
    answer = orjson.loads(inner["content"]["answer"])
    answer["web_results"].append(memo)
    inner["content"]["answer"] = orjson.dumps(answer).decode()
    second = b.entry("e2", 20, text=[inner])
    result = render_thread(ThreadInput("t", (RawPage({}, b.page([first, second])),)), b.CTX)
    sources = orjson.loads(result.files["sources.json"])["sources"]
    assert [s["name"] for s in sources] == ["Source 1", "Source 2", "Source 3", "Internal memo"]
    turn2 = result.files["turns/turn_0002.md"].decode()
    assert "3. Internal memo — not online" in turn2
    assert "- Turn 2: [1] → 3 · [2] → 1 · [3] → 4" in result.files["sources.md"].decode()
    _citations_resolve(result)


def test_citations_resolve_in_every_scenario() -> None:
    """The crafted scenarios (goldens) keep the same rule."""
    for make in SCENARIOS.values():
        _citations_resolve(render_thread(make(), b.CTX))


def _run_entry(uid: str, pid: str, done_us: int, **extra: Any) -> dict[str, Any]:
    run = b.payload(pid, completed=_iso_us(done_us), steps=[b.step([b.text_item(f"{pid} work")])])
    return b.entry(
        uid, 30, is_background=True, search_mode="ASI", blocks=[b.workflow([run])], **extra
    )


def _iso_us(us: int) -> str:
    second, micro = divmod(us, 1_000_000)
    return _at(second, f"{micro:06d}")


def _stub(uid: str, second: int) -> dict[str, Any]:
    return b.entry(uid, second, query="", search_mode="ASI", trigger="subagent_result", blocks=[])


def test_each_run_lands_on_its_nearest_stub() -> None:
    """Closest pairs first over the thread (a stub may take several runs): a run within the
    window of two stubs lands on the nearer one, whatever the order of runs and stubs."""
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    runs = [_run_entry("bg1", "r1", 104_000_000), _run_entry("bg2", "r2", 100_500_000)]
    result = _render([first, _stub("sa", 100), _stub("sb", 105)], runs)
    assert [(x["payload_id"], x["turn"]) for x in result.record["background"]] == [
        ("r1", 3),
        ("r2", 2),
    ]
    runs.reverse()
    result = _render([first, _stub("sa", 100), _stub("sb", 105)], runs)
    assert {(x["payload_id"], x["turn"]) for x in result.record["background"]} == {
        ("r1", 3),
        ("r2", 2),
    }


def test_window_holds_on_both_sides_of_the_stub() -> None:
    """A run completed up to 10 s *after* its stub was created lands on it; 10.000001 s not."""
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    inside = _render([first, _stub("s", 100)], [_run_entry("bg", "r", 110_000_000)])
    assert inside.record["background"][0]["landing"] == "stub"
    outside = _render([first, _stub("s", 100)], [_run_entry("bg", "r", 110_000_001)])
    assert outside.record["background"][0]["landing"] == "appendix"


def test_background_entry_lock_makes_its_run_limit_interrupted() -> None:
    """``locked_reason`` on the background entry (not on the run) makes an awaiting run
    limit-interrupted; without it the run is only interrupted."""
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    run = b.payload("r", AWAITING, steps=[b.step([b.text_item("x")])])
    for lock, kind in ((LIMIT, "limit_interrupted"), ("", "interrupted")):
        bg = b.entry("bg", 30, is_background=True, blocks=[b.workflow([run])], locked_reason=lock)
        result = _render([first], [bg])
        assert [r["kind"] for r in result.record["interruptions"]] == [kind]


def test_background_entry_without_nested_runs_is_one_payload_of_its_own() -> None:
    """A background entry whose workflow holds no nested run is one payload, by its own id."""
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    bg = b.entry(
        "bg-own", 30, is_background=True, blocks=[b.workflow([b.step([b.text_item("own")])])]
    )
    result = _render([first], [bg])
    assert result.record["background"] == [
        {"payload_id": "bg-own", "landing": "appendix", "turn": None}
    ]
    assert "own" in result.files["conversation.md"].decode().split("Background tasks")[1]


def test_stub_turns_lock_reason_makes_its_run_limit_interrupted() -> None:
    """The stub turn is the run's notification: its ``locked_reason`` counts for the run."""
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    run = b.payload("r", AWAITING, completed=b.ts(100), steps=[b.step([b.text_item("x")])])
    bg = b.entry("bg", 30, is_background=True, search_mode="ASI", blocks=[b.workflow([run])])
    stub = {**_stub("s", 100), "locked_reason": LIMIT}
    result = _render([first, stub], [bg])
    assert [(r["location"], r["kind"]) for r in result.record["interruptions"]] == [
        ("turn_0002/subagent_stub", "limit_interrupted")
    ]


def test_stub_turns_lock_reason_counts_for_a_run_shown_inside_another_runs_block() -> None:
    """A run anchored in another run's workflow lands with it; when that run lands on a locked
    stub turn, the stub's lock counts for the inner run too (it is shown there, the stub turn
    is its notification), not only for the run placed on the stub directly."""
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    inner = b.payload("inner", AWAITING, steps=[b.step([b.text_item("x")])])
    outer = b.payload(
        "outer", completed=b.ts(100), steps=[b.payload("inner", AWAITING, anchor=True)]
    )
    bg = b.entry("bg", 30, is_background=True, search_mode="ASI", blocks=[b.workflow([inner])])
    host = b.entry("bg2", 30, is_background=True, search_mode="ASI", blocks=[b.workflow([outer])])
    for lock, kind in ((LIMIT, "limit_interrupted"), ("", "interrupted")):
        stub = {**_stub("s", 100), "locked_reason": lock}
        result = _render([first, stub], [bg, host])
        landed = [(x["payload_id"], x["landing"], x["turn"]) for x in result.record["background"]]
        assert landed == [("inner", "stub", 2), ("outer", "stub", 2)]
        assert [(r["location"], r["kind"]) for r in result.record["interruptions"]] == [
            ("turn_0002/subagent_stub", kind)
        ]
        turn = result.files["turns/turn_0002.md"].decode()
        assert turn.count("#### Sub-agent: Agent inner") == 1
        note = " ⏸ limit-interrupted" if lock else " ⏸ interrupted"
        assert f"#### Sub-agent: Agent inner{note}" in turn


def test_subagent_result_turn_with_its_own_steps_is_no_stub() -> None:
    """A ``subagent_result`` turn that has workflow steps of its own takes no background run."""
    first = b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a")])
    working = b.workflow([b.step([b.text_item("continuing")])])
    turn = b.entry(
        "s", 100, query="", search_mode="ASI", trigger="subagent_result", blocks=[working]
    )
    result = _render([first, turn], [_run_entry("bg", "r", 100_000_000)])
    assert result.record["background"][0]["landing"] == "appendix"
    assert (
        _render([first, _stub("s", 100)], [_run_entry("bg", "r", 100_000_000)]).record[
            "background"
        ][0]["landing"]
        == "stub"
    )
