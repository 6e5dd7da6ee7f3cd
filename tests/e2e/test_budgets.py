"""Budgets on what a response becomes (issue 44): a thread body of 250,000 empty entries —
750 KB on the wire, well under the body cap — fails that thread naming its budget, writes
nothing of it, and the run goes on with the other threads."""

from __future__ import annotations

from pathlib import Path

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_get, sim_post

FAST = ("--concurrency", "4", "--rate", "1000", "--burst", "100")


def test_an_amplifying_body_fails_its_thread_and_the_run_goes_on(tmp_path: Path) -> None:
    with serve_in_thread(SimConfig(threads=12, seed=5)) as sim:
        victim = sim_get(sim, "/__sim/truth")["threads"][3]["uuid"]
        sim_post(sim, "/__sim/mutate", {"amplify": [{"thread": victim, "entries": 250_000}]})
        out = tmp_path / "a"
        result = run_cli(["batch", *sim_args(sim, out, *FAST)], out)
    assert result.exit_code == 1, result.output
    failed = [e for e in result.events if e["event"] == "THREAD_FAILED"]
    assert [e["thread_uuid"] for e in failed] == [victim]
    assert failed[0]["error_kind"] == "BudgetError"
    assert "entries 250000 > 10000" in failed[0]["error"]
    assert "--max-thread-entries" in failed[0]["error"]
    assert not list(out.glob(f"*/*/*_{victim[:8]}")), "nothing of the thread is written"
    index = Index(out / "index" / "archive.sqlite")
    try:
        rows = {r.uuid: r.status for r in index.iter_threads()}
    finally:
        index.close()
    assert rows.pop(victim) == "failed"
    assert set(rows.values()) == {"done"} and len(rows) == 11


def test_each_budget_is_an_option(tmp_path: Path) -> None:
    """A smaller budget than a thread needs fails it too, naming that budget."""
    with serve_in_thread(SimConfig(threads=6, seed=5)) as sim:
        out = tmp_path / "b"
        result = run_cli(
            ["batch", *sim_args(sim, out, *FAST, "--max-thread-bytes", str(1024 * 1024))], out
        )
        assert result.exit_code == 1, result.output
        assert "budget exceeded: bytes" in result.output
        out2 = tmp_path / "c"
        result = run_cli(["batch", *sim_args(sim, out2, *FAST, "--max-thread-depth", "8")], out2)
    assert result.exit_code == 1
    failed = [e for e in result.events if e["event"] == "THREAD_FAILED"]
    assert failed and all("budget exceeded: depth" in e["error"] for e in failed)
