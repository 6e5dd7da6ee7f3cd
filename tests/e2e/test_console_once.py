"""Each error and interrupt is printed once, and an unreachable host is not silence: every
retry says what is retried and until when (issue 40 item 4)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "cfg"
    config.mkdir(exist_ok=True)
    (config / "config.toml").write_text("max_attempts = 3\n")
    return {**os.environ, "PPLX_CONFIG_DIR": str(config), "PPLX_LOG_DIR": str(tmp_path / "log")}


def test_unreachable_host_says_what_it_retries_and_errs_once(tmp_path: Path) -> None:
    out = tmp_path / "a"
    url = f"http://127.0.0.1:{_closed_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "pplx_archiver", "batch", "-o", str(out), "--base-url", url,
         "--session-token", "abcdefgh", "--log-format", "console"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 7, done.stderr
    lines = (done.stdout + done.stderr).splitlines()
    errors = [line for line in lines if "cannot connect" in line]
    assert len(errors) == 1 and errors[0].startswith("error: "), lines
    assert not [line for line in lines if "RUN_FAILED" in line]
    retries = [line for line in lines if "HOST_UNREACHABLE" in line]
    assert len(retries) == 2, lines
    assert all("giving up by" in line and "127.0.0.1" in line for line in retries)
    assert "attempt 1 of 3" in retries[0]
    # the log file still holds the run's failure
    logs = list((out / "index" / "logs").glob("batch-*.jsonl"))
    assert logs and '"RUN_FAILED"' in logs[0].read_text()


def test_interrupt_is_reported_once(tmp_path: Path) -> None:
    out = tmp_path / "a"
    with serve_in_thread(SimConfig(threads=60, latency_ms=40)) as sim:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pplx_archiver", "batch", "-o", str(out),
             "--base-url", sim.base_url, "--session-token", sim.session_token,
             "--log-format", "console", "--concurrency", "2", "--rate", "1000"],
            env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(list(out.glob("*/*/*/thread.json"))) < 3:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 4, stderr
    said = [
        line
        for line in (stdout + stderr).splitlines()
        if re.search(r"^(error: )?interrupted|RUN_FAILED|archive is consistent", line)
    ]
    assert len(said) == 1, said
