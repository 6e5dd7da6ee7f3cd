"""`pplx-export batch` against the simulator archives everything, exactly as the truth says."""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.runner import RunningSim
from tests.e2e.conftest import run_cli, sim_args, sim_get


def _archived(out: Path) -> dict[str, dict[str, Any]]:
    records = {}
    for path in out.glob("*/*/*/thread.json"):
        record = orjson.loads(path.read_bytes())
        records[record["uuid"]] = record
    return records


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_batch_matches_truth(sim300: RunningSim, tmp_path: Path) -> None:
    """Every listed thread is archived and agrees with the truth manifest; concurrency holds.
    300 threads on several cores: the run writes in a process of its own (``auto``)."""
    out = tmp_path / "archive"
    args = ["batch", *sim_args(sim300, out, "--concurrency", "6", "--rate", "500", "--burst", "50")]
    result = run_cli(args, out)
    assert result.exit_code == 0, result.output
    offloaded = [e for e in result.events if e["event"] == "WRITER_PROCESS_STARTED"]
    assert len(offloaded) == ((os.cpu_count() or 1) > 1)
    truth = {t["uuid"]: t for t in sim_get(sim300, "/__sim/truth")["threads"]}
    archived = _archived(out)
    assert set(archived) == set(truth)
    for uuid, t in truth.items():
        rec = archived[uuid]
        assert rec["mode"] == t["mode"], uuid
        assert rec["counts"]["turns"] == t["turns"], uuid
        assert rec["counts"]["sources"] == t["unique_citations"], uuid
        got_landing = sorted(
            (b["payload_id"], b["landing"], b["turn"]) for b in rec.get("background", [])
        )
        want_landing = sorted((b["payload_id"], b["landing"], b["turn"]) for b in t["background"])
        assert got_landing == want_landing, uuid
        got_int = sorted(
            (i["location"], i["kind"], i["status"]) for i in rec.get("interruptions", [])
        )
        want_int = sorted((i["location"], i["kind"], i["status"]) for i in t["interruptions"])
        assert got_int == want_int, uuid
        assert ("interruptions" in rec) == bool(t["interruptions"]), uuid
        got_var = sorted(v["entry_uuid"] for v in rec.get("answer_variants", []))
        assert got_var == sorted(t["variants"]), uuid

    want_hits = sorted((u, e) for u, t in truth.items() for e in t["variants"])
    logged = sorted(
        (e["thread_uuid"], e["entry_uuid"])
        for e in result.events
        if e["event"] == "ANSWER_VARIANT_DETECTED"
    )
    assert logged == want_hits and want_hits
    registry = (out / "index" / "answer_variants_log.jsonl").read_bytes().splitlines()
    keys = [(r["thread_uuid"], r["entry_uuid"]) for r in map(orjson.loads, registry)]
    assert sorted(keys) == want_hits
    for e in result.events:
        if e["event"] == "ANSWER_VARIANT_DETECTED":
            for field in ("uuid8", "title", "sibling_uuid", "selection_status", "experiment_role"):
                assert field in e

    stats = sim_get(sim300, "/__sim/stats")
    assert 0 < stats["peak_concurrency"] <= 6
    summary = [e for e in result.events if e["event"] == "RUN_SUMMARY"]
    assert summary and summary[0]["archived"] == len(truth) and summary[0]["failed"] == 0
    index = Index(out / "index" / "archive.sqlite")
    try:
        statuses = Counter(row.status for row in index.iter_threads())
        (run,) = index.runs()
    finally:
        index.close()
    db = sqlite3.connect(out / "index" / "archive.sqlite")
    first_runs = {r[0] for r in db.execute("SELECT first_seen_run FROM variants")}
    db.close()
    assert statuses == {"done": len(truth)}
    assert first_runs == {run.id}  # every variant records the run that first saw it
    assert "⚠" in result.output


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_second_batch_fetches_nothing(sim300: RunningSim, tmp_path: Path) -> None:
    """A rerun on an unchanged account lists only, writes no file and warns of no variant."""
    out = tmp_path / "archive"
    args = ["batch", *sim_args(sim300, out, "--concurrency", "6", "--rate", "500")]
    assert run_cli(args, out).exit_code == 0
    mtimes = {p: p.stat().st_mtime_ns for p in out.glob("*/*/*/**/*") if p.is_file()}
    before = sim_get(sim300, "/__sim/stats")
    again = run_cli(args, out)
    assert again.exit_code == 0
    after = sim_get(sim300, "/__sim/stats")
    thread_requests = after["requests"].get("thread_detail", 0) - before["requests"].get(
        "thread_detail", 0
    )
    assert thread_requests == 0
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes
    assert not [e for e in again.events if e["event"] == "ANSWER_VARIANT_DETECTED"]
    assert "plan: 0 new, 0 updated, 0 retry, 50 unchanged" in again.output
    assert [e for e in again.events if e["event"] == "LISTING_EARLY_STOP"]


def test_zh_archive_verifies_without_lang(tmp_path: Path) -> None:
    """thread.json records the label language, so verify/re-render need no --lang."""
    from pplx_archiver.sim.config import SimConfig
    from pplx_archiver.sim.runner import serve_in_thread

    out = tmp_path / "zh"
    with serve_in_thread(SimConfig(threads=25)) as sim:
        args = ["batch", *sim_args(sim, out, "--lang", "zh", "--rate", "500")]
        assert run_cli(args, out).exit_code == 0
    records = list(out.glob("*/*/*/thread.json"))
    assert records and all(orjson.loads(p.read_bytes())["lang"] == "zh" for p in records)
    conversations = [p.read_text("utf-8") for p in out.glob("*/*/*/conversation.md")]
    assert len(conversations) == len(records)
    # every file speaks zh (no en heading), and the sub-agent / interruption labels appear
    assert all("### 提问" in c and "### Query" not in c for c in conversations)
    assert any("子代理" in c or "中断" in c or "后台任务" in c for c in conversations)
    verify = run_cli(["verify", "--out", str(out)])
    assert verify.exit_code == 0, verify.output
    rerender = run_cli(["re-render", "--out", str(out), "--log-format", "json"], out)
    assert rerender.exit_code == 0 and "rewrote 0 files" in rerender.output
