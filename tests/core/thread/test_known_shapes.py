"""Every raw shape the repository holds renders without an ``UNKNOWN_*`` placeholder, except
the deliberate ones (docs/dev/formats.md, "Shapes and placeholders")."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from pplx_archiver.core.thread.model import RawPage, RenderResult, ThreadInput
from pplx_archiver.core.thread.plainsteps import KNOWN_PLAIN
from pplx_archiver.core.thread.render import render_thread
from tests.core import builders as b
from tests.core import simcorpus
from tests.core.scenarios import SCENARIOS
from tests.samples import REAL

# (source, step or item type): placeholders that test the placeholder itself
DELIBERATE = {("scenario search_plain", "BRAND_NEW_STEP")}
PLACEHOLDER = b"Unrecognised item type"
WEB = {"name": "Example", "url": "https://example.com/a", "snippet": "s"}
ITEM_PAYLOADS: dict[str, tuple[str, dict[str, Any]]] = {
    "WORKFLOW_ITEM_TEXT": ("text_payload", {"text": "t", "variant": "answer"}),
    "WORKFLOW_ITEM_SOURCES": ("sources_payload", {"sources": [WEB], "assets": []}),
    "WORKFLOW_ITEM_QUERIES": ("queries_payload", {"queries": ["q"]}),
    "WORKFLOW_ITEM_TABLE": ("table_payload", {"columns": ["a"], "rows": [{"a": 1}]}),
    "WORKFLOW_ITEM_TODO_LIST": (
        "todo_list_payload",
        {"title": "t", "items": [{"description": "d", "status": "COMPLETED"}]},
    ),
    "WORKFLOW_ITEM_USER_QUESTIONS": ("user_questions_payload", {"questions": ["why?"]}),
    "WORKFLOW_ITEM_USER_RESPONSE": ("user_response_payload", {"responses": ["yes"]}),
    "WORKFLOW_ITEM_CONTENT": ("content_payload", {"entities": [{"description": "x"}]}),
    "WORKFLOW_ITEM_WORKFLOW": ("workflow_payload", {"id": "w", "status": "WORKFLOW_COMPLETED"}),
}


def _one(*entries: dict[str, Any]) -> ThreadInput:
    page = b.page(list(entries))
    return ThreadInput("t", (RawPage({}, page),), (RawPage({}, page),))


def _eras() -> Iterator[tuple[str, ThreadInput]]:
    """One entry in each shape of docs/dev/formats.md, "The shapes"."""
    base = {"uuid": "e1", "backend_uuid": "e1", "query_str": "q", "thread_url_slug": "t"}
    created = {"entry_created_datetime": b.ts(1)}
    obj = {"answer": "Prose answer [1]", "web_results": [WEB]}
    yield "early 2023", _one({**base, **created, "gpt4": True, "text": orjson.dumps(obj).decode()})
    yield "2023", _one({**base, **created, "mode": "copilot", "text": orjson.dumps(obj).decode()})
    final = b.final_step("Steps answer [1]", 1)
    steps = [{"step_type": "INITIAL_QUERY", "content": {"query": "q"}}, final]
    yield (
        "2024",
        _one({**base, **created, "display_model": "turbo", "text": orjson.dumps(steps).decode()}),
    )
    sources = {
        "intended_usage": "sources_answer_mode",
        "sources_mode_block": {"web_results": [WEB]},
    }
    blocks = [b.answer_block("Blocks answer [1]"), sources]
    yield "2025", _one({**base, **created, "mode": "COPILOT", "blocks": blocks})
    yield "2026", _one(b.entry("e1", 1, text=[final], blocks=[b.answer_block("a")]))


def _types() -> Iterator[tuple[str, ThreadInput]]:
    """Every known plain step type and every workflow item type, one thread each."""
    for kind in sorted(KNOWN_PLAIN - {"FINAL"}):
        step = {"step_type": kind, "content": {"goal_id": "0", "text": "x"}, "uuid": kind}
        entry = b.entry("e1", 1, text=[step, b.final_step("a")])
        yield f"plain {kind}", _one(entry)
    for kind, (key, payload) in sorted(ITEM_PAYLOADS.items()):
        item = {"id": "i", "type": kind, "payload": {key: payload}}
        workflow = b.workflow([b.step([item])])
        yield (
            f"item {kind}",
            _one(b.entry("e1", 1, search_mode="ASI", blocks=[b.answer_block("a"), workflow])),
        )


def _sources() -> Iterator[tuple[str, ThreadInput]]:
    for path in sorted(REAL.glob("thread_*.json")):
        body = orjson.loads(path.read_bytes())
        yield f"sample {path.name}", ThreadInput("t", (RawPage({}, body),))
    for name, make in sorted(SCENARIOS.items()):
        yield f"scenario {name}", make()
    yield from _eras()
    yield from _types()
    for number, (inp, _truth) in enumerate(simcorpus.account(300, 7)):
        yield f"simulated thread {number}", inp


def _unknown(result: RenderResult) -> set[str]:
    return {
        str(f.fields.get("step_type")) for f in result.findings if f.event.startswith("UNKNOWN_")
    }


@pytest.mark.heavy  # pure CPU: run untraced (docs/dev/architecture.md, the gate)
def test_every_shape_renders_without_unintended_placeholders() -> None:
    """Samples, scenarios, format eras, every step and item type and the simulated account."""
    seen: set[tuple[str, str]] = set()
    kinds: collections.Counter[str] = collections.Counter()
    for source, inp in _sources():
        result = render_thread(inp, b.CTX)
        kinds[source.split(" ")[0]] += 1
        found = {(source, kind) for kind in _unknown(result)}
        seen |= found
        shown = any(PLACEHOLDER in v for k, v in result.files.items() if k.endswith(".md"))
        assert shown == bool(found), source
    assert seen == DELIBERATE
    assert kinds["sample"] >= 4 and kinds["simulated"] == 300 and kinds["plain"] >= 20


@pytest.mark.parametrize("kind", sorted(ITEM_PAYLOADS))
def test_item_types_of_the_contract_are_all_known(kind: str) -> None:
    """docs/dev/api.md §5 names each of these item types."""
    api = (REAL.parent.parent.parent / "docs" / "dev" / "api.md").read_text("utf-8")
    assert f"`{kind}`" in api
