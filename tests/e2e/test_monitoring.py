"""Unattended runs end to end: JSON summary, pings, metrics, run history, failed, retry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_get
from tests.shell.ping_server import ping_server

FAST = ("--concurrency", "4", "--rate", "1000", "--burst", "100")
MISSING = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def sim12() -> Iterator[RunningSim]:
    """A small healthy simulated account on loopback."""
    with serve_in_thread(SimConfig(threads=12)) as sim:
        yield sim


def _summary(stdout: str) -> dict[str, Any]:
    """The one JSON object a --json run printed."""
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout  # exactly one JSON object, nothing else on stdout
    summary: dict[str, Any] = json.loads(lines[0])
    return summary


LAST_STDERR: list[str] = []


def _json_cli(args: list[str], out: Path) -> tuple[int, dict[str, Any]]:
    """Run a command with --json; return its exit code and the parsed stdout summary."""
    from typer.testing import CliRunner

    from pplx_archiver.cli import _register
    from pplx_archiver.cli._app import app

    _register()
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    LAST_STDERR[:] = [result.stderr]
    return result.exit_code, _summary(result.stdout)


def test_batch_json_summary_pings_and_metrics(sim12: RunningSim, tmp_path: Path) -> None:
    """A good run prints one summary on stdout, pings start and success, writes metrics."""
    out = tmp_path / "a"
    metrics = tmp_path / "pplx.prom"
    with ping_server() as hc:
        extra = ("--json", "--healthcheck", hc.url, "--metrics-file", str(metrics), *FAST)
        code, summary = _json_cli(["batch", *sim_args(sim12, out, *extra)], out)
    assert code == 0 and summary["exit_code"] == 0 and summary["ok"] is True
    assert summary["archived"] == summary["listed"] == 12 and summary["failures"] == []
    assert Path(summary["log_file"]).is_file() and summary["duration_s"] > 0
    paths = [p.path.split("?")[0] for p in hc.pings]
    assert paths == ["/ping/secret-key/start", "/ping/secret-key"]
    assert json.loads(hc.pings[1].body)["run_id"] == summary["run_id"]
    assert hc.pings[0].path.split("rid=")[1] == hc.pings[1].path.split("rid=")[1]
    text = metrics.read_text()
    assert "pplx_export_threads_archived 12\n" in text
    assert 'pplx_export_last_run_exit_code{command="batch"} 0\n' in text
    assert 'pplx_export_last_success_timestamp_seconds{command="batch"}' in text
    history = run_cli(["runs", "--json", "-o", str(out)])
    runs = json.loads(history.output)
    assert runs[0]["exit_code"] == 0 and runs[0]["log_file"] == summary["log_file"]
    assert runs[0]["archived"] == 12 and runs[0]["command"] == "batch"
    code, deleted = _json_cli(["sync-deleted", *sim_args(sim12, out, "--json")], out)
    assert code == 0 and deleted["command"] == "sync-deleted"
    assert deleted["deletions"] == {
        "listed": 12,
        "candidates": 0,
        "confirmed": 0,
        "still_present": 0,
        "undecided": 0,
    }
    assert "deletion check: 0 candidate(s) of 12 listed" in LAST_STDERR[0]


def test_failed_threads_listed_and_retried_exactly(sim12: RunningSim, tmp_path: Path) -> None:
    """A failing thread shows in `failed` with dates and attempts; --retry-failed fetches only
    it; a dead health-check host changes no exit code."""
    out = tmp_path / "a"
    assert run_cli(["batch", *sim_args(sim12, out, *FAST)], out).exit_code == 0
    dead = "http://127.0.0.1:9/ping"  # discard port: nothing listens
    code, summary = _json_cli(
        ["export", MISSING, *sim_args(sim12, out, "--json", "--healthcheck", dead)], out
    )
    assert code == 1 and summary["exit_code"] == 1 and summary["failed"] == 1
    assert summary["failures"][0]["thread_uuid"] == MISSING
    assert "404" in summary["failures"][0]["reason"]
    assert "health-check ping http://127.0.0.1:9/…/1 failed" in LAST_STDERR[0]
    assert "/ping" not in LAST_STDERR[0]  # the check's key stays out of the output
    # An unknown id given to export is terminal (not_found): `failed` does not list it.
    assert json.loads(run_cli(["failed", "--json", "-o", str(out)]).output) == []

    # A thread that failed transiently before (and is gone from the service by now) and one
    # archived thread marked failed: the retry fetches exactly these two.
    index = Index(out / "index" / "archive.sqlite")
    index.mark_failed(MISSING, "me", "TransientError: 502", None)
    victim = next(row.uuid for row in index.iter_threads("done"))
    index.mark_failed(victim, "me", "TransientError: 502", None)
    index.close()
    listed = json.loads(run_cli(["failed", "--json", "-o", str(out)]).output)
    assert sorted(r["thread_uuid"] for r in listed) == sorted([MISSING, victim])
    listed = [r for r in listed if r["thread_uuid"] == MISSING]
    assert listed[0]["first_failure"] == listed[0]["last_failure"] is not None
    before = int(sim_get(sim12, "/__sim/stats")["requests"].get("list_ask_threads", 0))
    assert before > 0
    result = run_cli(["sync", "--retry-failed", *sim_args(sim12, out, *FAST)], out)
    assert result.exit_code == 1, result.output
    assert "retrying 2 failed thread(s)" in result.output
    archived = {e["thread_uuid"] for e in result.events if e["event"] == "THREAD_ARCHIVED"}
    failed = {e["thread_uuid"] for e in result.events if e["event"] == "THREAD_FAILED"}
    assert (archived, failed) == ({victim}, {MISSING})
    assert int(sim_get(sim12, "/__sim/stats")["requests"]["list_ask_threads"]) == before
    again = json.loads(run_cli(["failed", "--json", "-o", str(out)]).output)
    assert [r["thread_uuid"] for r in again] == [MISSING]
    assert again[0]["attempts"] == listed[0]["attempts"] + 1
    assert again[0]["first_failure"] == listed[0]["first_failure"]
    assert again[0]["last_failure"] > listed[0]["last_failure"]
    text = run_cli(["failed", "-o", str(out)]).output
    assert MISSING in text and f"{again[0]['attempts']} attempt(s)" in text and "404" in text


def test_retry_failed_with_nothing_failing_fetches_nothing(
    sim12: RunningSim, tmp_path: Path
) -> None:
    """With no failing thread, --retry-failed says so, exits 0 and makes no request."""
    out = tmp_path / "a"
    assert run_cli(["batch", *sim_args(sim12, out, *FAST)], out).exit_code == 0
    requests = sim_get(sim12, "/__sim/stats")["requests"]
    code, summary = _json_cli(["sync", "--retry-failed", *sim_args(sim12, out, "--json")], out)
    assert code == 0 and summary["retried"] == 0 and summary["run_id"] is None
    assert sim_get(sim12, "/__sim/stats")["requests"] == requests


def test_usage_error_still_prints_a_summary(tmp_path: Path) -> None:
    """A bad --healthcheck URL exits 2 before any request, with a JSON summary saying so."""
    out = tmp_path / "a"
    code, summary = _json_cli(
        ["batch", "--out", str(out), "--json", "--healthcheck", "ftp://x/y"], out
    )
    assert code == 2 and summary["exit_code"] == 2 and "--healthcheck" in summary["error"]
    assert not out.exists()


def test_auth_failure_exit_3_summary_and_fail_ping(tmp_path: Path) -> None:
    """A dead session exits 3; the summary names the error and the ping goes to /3."""
    out = tmp_path / "a"
    with serve_in_thread(SimConfig(threads=5, logged_in=False)) as sim, ping_server() as hc:
        args = sim_args(sim, out, "--json", "--healthcheck", hc.url)
        code, summary = _json_cli(["batch", *args], out)
    assert code == 3 and summary["exit_code"] == 3 and "logged out" in summary["error"]
    assert [p.path.split("?")[0] for p in hc.pings][-1] == "/ping/secret-key/3"
    assert json.loads(hc.pings[-1].body)["exit_code"] == 3
    runs = json.loads(run_cli(["runs", "--json", "-o", str(out)]).output)
    assert runs[0]["exit_code"] == 3


def test_challenge_exit_5_summary(tmp_path: Path) -> None:
    """Cloudflare stopping the run exits 5, recorded in the summary and the run history."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text("max_challenges = 1\n")
    out = tmp_path / "a"
    with serve_in_thread(SimConfig(threads=20, challenge_windows=((12, 10**9),))) as sim:
        code, summary = _json_cli(["batch", *sim_args(sim, out, "--json", *FAST)], out)
    assert code == 5 and summary["exit_code"] == 5 and "Cloudflare" in summary["error"]
    runs = json.loads(run_cli(["runs", "--json", "-o", str(out)]).output)
    assert runs[0]["exit_code"] == 5
