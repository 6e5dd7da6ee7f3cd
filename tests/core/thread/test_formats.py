"""Historical payload shapes (docs/dev/formats.md): each decodes to its answer and sources."""

from __future__ import annotations

from typing import Any

import orjson

from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.model import RawPage, RenderContext, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.sim.account import plan_thread, shape_era
from pplx_archiver.sim.build import answer_of
from pplx_archiver.sim.build import entry as sim_entry
from tests.core import builders as b

WEB = {"name": "Example", "url": "https://example.com/a", "snippet": "s"}


def _entry(**fields: Any) -> dict[str, Any]:
    entry = b.entry("e1", 1)
    entry.pop("text", None)
    entry.pop("blocks", None)
    entry.update(fields)
    return entry


def _one(entry: dict[str, Any]) -> Any:
    (decoded,) = decode_thread((RawPage({}, b.page([entry])),), ()).entries
    return decoded


def test_2023_text_object_with_prose_answer() -> None:
    """Shape 1: ``text`` is a JSON object whose ``answer`` is Markdown prose (not JSON again)."""
    text = orjson.dumps({"answer": "Hello is a greeting[1].", "web_results": [WEB]}).decode()
    entry = _one(_entry(text=text, mode="concise", related_queries=["What is hi"]))
    assert entry.final_answer == "Hello is a greeting[1]."
    assert [w.url for w in entry.final_web_results] == [WEB["url"]]
    assert entry.related == ("What is hi",)
    assert entry.problems == ()


def test_2024_text_steps_with_final_json_again() -> None:
    """Shape 2: ``text`` is a JSON list of steps; FINAL ``content.answer`` is JSON again."""
    steps = [
        {"step_type": "INITIAL_QUERY", "content": {"query": "q"}},
        {"step_type": "SEARCH_RESULTS", "content": {"web_results": [WEB]}},
        b.final_step("The answer.", 3),
    ]
    entry = _one(_entry(text=orjson.dumps(steps).decode(), mode="copilot"))
    assert entry.final_answer == "The answer."
    assert [s.step_type for s in entry.steps] == ["INITIAL_QUERY", "SEARCH_RESULTS", "FINAL"]
    assert entry.problems == ()


def test_2025_blocks_only_with_sources_answer_mode() -> None:
    """Shape 3: no ``text``; the answer is an ask_text block, sources a sources_answer_mode one."""
    blocks = [
        {"intended_usage": "ask_text", "markdown_block": {"answer": "From blocks.", "chunks": []}},
        {"intended_usage": "sources_answer_mode", "sources_mode_block": {"web_results": [WEB]}},
    ]
    entry = _one(_entry(blocks=blocks, sources={"sources": ["web"]}, display_model="turbo"))
    assert entry.blocks.answer == "From blocks."
    assert [w.url for w in entry.blocks.web_results] == [WEB["url"]]
    assert entry.problems == ()


def test_related_queries_are_rendered_in_the_turn() -> None:
    """``related_queries`` (strings or objects with text) are listed in the turn file."""
    entry = _entry(
        text=orjson.dumps("Prose answer.").decode(),
        related_queries=["First *idea*", {"text": "Second"}, 7],
    )
    result = render_thread(ThreadInput("t", (RawPage({}, b.page([entry])),)), b.CTX)
    turn = result.files["turns/turn_0001.md"].decode()
    assert "## Related questions\n\n- First \\*idea\\*\n- Second\n" in turn


def test_old_modes_classify_as_search() -> None:
    """``concise``/``copilot`` entry modes and the display model ``turbo`` map to search."""
    entry = _entry(text=orjson.dumps("A.").decode(), mode="concise", display_model="turbo")
    entry.pop("search_mode", None)
    result = render_thread(ThreadInput("t", (RawPage({}, b.page([entry])),)), b.CTX)
    assert result.mode == "search"


