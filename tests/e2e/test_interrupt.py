"""Ctrl-C / SIGTERM stop a run cleanly (exit 4, consistent archive) and a rerun completes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pplx_archiver.shell.archive.fsutil import TEMP_PATTERN
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args


@pytest.fixture
def slow_sim() -> Iterator[RunningSim]:
    """A 60-thread account answering with 40 ms latency, so a run lasts a few seconds."""
    with serve_in_thread(SimConfig(threads=60, latency_ms=40)) as sim:
        yield sim


@pytest.mark.parametrize(
    ("signum", "writer"),
    [(sig, writer) for writer in ("off", "on") for sig in (signal.SIGINT, signal.SIGTERM)],
)
def test_signal_stops_cleanly_and_rerun_completes(
    slow_sim: RunningSim, tmp_path: Path, signum: int, writer: str
) -> None:
    """A signal mid-run exits 4 with a summary; nothing partial; the next run finishes —
    with the writer in a thread and in a process of its own (``writer_process``)."""
    out = tmp_path / "a"
    args = ["batch", *sim_args(slow_sim, out, "--concurrency", "2", "--rate", "1000")]
    env = {
        **os.environ,
        "PPLX_CONFIG_DIR": str(tmp_path / "cfg"),
        "PPLX_WRITER_PROCESS": writer,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "pplx_archiver", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    deadline = time.monotonic() + 240  # hang guards only: a busy machine starts slowly
    db = out / "index" / "archive.sqlite"
    while time.monotonic() < deadline:  # wait until some threads are archived
        if db.exists() and len(list(out.glob("*/*/*/thread.json"))) >= 5:
            break
        time.sleep(0.1)
    proc.send_signal(signum)
    stdout, _ = proc.communicate(timeout=240)
    assert proc.returncode == 4, stdout
    assert "interrupted" in stdout
    assert not [p for p in out.rglob("*") if TEMP_PATTERN.search(p.name)]
    index = Index(db)
    try:
        rows = list(index.iter_threads())
    finally:
        index.close()
    done = [r for r in rows if r.status == "done"]
    assert 0 < len(done) < 60
    for row in done:
        assert row.path is not None
        assert (out / row.path / "thread.json").is_file()
        assert (out / row.path / "conversation.md").is_file()
    again = run_cli(args, out)
    assert again.exit_code == 0, again.output
    index = Index(db)
    try:
        statuses = {r.status for r in index.iter_threads()}
        count = sum(1 for _ in index.iter_threads())
    finally:
        index.close()
    assert statuses == {"done"} and count == 60
    assert run_cli(["verify", "--out", str(out)], None).exit_code == 0
