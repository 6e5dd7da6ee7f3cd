"""The ``pplx-export sim`` commands."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading

from typer.testing import CliRunner

from pplx_archiver.cli import _register
from pplx_archiver.cli._app import app
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.state import AccountState


def test_sim_truth_prints_the_manifest() -> None:
    """`sim truth --threads 5 --seed 3` prints the same manifest the account computes."""
    _register()
    result = CliRunner().invoke(app, ["sim", "truth", "--threads", "5", "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == AccountState(SimConfig(threads=5, seed=3)).truth()


def test_sim_serve_rejects_bad_switches() -> None:
    """`sim serve` with an invalid switch exits with a usage error naming it."""
    _register()
    result = CliRunner().invoke(app, ["sim", "serve", "--era", "x"])
    assert result.exit_code == 2
    assert "era" in result.output


def _serve_lines(
    *args: str, timeout: float = 60.0
) -> tuple[subprocess.Popen[str], list[str], threading.Thread]:
    """Start `sim serve ARGS` in a process of its own; its stdout lines up to the cookie (and
    the thread reading them, done once the process ends)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pplx_archiver", "sim", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    found: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout

    def read() -> None:
        for line in stdout:
            found.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while not lines or not lines[-1].startswith("cookie:"):
        try:
            lines.append(found.get(timeout=timeout).rstrip("\n"))
        except queue.Empty:
            proc.kill()
            raise AssertionError(f"no cookie line: {lines}") from None
    return proc, lines, reader


def test_sim_serve_port_0_prints_the_port_it_got() -> None:
    """`--port 0` prints the real port, and the server answers there at once."""
    proc, lines, reader = _serve_lines("--port", "0", "--threads", "2")
    try:
        assert lines[0].startswith("base_url: http://127.0.0.1:"), lines
        port = int(lines[0].rsplit(":", 1)[1])
        assert port != 0
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert conn.recv(12).startswith(b"HTTP/1.1")
    finally:
        proc.terminate()
        proc.wait(30)
        reader.join(30)
        assert proc.stderr is not None and proc.stdout is not None
        proc.stderr.close()
        proc.stdout.close()


def test_sim_serve_on_a_taken_port_prints_one_error_line_and_no_cookie() -> None:
    """A port in use ends `sim serve` with one error line (exit 2) before any URL or cookie."""
    _register()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["sim", "serve", "--port", str(port), "--threads", "2"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert f"127.0.0.1:{port}" in lines[0] and "--port" in lines[0]


def test_sim_bad_numbers_are_usage_errors() -> None:
    """`--port 99999` and `sim truth --threads -5` are one-line usage errors, not tracebacks."""
    _register()
    for args in (["sim", "serve", "--port", "99999"], ["sim", "truth", "--threads", "-5"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {args[2]} must be"), lines


def test_sim_serve_json_is_one_object_with_the_url_and_accounts() -> None:
    """`sim serve --json` prints one JSON line: the URL it listens on and each account."""
    import orjson

    proc = subprocess.Popen(
        [sys.executable, "-m", "pplx_archiver", "sim", "serve", "--port", "0", "--json",
         "--threads", "2", "--accounts", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        data = orjson.loads(proc.stdout.readline())
        assert data["base_url"].startswith("http://127.0.0.1:")
        assert [len(a["account_id"]) > 0 for a in data["accounts"]] == [True, True]
        assert all(a["cookie"] for a in data["accounts"])
    finally:
        proc.terminate()
        proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
