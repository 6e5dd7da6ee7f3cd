"""Incremental `sync` fetches exactly what changed; `sync-deleted` tombstones exactly what went."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.runner import RunningSim
from tests.e2e.conftest import run_cli, sim_args, sim_get, sim_post

FAST = ("--concurrency", "8", "--rate", "1000", "--burst", "100")


def _thread_requests(sim: RunningSim) -> int:
    return int(sim_get(sim, "/__sim/stats")["requests"].get("thread_detail", 0))


def _records(out: Path) -> dict[str, dict[str, object]]:
    records = {}
    for path in out.glob("*/*/*/thread.json"):
        record = orjson.loads(path.read_bytes())
        records[record["uuid"]] = record
    return records


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_sync_fetches_only_changed_threads(sim300: RunningSim, tmp_path: Path) -> None:
    """After 10 added and 10 continued threads, sync fetches those 20 and matches the truth."""
    out = tmp_path / "a"
    assert run_cli(["batch", *sim_args(sim300, out, *FAST)], out).exit_code == 0
    truth = sim_get(sim300, "/__sim/truth")["threads"]
    continued = [t["uuid"] for t in truth[100:110] if t["era_state"] == "ok"]
    mutation = sim_post(
        sim300,
        "/__sim/mutate",
        {"add": 10, "continue": [{"thread": u, "turns": 1} for u in continued]},
    )
    added = mutation["added"]
    before_details = _thread_requests(sim300)
    result = run_cli(["sync", *sim_args(sim300, out, *FAST)], out)
    assert result.exit_code == 0, result.output
    assert f"plan: {len(added)} new, {len(continued)} updated, 0 retry" in result.output
    archived_ids = {e["thread_uuid"] for e in result.events if e["event"] == "THREAD_ARCHIVED"}
    assert archived_ids == set(added) | set(continued)
    fetched = _thread_requests(sim300) - before_details
    needs = sum(
        2 if e.get("requests", 1) > 1 else 1
        for e in result.events
        if e["event"] == "THREAD_ARCHIVED"
    )
    assert fetched >= len(archived_ids) and fetched <= needs + len(archived_ids)
    new_truth = {t["uuid"]: t for t in sim_get(sim300, "/__sim/truth")["threads"]}
    records = _records(out)
    for uuid in archived_ids:
        assert records[uuid]["counts"]["turns"] == new_truth[uuid]["turns"]  # type: ignore[index]
        assert records[uuid]["mode"] == new_truth[uuid]["mode"]

    quiet_before = _thread_requests(sim300)
    mtimes = {p: p.stat().st_mtime_ns for p in out.glob("*/*/*/**/*") if p.is_file()}
    again = run_cli(["sync", *sim_args(sim300, out, *FAST)], out)
    assert again.exit_code == 0
    assert _thread_requests(sim300) == quiet_before
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes
    assert not [e for e in again.events if e["event"] == "ANSWER_VARIANT_DETECTED"]
    assert [e for e in again.events if e["event"] == "LISTING_EARLY_STOP"]


def test_sync_deleted_tombstones_exactly(sim60: RunningSim, tmp_path: Path) -> None:
    """5 deletions and 2 expiries are confirmed online and tombstoned; files stay in place."""
    out = tmp_path / "a"
    assert run_cli(["batch", *sim_args(sim60, out, *FAST)], out).exit_code == 0
    truth = [t["uuid"] for t in sim_get(sim60, "/__sim/truth")["threads"]]
    deleted, expired = truth[20:25], truth[40:42]
    sim_post(sim60, "/__sim/mutate", {"delete": deleted, "expire": expired})
    files_before = sorted(p for p in out.rglob("*") if p.is_file() and "index" not in p.parts)

    offline = run_cli(["sync-deleted", *sim_args(sim60, out)], out)
    assert offline.exit_code == 0, offline.output
    for uuid in deleted:
        assert f"candidate {uuid}" in offline.output
    records = _records(out)
    assert not any("remote_deleted" in r for r in records.values())

    online = run_cli(["sync-deleted", "--online", *sim_args(sim60, out)], out)
    assert online.exit_code == 0, online.output
    records = _records(out)
    tombstoned = {u for u, r in records.items() if "remote_deleted" in r}
    listed_gone = set(deleted) | {u for u in expired if f"candidate {u}" in offline.output}
    assert tombstoned == listed_gone
    assert set(deleted) <= tombstoned
    files_after = sorted(p for p in out.rglob("*") if p.is_file() and "index" not in p.parts)
    assert files_after == files_before
    first = {u: records[u]["remote_deleted"] for u in tombstoned}
    run_cli(["sync-deleted", "--online", *sim_args(sim60, out)], out)
    assert {u: _records(out)[u]["remote_deleted"] for u in tombstoned} == first
    index = Index(out / "index" / "archive.sqlite")
    try:
        states = {row.uuid: row.status for row in index.iter_threads()}
    finally:
        index.close()
    assert {states[u] for u in deleted} == {"deleted"}
