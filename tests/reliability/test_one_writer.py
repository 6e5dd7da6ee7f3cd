"""One writer per archive: the writer lock, and read-only commands beside a writer."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pplx_archiver.shell.archive.assets import remove_dead_staging
from pplx_archiver.shell.archive.lock import holder, writer_lock
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.reliability.conftest import index_statuses, run_cli, sim_args, sim_get, spawn_cli

THREADS = 20


@pytest.fixture(scope="module")
def sim() -> Iterator[RunningSim]:
    """A small healthy simulated account."""
    with serve_in_thread(SimConfig(threads=THREADS, seed=13)) as running:
        yield running


def _fast(sim: RunningSim, out: Path, *extra: str) -> list[str]:
    return sim_args(sim, out, "--rate", "1000", "--burst", "100", *extra)


def _detail_requests(sim: RunningSim) -> int:
    return int(sim_get(sim, "/__sim/stats")["requests"].get("thread_detail", 0))


def test_second_writer_exits_6_naming_the_holder(sim: RunningSim, tmp_path: Path) -> None:
    """While the lock is held every writing command exits 6 at once, naming PID and command."""
    out = tmp_path / "a"
    assert run_cli(["batch", *_fast(sim, out)], out).exit_code == 0
    before = _detail_requests(sim)
    with writer_lock(out, "sync"):
        assert holder(out) == {"pid": os.getpid(), "command": "sync"}
        for args in (
            ["batch", *_fast(sim, out, "--force")],
            ["sync", *_fast(sim, out)],
            ["export", "x-thread", *sim_args(sim, out)],
            ["sync-deleted", *sim_args(sim, out)],
            ["re-render", "--out", str(out)],
            ["assets-backfill", "--out", str(out)],
            ["relations", "--out", str(out)],
            ["usage-backfill", *sim_args(sim, out)],
            ["reindex", "--out", str(out)],
            ["forget", "x-thread", "--out", str(out)],
        ):
            result = run_cli(args, out)
            assert result.exit_code == 6, (args, result.output)
            assert f"PID {os.getpid()} (sync)" in result.output
            busy = [e for e in result.events if e["event"] == "RUN_FAILED"]
            assert busy and busy[0]["exit_code"] == 6
        # Read-only commands work beside the writer.
        assert run_cli(["status", "--out", str(out)]).exit_code == 0
        assert run_cli(["verify", "--out", str(out), "--jobs", "1"]).exit_code == 0
        dry = run_cli(["re-render", "--out", str(out), "--dry-run", "--jobs", "1"])
        assert dry.exit_code == 0, dry.output
    assert _detail_requests(sim) == before  # the refused runs fetched nothing
    assert run_cli(["re-render", "--out", str(out), "--jobs", "1"], out).exit_code == 0


def test_two_processes_one_archive(tmp_path: Path) -> None:
    """A second batch beside a running one exits 6; the first finishes with a sound archive."""
    with serve_in_thread(SimConfig(threads=30, seed=5, latency_ms=60)) as sim:
        out = tmp_path / "a"
        args = ["batch", *_fast(sim, out, "--concurrency", "2")]
        proc = spawn_cli(args, tmp_path / "config", output=False)
        try:
            deadline = time.monotonic() + 60
            while holder(out).get("pid") != proc.pid and time.monotonic() < deadline:
                assert proc.poll() is None, "the first writer ended before the test began"
                time.sleep(0.05)
            second = run_cli(args, out)
            assert second.exit_code == 6
            assert f"PID {proc.pid} (batch)" in second.output
            assert proc.wait(timeout=120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert set(index_statuses(out).values()) == {"done"}
        assert len(index_statuses(out)) == 30
        assert run_cli(["verify", "--out", str(out), "--jobs", "1"]).exit_code == 0


def test_read_only_commands_start_no_write_transaction(sim: RunningSim, tmp_path: Path) -> None:
    """status, verify and re-render --dry-run succeed while another connection holds the
    SQLite write lock, so they neither write nor need write access (read-only archives)."""
    out = tmp_path / "a"
    assert run_cli(["batch", *_fast(sim, out)], out).exit_code == 0
    db = sqlite3.connect(out / "index" / "archive.sqlite", isolation_level=None, timeout=0.1)
    try:
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE runs SET command = command")
        assert run_cli(["status", "--out", str(out)]).exit_code == 0
        verify = run_cli(["verify", "--out", str(out), "--jobs", "1"])
        assert verify.exit_code == 0, verify.output
        dry = run_cli(["re-render", "--out", str(out), "--dry-run", "--jobs", "1"])
        assert dry.exit_code == 0, dry.output
    finally:
        db.execute("ROLLBACK")
        db.close()


def test_live_staging_is_kept(tmp_path: Path) -> None:
    """Clearing staging leftovers removes dead runs' folders and never a live process's."""
    staging = tmp_path / "staging"
    live = staging / f"run-{os.getpid()}-abcd1234"
    dead = staging / "run-999999999-abcd1234"
    old = staging / "run-abcd1234"
    for folder in (live, dead, old):
        folder.mkdir(parents=True)
        (folder / "1.bin.part").write_bytes(b"x")
    assert remove_dead_staging(staging) == 2
    assert (live / "1.bin.part").exists()
    assert not dead.exists() and not old.exists()
