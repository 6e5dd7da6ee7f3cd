"""Fixtures for end-to-end runs of the command line against the simulator on loopback."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import structlog
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread


@pytest.fixture(autouse=True)
def _config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's config folder is ``tmp_path/config`` (tests write credentials and TOML there)."""
    monkeypatch.setenv("PPLX_CONFIG_DIR", str(tmp_path / "config"))


@dataclasses.dataclass
class CliResult:
    """Exit code and output of one command, with the run's JSON log events."""

    exit_code: int
    output: str
    events: list[dict[str, Any]]


def run_cli(args: list[str], out: Path | None = None) -> CliResult:
    """Invoke `pplx-export ARGS` in-process and collect the JSON events it logged.

    A run's log file is named after its command and second, so a second run of a command
    within the same second appends to the first one's file: the events are what each log
    file gained during this run, not the files that appeared. A command that does not change
    the archive (a dry run) logs into the user's log folder (``PPLX_LOG_DIR``): read too.
    """
    _register()
    folders = [out / "index" / "logs"] if out else []
    if os.environ.get("PPLX_LOG_DIR"):
        folders.append(Path(os.environ["PPLX_LOG_DIR"]))
    before = {p: p.stat().st_size for logs in folders for p in logs.glob("*.jsonl")}
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    events: list[dict[str, Any]] = []
    for logs in folders:
        for path in sorted(logs.glob("*.jsonl")):
            added = path.read_bytes()[before.get(path, 0) :]
            events += [orjson.loads(line) for line in added.splitlines() if line]
    return CliResult(result.exit_code, result.output, events)


def sim_args(sim: RunningSim, out: Path, *extra: str) -> list[str]:
    """Common options pointing a command at a running simulator."""
    return [
        "--out",
        str(out),
        "--base-url",
        sim.base_url,
        "--session-token",
        sim.session_token,
        "--log-format",
        "json",
        *extra,
    ]


def sim_get(sim: RunningSim, path: str) -> Any:
    """GET a control endpoint of the simulator."""
    return httpx.get(sim.base_url + path, timeout=30).json()


def sim_post(sim: RunningSim, path: str, body: Any) -> Any:
    """POST to a control endpoint of the simulator."""
    return httpx.post(sim.base_url + path, json=body, timeout=30).json()


@pytest.fixture
def sim300() -> Iterator[RunningSim]:
    """The default 300-thread simulated account, healthy, on loopback."""
    with serve_in_thread(SimConfig()) as sim:
        yield sim


@pytest.fixture
def sim60() -> Iterator[RunningSim]:
    """A 60-thread simulated account (all modes), healthy, on loopback: for tests whose
    point is not the account's size."""
    with serve_in_thread(SimConfig(threads=60)) as sim:
        yield sim


def cookie_file(path: Path, cookies: dict[str, str]) -> Path:
    """A JSON cookie export (the browser-extension format) of ``cookies`` for the simulator."""
    items = [{"name": k, "value": v, "domain": "127.0.0.1"} for k, v in cookies.items()]
    path.write_text(orjson.dumps(items).decode())
    return path


@pytest.fixture
def reset_logging() -> Iterator[None]:
    """CLI runs point the log sink at their own files; later tests must not inherit it."""
    yield
    structlog.reset_defaults()