def test_text_slug_thread_keeps_its_uuid_in_front_matter_and_folder() -> None:
    """An old thread addressed by its text slug shows its uuid, not the slug; times are UTC."""
    uuid = "d236db28-526f-49a1-9a21-faa33c3ad928"
    entry = _entry(
        text=orjson.dumps("A.").decode(), thread_url_slug="what-is-x-Ab3dE5fG7hI9jK1lM3nO5p"
    )
    entry["uuid"] = entry["backend_uuid"] = uuid
    entry["updated_datetime"] = "2024-03-01T10:00:00.5+02:00"
    result = render_thread(ThreadInput("what-is-x", (RawPage({}, b.page([entry])),)), b.CTX)
    front = result.files["conversation.md"].decode().split("---")[1]
    assert f'uuid: "{uuid}"' in front
    assert result.dir_name.endswith("_d236db28")
    created = next(line for line in front.splitlines() if line.startswith("created:"))
    updated = next(line for line in front.splitlines() if line.startswith("updated:"))
    assert created.endswith('Z"') and updated == 'updated: "2024-03-01T08:00:00.500000Z"'


def test_step_constants_are_shown_as_labels() -> None:
    """Plain step types such as INITIAL_QUERY show as labels in the language of the archive."""
    steps = [
        {"step_type": "INITIAL_QUERY", "content": {"query": "q"}},
        {"step_type": "PROMPT_INPUT", "content": {"inputs": []}},
        b.final_step("A.", 1),
    ]
    entry = _entry(text=orjson.dumps(steps).decode())
    inp = ThreadInput("t", (RawPage({}, b.page([entry])),))
    result = render_thread(inp, b.CTX)
    turn = result.files["turns/turn_0001.md"].decode()
    assert "**Initial query**" in turn and "INITIAL" not in turn
    assert not [f for f in result.findings if f.event == "UNKNOWN_STEP_TYPE"]
    zh = render_thread(inp, RenderContext(exported_at=b.CTX.exported_at, lang="zh"))
    assert "**初始提问**" in zh.files["turns/turn_0001.md"].decode()


def test_early_2023_entry_with_only_the_gpt4_flag() -> None:
    """Early 2023: no ``mode``, no display model, only ``gpt4``; a search turn whose model
    shows as ``gpt4`` when the flag is set."""
    text = orjson.dumps({"answer": "Prose[1].", "web_results": [WEB], "chunks": []}).decode()
    entry = _entry(text=text, gpt4=True, search_focus="internet")
    for key in ("search_mode", "display_model"):
        entry.pop(key)
    decoded = _one(entry)
    assert (decoded.final_answer, decoded.display_model, decoded.problems) == (
        "Prose[1].",
        "gpt4",
        (),
    )
    result = render_thread(ThreadInput("t", (RawPage({}, b.page([entry])),)), b.CTX)
    assert result.mode == "search"
    assert 'model: "gpt4"' in result.files["conversation.md"].decode()
    assert WEB["url"] in result.files["sources.md"].decode()
    assert _one({**entry, "gpt4": False}).display_model == ""


def test_simulated_oldest_threads_have_the_early_2023_shape() -> None:
    """The simulator's oldest plain search threads use the early-2023 shape (era switch)."""
    size = 400
    plans = [plan_thread(7, i, size) for i in range(int(size * 0.95), size)]
    early = [p for p in plans if p.shape == "2023-early"]
    assert early and all(p.shape in ("2023-early", "") for p in plans)
    assert shape_era(int(size * 0.9), size, "search", (), ()) == "2023"
    plan = early[0]
    entries = [sim_entry(plan, turn, False, lambda _a: "", None) for turn in plan.turns]
    assert all("mode" not in e and "display_model" not in e for e in entries)
    assert entries[0]["gpt4"] is True and isinstance(orjson.loads(entries[0]["text"]), dict)
    result = render_thread(ThreadInput("t", (RawPage({}, b.page(entries)),)), b.CTX)
    assert result.mode == "search" and "degraded" not in result.record
    turn = result.files["turns/turn_0001.md"].decode()
    assert answer_of(plan, plan.turns[0]).split("\n")[0] in turn
