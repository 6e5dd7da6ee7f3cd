"""Runs against the simulator through a loopback proxy: ``--proxy``, ``HTTP_PROXY``,
``NO_PROXY``, a bad proxy URL and a proxy that is not there."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args
from tests.loopback_proxy import LoopbackProxy, serving_in_thread

PASSWORD = "hunter22secret"


@pytest.fixture
def sim12() -> Iterator[RunningSim]:
    with serve_in_thread(SimConfig(threads=12)) as sim:
        yield sim


# The runs here are about the way to the server, not its pace: a budget that never binds
# (the default's 2 requests a second made each 12-thread run take 20 s).
OPEN = ("--rate", "50", "--burst", "50")


def _thread_files(out: Path) -> list[Path]:
    return list(out.glob("*/*/*/thread.json"))


def _logs(out: Path) -> str:
    return "".join(p.read_text() for p in (out / "index" / "logs").glob("*.jsonl"))


@pytest.mark.usefixtures("reset_logging")
def test_a_run_through_the_proxy_option(sim12: RunningSim, tmp_path: Path) -> None:
    """Every request of the run passes the proxy; its password is in no output and no log."""
    out = tmp_path / "archive"
    with serving_in_thread(LoopbackProxy(), auth=f"someone:{PASSWORD}@") as proxy:
        result = run_cli(["batch", *sim_args(sim12, out, "--proxy", proxy.url, *OPEN)], out)
    assert result.exit_code == 0, result.output
    assert len(_thread_files(out)) == 12
    paths = [url.removeprefix(sim12.base_url).split("?")[0] for url in proxy.forwarded]
    assert sum(path.startswith("/rest/thread/") for path in paths) >= 12
    assert proxy.authorizations and set(proxy.authorizations) == {proxy.authorizations[0]}
    assert PASSWORD not in result.output and PASSWORD not in _logs(out)


@pytest.mark.usefixtures("reset_logging")
def test_the_environment_proxy_is_used_unless_no_proxy_names_the_host(
    sim12: RunningSim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving_in_thread(LoopbackProxy()) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        first = run_cli(["batch", *sim_args(sim12, tmp_path / "a", *OPEN)], tmp_path / "a")
        through = len(proxy.forwarded)
        monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
        second = run_cli(["batch", *sim_args(sim12, tmp_path / "b", *OPEN)], tmp_path / "b")
    assert (first.exit_code, second.exit_code) == (0, 0), first.output + second.output
    assert through >= 12 and len(proxy.forwarded) == through  # the second run went direct
    assert len(_thread_files(tmp_path / "a")) == len(_thread_files(tmp_path / "b")) == 12


@pytest.mark.usefixtures("reset_logging")
def test_a_bad_proxy_url_is_one_line(sim12: RunningSim, tmp_path: Path) -> None:
    out = tmp_path / "archive"
    bad = f"socks9://someone:{PASSWORD}@127.0.0.1:1"
    result = run_cli(["batch", *sim_args(sim12, out, "--proxy", bad)], out)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: proxy must be an http:// or https:// URL like http://host:3128, "
                     "got 'socks9://***@127.0.0.1:1'"]  # fmt: skip
    assert _thread_files(out) == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_proxy_that_is_not_there_is_retried_then_one_line(
    sim12: RunningSim, tmp_path: Path
) -> None:
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "config.toml").write_text("max_attempts = 2\n")
    env = {**os.environ, "PPLX_CONFIG_DIR": str(config), "PPLX_LOG_DIR": str(tmp_path / "log")}
    proxy = f"http://someone:{PASSWORD}@127.0.0.1:{_closed_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "pplx_archiver", "batch", "-o", str(tmp_path / "a"),
         "--base-url", sim12.base_url, "--session-token", sim12.session_token,
         "--proxy", proxy, "--log-format", "console"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    lines = (done.stdout + done.stderr).splitlines()
    assert done.returncode == 7, lines
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and "cannot connect" in errors[0], lines
    assert [line for line in lines if "HOST_UNREACHABLE" in line], lines  # it was retried
    assert PASSWORD not in done.stdout + done.stderr
