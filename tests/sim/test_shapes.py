"""Shape conformance: simulator bodies have the real captures' keys and value types."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.state import AccountState
from tests.samples import REAL
from tests.sim.conftest import BLOCKS, PARAMS


def _load(name: str) -> Any:
    return json.loads((REAL / name).read_text(encoding="utf-8"))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def type_mismatches(real: Any, sim: Any, path: str = "$") -> list[str]:
    """Paths where both sides hold a non-null value of different JSON types (recursive)."""
    if real is None or sim is None:
        return []
    if _kind(real) != _kind(sim):
        return [f"{path}: real {_kind(real)} vs sim {_kind(sim)}"]
    out: list[str] = []
    if isinstance(real, dict):
        for key in real.keys() & sim.keys():
            out += type_mismatches(real[key], sim[key], f"{path}.{key}")
    elif isinstance(real, list) and real and sim:
        out += type_mismatches(real[0], sim[0], f"{path}[0]")
    return out


def missing_keys(real: dict[str, Any], sim: dict[str, Any]) -> set[str]:
    """Keys of the real object that the simulated one lacks."""
    return set(real) - set(sim)


def test_helper_detects_type_and_key_differences() -> None:
    """The comparison helper reports a changed type and a missing key."""
    assert type_mismatches({"a": {"b": 1}}, {"a": {"b": "1"}}) == ["$.a.b: real number vs sim str"]
    assert type_mismatches({"a": [{"b": True}]}, {"a": [{"b": False}]}) == []
    assert missing_keys({"a": 1, "b": 2}, {"a": 1}) == {"b"}


def _blocks_of(entry: dict[str, Any]) -> dict[str, Any]:
    return {b["intended_usage"]: b for b in entry["blocks"]}


@pytest.fixture
def thread_ids() -> dict[str, str]:
    """One thread id per mode of the default account (two-turn threads preferred)."""
    state = AccountState(SimConfig())
    out: dict[str, str] = {}
    for i in range(300):
        plan = state.plan(i)
        if not plan.no_search_mode and not plan.mode_switch:
            out.setdefault(plan.kind, plan.uuid)
    return out


@pytest.mark.parametrize(
    ("sample", "kind"),
    [
        ("thread_search_1.json", "search"),
        ("thread_research_1.json", "deep-research"),
        ("thread_blocks_computer_sim_2_trimmed.json", "computer"),
        ("thread_blocks_council_sim_1_prefix.json", "council"),
    ],
)
async def test_thread_detail_matches_real_shape(
    make_client: Any, thread_ids: dict[str, str], sample: str, kind: str
) -> None:
    """Top level, thread_metadata, entry keys and block payloads have the real keys and types."""
    real = _load(sample)
    client = make_client()
    sim = (await client.get(f"/rest/thread/{thread_ids[kind]}", params=BLOCKS)).json()
    assert missing_keys(real, sim) == set()
    assert missing_keys(real["thread_metadata"], sim["thread_metadata"]) == set()
    real_entry, sim_entry = real["entries"][0], sim["entries"][-1]
    assert missing_keys(real_entry, sim_entry) == set()
    assert type_mismatches(real["thread_metadata"], sim["thread_metadata"]) == []
    assert type_mismatches({k: v for k, v in real_entry.items() if k != "blocks"}, sim_entry) == []
    real_blocks, sim_blocks = _blocks_of(real_entry), _blocks_of(sim_entry)
    for usage in ("plan", "workflow_root", "web_results", "ask_text"):
        if usage in real_blocks:
            assert usage in sim_blocks, usage
            assert type_mismatches(real_blocks[usage], sim_blocks[usage], usage) == []
    real_steps = real_blocks["workflow_root"]["workflow_block"]["steps"]
    sim_steps = sim_blocks["workflow_root"]["workflow_block"]["steps"]
    assert missing_keys(real_steps[0], sim_steps[0]) <= {"batch_step_id"}


@pytest.mark.parametrize(
    "sample", ["list_ask_threads_1.json", "list_ask_threads_search_term_2.json"]
)
async def test_list_ask_threads_matches_real_shape(make_client: Any, sample: str) -> None:
    """Listing items carry every real key (except search-only ones) with the same types."""
    real = _load(sample)
    client = make_client()
    sim = (await client.post("/rest/thread/list_ask_threads", params=PARAMS, json={})).json()
    assert isinstance(sim, list) and isinstance(real, list)
    search_only = {"matched_entry_uuid", "collection"}
    assert missing_keys(real[0], sim[0]) - search_only == set()
    for item in real:
        assert type_mismatches(item, sim[0]) == []


async def test_collections_match_real_shape(make_client: Any) -> None:
    """Spaces list, get_collection and collection threads carry the real keys and types."""
    client = make_client()
    spaces = (await client.get("/rest/collections/list_user_collections")).json()
    real_spaces = _load("collections_list_user_collections_1.json")
    assert missing_keys(real_spaces[0], spaces[0]) == set()
    assert type_mismatches(real_spaces[0], spaces[0]) == []
    slug = max(spaces, key=lambda s: s["thread_count"])["slug"]
    one = await client.get("/rest/collections/get_collection", params={"collection_slug": slug})
    real_one = _load("collections_get_collection_1.json")
    assert missing_keys(real_one, one.json()) == set()
    assert type_mismatches(real_one, one.json()) == []
    threads = await client.get(
        "/rest/collections/list_collection_threads", params={"collection_slug": slug}
    )
    real_threads = _load("collections_list_collection_threads_1.json")
    unread = {"article_number", "hero_offset", "layout", "summary", "description", "access",
              "author_name"}  # fmt: skip
    assert missing_keys(real_threads[0], threads.json()[0]) - unread == set()
    assert type_mismatches(real_threads[0], threads.json()[0]) == []


async def test_models_config_matches_real_shape(make_client: Any) -> None:
    """Models config has the real top-level keys and model entry shape."""
    client = make_client()
    sim = (await client.get("/rest/models/config/v2")).json()
    real = _load("models_config_1.json")
    assert missing_keys(real, sim) == set()
    assert missing_keys(real["models"]["turbo"], sim["models"]["turbo"]) == set()
    assert type_mismatches(real["search_config"][0], sim["search_config"][0]) == []
