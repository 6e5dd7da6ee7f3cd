"""The bar: the simulator's default account renders and agrees with its truth manifest."""

from __future__ import annotations

import orjson
import pytest

from pplx_archiver.core.thread.render import render_thread
from tests.core.builders import CTX
from tests.core.simcorpus import account


def _check(result, truth: dict) -> list[str]:
    record = orjson.loads(result.files["thread.json"])
    problems = []
    if result.mode != truth["mode"]:
        problems.append(f"mode {result.mode} != {truth['mode']}")
    if record["counts"]["turns"] != truth["turns"]:
        problems.append(f"turns {record['counts']['turns']} != {truth['turns']}")
    landings = [(b["payload_id"], b["landing"], b["turn"]) for b in record.get("background", [])]
    expected = [(b["payload_id"], b["landing"], b["turn"]) for b in truth["background"]]
    if sorted(landings) != sorted(expected):
        problems.append(f"landings {landings} != {expected}")
    mine = sorted((r["location"], r["kind"], r["status"]) for r in record.get("interruptions", []))
    theirs = sorted((r["location"], r["kind"], r["status"]) for r in truth["interruptions"])
    if mine != theirs:
        problems.append(f"interruptions {mine} != {theirs}")
    if ("interruptions" in record) != bool(truth["interruptions"]):
        problems.append("interruptions key presence")
    if [v["entry_uuid"] for v in result.variants] != truth["variants"]:
        problems.append(f"variants {result.variants} != {truth['variants']}")
    sources = orjson.loads(result.files["sources.json"])
    if not sources["count"] == record["counts"]["sources"] == truth["unique_citations"]:
        problems.append(f"citations {sources['count']} != {truth['unique_citations']}")
    turns_md = [k for k in result.files if k.startswith("turns/")]
    if len(turns_md) != truth["turns"]:
        problems.append("turn files")
    text = "".join(v.decode() for k, v in result.files.items() if k.endswith(".md"))
    if text.count("#### Sub-agent: ") < len(truth["background"]):
        problems.append("a background payload was not rendered")
    return problems


@pytest.mark.slow
@pytest.mark.heavy  # pure CPU: `make test` runs it untraced (docs/dev/architecture.md)
def test_default_account_agrees_with_truth() -> None:
    """All 2,000 threads of the default seed render and match the truth manifest."""
    failures: dict[str, list[str]] = {}
    count = 0
    for inp, truth in account(2000, 7):
        count += 1
        problems = _check(render_thread(inp, CTX), truth)
        if problems:
            failures[truth["uuid"]] = problems
    assert count == 2000
    assert not failures, dict(list(failures.items())[:5])


def test_small_account_payload_counts() -> None:
    """Rendered sub-agent payloads equal the top-level background payloads, thread by thread."""
    for inp, truth in account(60, 11):
        result = render_thread(inp, CTX)
        record = orjson.loads(result.files["thread.json"])
        assert record["counts"]["background_payloads"] == len(truth["background"])
        # conversation.md repeats a stub turn's sub-agents; only its appendix is its own
        conversation = result.files["conversation.md"].decode().split("## Background tasks")
        text = "".join(v.decode() for k, v in result.files.items() if k.startswith("turns/"))
        text += "".join(conversation[1:])
        assert text.count("#### Sub-agent: ") == len(truth["background"])
