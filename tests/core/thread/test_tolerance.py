"""Per-entry tolerance: the real samples with one entry or one block mutated still archive.

Every property starts from a real captured thread (``tests/samples/real``), changes one
entry or one block (drop a key, change a type, an unknown enum value, an unknown block
kind, a plain-text ``text``) and checks that the thread renders, that every intact entry's
turn renders exactly as before, and that the mutated entry is degraded (a visible note, an
``ENTRY_DEGRADED`` finding, ``counts.degraded_turns`` in the record) where its mutation
broke a value the decoder reads.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.model import RawPage, RenderContext, RenderResult, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from tests.samples import REAL

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CTX = RenderContext(exported_at="2026-01-01T00:00:00Z")
SAMPLES = (
    "thread_search_1.json",
    "thread_research_1.json",
    "thread_blocks_computer_sim_2_trimmed.json",
    "thread_blocks_council_sim_1_prefix.json",
)
# Entry fields the decoder reads as scalars: an array there can only be a decoding failure.
READ_SCALARS = (
    "backend_uuid",
    "uuid",
    "entry_created_datetime",
    "entry_updated_datetime",
    "query_str",
    "search_mode",
    "display_model",
    "user_selected_model",
    "status",
    "thread_title",
    "thread_url_slug",
    "context_uuid",
    "author_username",
)
ENUMS = ("search_mode", "status", "display_model", "mode", "user_selected_model", "step_type")


def _body(name: str) -> dict[str, Any]:
    body = orjson.loads((REAL / name).read_bytes())
    assert isinstance(body, dict)
    if name == "thread_search_1.json":  # a third turn: a copy of the first, later
        third = copy.deepcopy(body["entries"][0])
        third["uuid"] = third["backend_uuid"] = "00000000-0000-4000-8000-000000000003"
        third["entry_created_datetime"] = "2030-01-01T00:00:00.000000+00:00"
        third["query_str"] = "A third question"
        body["entries"].append(third)
    return body


def _render(body: dict[str, Any]) -> RenderResult:
    page = RawPage({"method": "GET", "path": "/rest/thread/x", "params": []}, body)
    return render_thread(ThreadInput("x", (page,), (page,)), CTX)


def _turns_by_key(result: RenderResult, body: dict[str, Any]) -> dict[str, str]:
    """Turn file text (without its numbered heading) of each decoded entry, by entry key."""
    page = RawPage({}, body)
    thread = decode_thread((page,), (page,))
    out: dict[str, str] = {}
    for number, entry in enumerate(thread.entries, 1):
        text = result.files[f"turns/turn_{number:04d}.md"]
        out[entry.key] = text.decode().split("\n", 1)[1]
    return out


def _check(name: str, index: int, mutate: Any, broken: bool) -> None:
    body = _body(name)
    base = _turns_by_key(_render(body), body)
    entries = body["entries"]
    victim = entries[index % len(entries)]
    victim_key = str(victim.get("backend_uuid") or victim.get("uuid"))
    mutate(victim)
    after = _render(body)  # never raises: one entry never costs the thread
    intact = {k: t for k, t in base.items() if k != victim_key}
    now = _turns_by_key(after, body)
    for uuid, text in intact.items():
        assert now[uuid] == text, f"intact entry {uuid} rendered differently"
    degraded = [f for f in after.findings if f.event == "ENTRY_DEGRADED"]
    if broken:
        assert degraded, "a broken value was not reported"
        assert after.record["counts"]["degraded_turns"] == 1
        assert any("⚠ Partly unreadable" in t.decode() for t in after.files.values())
        assert all(f.fields["json_path"].startswith("blocks_pages[0].entries[") or
                   f.fields["json_path"].startswith("plain_pages[0].entries[")
                   for f in degraded)  # fmt: skip
    else:
        assert not degraded


@SETTINGS
@given(
    name=st.sampled_from(SAMPLES),
    index=st.integers(min_value=0, max_value=5),
    key=st.sampled_from(READ_SCALARS),
    value=st.sampled_from([["x"], {"a": 1}, [1, [2]]]),
)
def test_wrong_type_degrades_only_that_entry(name: str, index: int, key: str, value: Any) -> None:
    """A read field of the wrong type degrades its entry; the other turns render as before."""

    def mutate(entry: dict[str, Any]) -> None:
        entry[key] = value

    _check(name, index, mutate, broken=True)


@SETTINGS
@given(name=st.sampled_from(SAMPLES), index=st.integers(min_value=0, max_value=5), data=st.data())
def test_dropped_key_never_fails(name: str, index: int, data: st.DataObject) -> None:
    """Dropping any key of one entry keeps the thread and every other turn unchanged."""
    body = _body(name)
    keys = sorted(body["entries"][index % len(body["entries"])])
    key = data.draw(st.sampled_from(keys))

    def mutate(entry: dict[str, Any]) -> None:
        entry.pop(key, None)

    _check(name, index, mutate, broken=False)


@SETTINGS
@given(
    name=st.sampled_from(SAMPLES),
    index=st.integers(min_value=0, max_value=5),
    key=st.sampled_from(ENUMS),
)
def test_unknown_enum_value_never_fails(name: str, index: int, key: str) -> None:
    """An enum value never seen before is not a decoding failure; the thread renders."""

    def mutate(entry: dict[str, Any]) -> None:
        entry[key] = "ZZ_NEVER_SEEN"

    _check(name, index, mutate, broken=False)


@SETTINGS
@given(name=st.sampled_from(SAMPLES), index=st.integers(min_value=0, max_value=5))
def test_plain_text_answer_is_degraded_but_shown(name: str, index: int) -> None:
    """A ``text`` that is prose, not JSON, degrades its turn and is its answer without blocks."""

    def mutate(entry: dict[str, Any]) -> None:
        entry["text"] = "Just a plain answer, no JSON at all."

    _check(name, index, mutate, broken=True)
    body = _body(name)
    entries = body["entries"]
    entries[index % len(entries)]["text"] = "Just a plain answer, no JSON at all."
    del entries[index % len(entries)]["blocks"]  # no schematized answer to prefer
    files = _render(body).files
    assert any(
        b"Just a plain answer, no JSON at all." in v for k, v in files.items() if "turn" in k
    )


@SETTINGS
@given(
    name=st.sampled_from(SAMPLES),
    index=st.integers(min_value=0, max_value=5),
    pick=st.integers(min_value=0),
    how=st.sampled_from(["string", "inner"]),
)
def test_one_broken_block_degrades_its_entry(name: str, index: int, pick: int, how: str) -> None:
    """A block that is a string, or whose payload is, degrades only its entry."""
    body = _body(name)
    blocks = body["entries"][index % len(body["entries"])]["blocks"]
    at = pick % len(blocks)
    usage = blocks[at].get("intended_usage", "")
    payload_keys = [k for k in blocks[at] if k.endswith("_block")]
    known = usage in (
        "ask_text",
        "workflow_root",
        "web_results",
        "pro_search_steps",
        "unified_assets",
        "plan",
        "sources_answer_mode",
    ) or (usage.startswith("ask_text_") and usage.endswith("_markdown"))

    def mutate(entry: dict[str, Any]) -> None:
        if how == "string" or not payload_keys:
            entry["blocks"][at] = "a block that is a string"
        else:
            entry["blocks"][at][payload_keys[0]] = "not an object"

    broken = how == "string" or not payload_keys or (known and bool(payload_keys))
    _check(name, index, mutate, broken=broken)


@SETTINGS
@given(name=st.sampled_from(SAMPLES), index=st.integers(min_value=0, max_value=5))
def test_unknown_block_kind_changes_nothing(name: str, index: int) -> None:
    """A block of a kind never seen before is ignored: every file renders as before."""
    body = _body(name)
    before = _render(body).files
    entry = body["entries"][index % len(body["entries"])]
    entry["blocks"].insert(0, {"intended_usage": "zz_future", "zz_future_block": {"x": [1]}})
    assert _render(body).files == before


def test_control_characters_never_reach_markdown() -> None:
    """NUL, BEL, ESC and DEL in a query or answer are shown as control pictures in .md files."""
    body = _body("thread_search_1.json")
    body["entries"][0]["query_str"] = "a\x00b\x07c\x1bd\re\x7f"
    body["entries"][1]["thread_title"] = "t\x00"
    for block in body["entries"][0]["blocks"]:
        if block.get("intended_usage") == "ask_text":
            block["markdown_block"]["answer"] = "x\x1b[31mred\x00"
    files = _render(body).files
    for name, data in files.items():
        if name.endswith(".md"):
            assert not any((b < 0x20 and b not in (0x09, 0x0A)) or b == 0x7F for b in data), name
    assert "a␀b␇c␛d\ne␡" in files["turns/turn_0001.md"].decode()  # CR: a line break
