"""The ask model table, mode/model resolution and request envelope, on the real models config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pplx_archiver.core.ask.asking import (
    PINNED_CONFIG,
    ModelChoice,
    ask_body,
    follow_up_members,
    follow_up_of,
    mode_of_entry,
    parse_models_config,
    refuse_computer_follow_up,
    resolve_models,
    table_lines,
)
from pplx_archiver.errors import ConfigError, PayloadError

REAL = Path(__file__).resolve().parents[2] / "samples" / "real"
TABLE = parse_models_config(json.loads((REAL / "models_config_1.json").read_text()))


def test_defaults_per_mode_come_from_the_config() -> None:
    """Without --model each mode takes the config's default model."""
    assert resolve_models(TABLE, "search", ()).model_preference == "pplx_pro"
    assert resolve_models(TABLE, "deep-research", ()).model_preference == "pplx_alpha"
    assert resolve_models(TABLE, "study", ()).model_preference == "pplx_study"


def test_council_takes_two_or_three_search_models() -> None:
    """Council sends the council model and 2-3 member models; other counts are refused."""
    choice = resolve_models(TABLE, "council", ("gpt55_thinking", "gemini31pro_high"))
    assert choice == ModelChoice(
        "council", "pplx_agentic_research", ("gpt55_thinking", "gemini31pro_high")
    )
    with pytest.raises(ConfigError, match="2 to 3 times"):
        resolve_models(TABLE, "council", ("gpt55_thinking",))
    pinned = parse_models_config(PINNED_CONFIG)
    assert len(resolve_models(pinned, "council", ()).compare_models) == 3  # the contract's 3


def test_unknown_model_lists_the_valid_ids() -> None:
    """An unknown id is a ConfigError that names the id and the valid ones of the mode."""
    with pytest.raises(ConfigError) as caught:
        resolve_models(TABLE, "deep-research", ("pplx_pro",))
    message = str(caught.value)
    assert "'pplx_pro'" in message and "pplx_alpha" in message
    with pytest.raises(ConfigError, match="computer"):
        resolve_models(TABLE, "computer", ())


def test_table_lists_each_ask_mode_with_its_default() -> None:
    """The printed table names the source and marks each mode's default with a star."""
    lines = table_lines(TABLE, "live")
    assert lines[0] == "models (live)"
    assert any(line.split()[:2] == ["deep-research", "pplx_alpha*"] for line in lines)
    assert any(line.split()[:2] == ["search", "pplx_pro*"] for line in lines)
    assert not any("pplx_asi" in line for line in lines)  # computer mode is not offered


def test_envelope_for_follow_up_in_a_space() -> None:
    """The body carries the model, filters, follow-up ids and the space in the known fields."""
    choice = resolve_models(TABLE, "council", ("gpt55_thinking", "claude48opusthinking"))
    body = ask_body(
        "q",
        choice,
        frontend_uuid="f",
        frontend_context_uuid="c",
        recency="week",
        incognito=True,
        follow_up=follow_up_of({"entries": [{"backend_uuid": "a"}, {"backend_uuid": "b"}]}),
        collection_uuid="s",
    )
    params = body["params"]
    assert body["query_str"] == "q"
    assert params["model_preference"] == "pplx_agentic_research"
    assert params["compare_model_preferences"] == ["gpt55_thinking", "claude48opusthinking"]
    assert params["search_recency_filter"] == "WEEK" and params["is_incognito"] is True
    assert params["last_backend_uuid"] == "b" and params["query_source"] == "followup"
    assert params["target_collection_uuid"] == "s"


def test_follow_up_of_bad_thread_body() -> None:
    """A thread body without entries is a PayloadError naming the path."""
    with pytest.raises(PayloadError, match="entries"):
        follow_up_of({"entries": []})


def test_mode_of_entry() -> None:
    """The follow-up keeps the thread's mode, read from search_mode."""
    assert mode_of_entry({"search_mode": "AGENTIC_RESEARCH"}) == "council"
    assert mode_of_entry({"search_mode": "ASI"}) is None


def _council_entry(models: list[str], *, plain: bool) -> dict[str, object]:
    if plain:
        step = {"step_type": "COUNCIL_RESEARCH", "content": {"models": models}}
        return {"search_mode": "AGENTIC_RESEARCH", "text": json.dumps([step])}
    items = [
        {
            "type": "WORKFLOW_ITEM_WORKFLOW",
            "payload": {"workflow_payload": {"mode": "LLM_COUNCIL", "model": m}},
        }
        for m in models
    ]
    workflow = {"workflow_block": {"steps": [{"items": items}]}}
    return {"search_mode": "AGENTIC_RESEARCH", "blocks": [workflow]}


def test_council_follow_up_asks_with_the_threads_own_members() -> None:
    """The newest council turn names the members (plain step or blocks); ids the config no
    longer offers are dropped, and fewer than two fall back to the defaults (())."""
    two = ["gpt55_thinking", "gemini31pro_high"]
    for plain in (True, False):
        body = {
            "entries": [
                _council_entry(["claude48opusthinking"] * 3, plain=plain),
                _council_entry(two, plain=plain),
            ]
        }
        assert follow_up_members(TABLE, body) == tuple(two)
    gone = {"entries": [_council_entry(["gpt55_thinking", "retired_model"], plain=True)]}
    assert follow_up_members(TABLE, gone) == ()
    assert follow_up_members(TABLE, {"entries": [{"search_mode": "SEARCH"}]}) == ()


@pytest.mark.parametrize(
    "body",
    [
        {"entries": [{"search_mode": "ASI"}]},
        {"entries": [{"display_model": "pplx_asi_opus"}]},
        {"entries": [{}], "thread_metadata": {"mode": "4"}},
    ],
)
def test_follow_up_into_a_computer_task_is_refused(body: dict[str, object]) -> None:
    """A computer thread is never continued in another mode: one clear line."""
    with pytest.raises(ConfigError, match="computer task cannot be continued") as info:
        refuse_computer_follow_up(body, "abc")
    assert "\n" not in str(info.value)
    refuse_computer_follow_up({"entries": [{"search_mode": "SEARCH"}]}, "abc")
