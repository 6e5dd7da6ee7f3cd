"""Fixtures and helpers of the reliability suite: sizes (CI vs soak), CLI runs, archive views.

``PPLX_SOAK=1`` (``make soak``) scales every suite up; the default sizes keep the whole
directory well under 90 s on a 2-core machine. Runs go through the real command line, either
in-process (``run_cli``) or as a child process (``spawn_cli``), against the simulator on
127.0.0.1.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import structlog
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.sim.runner import RunningSim

SOAK = os.environ.get("PPLX_SOAK", "") not in ("", "0")


def size(ci: int, soak: int) -> int:
    """The CI figure, or the soak figure under ``PPLX_SOAK=1``."""
    return soak if SOAK else ci


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No run reads the user's real config file or stored credential; logging is reset after."""
    monkeypatch.setenv("PPLX_CONFIG_DIR", str(tmp_path / "config"))
    for var in ("PPLX_SESSION_TOKEN", "PPLX_BASE_URL", "PPLX_COOKIES", "PPLX_OUT", "PPLX_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    yield
    structlog.reset_defaults()


@dataclasses.dataclass
class CliResult:
    """Exit code and output of one command, with the run's JSON log events."""

    exit_code: int
    output: str
    events: list[dict[str, Any]]


def run_cli(args: list[str], out: Path | None = None) -> CliResult:
    """Invoke ``pplx-export ARGS`` in-process and collect the JSON events it logged.

    A run's log file is named after its command and second, so a second run of a command
    within the same second appends to the first one's file: the events are what each log
    file gained during this run, not the files that appeared.
    """
    _register()
    logs = out / "index" / "logs" if out else None
    before = {p: p.stat().st_size for p in logs.glob("*.jsonl")} if logs and logs.exists() else {}
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    events: list[dict[str, Any]] = []
    if logs and logs.exists():
        for path in sorted(logs.glob("*.jsonl")):
            added = path.read_bytes()[before.get(path, 0) :]
            events += [orjson.loads(line) for line in added.splitlines() if line]
    return CliResult(result.exit_code, result.output, events)


def spawn_cli(args: list[str], env_dir: Path, *, output: bool = True) -> subprocess.Popen[bytes]:
    """Start ``python -m pplx_archiver ARGS`` as a real child process (its own interpreter).

    With ``output`` its stdout and stderr come through one pipe that the caller must drain
    (``communicate``); without, they are discarded, so a child whose pipe nobody reads never
    blocks on a full pipe buffer.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPLX_")}
    env["PPLX_CONFIG_DIR"] = str(env_dir)
    return subprocess.Popen(
        [sys.executable, "-m", "pplx_archiver", *args],
        stdout=subprocess.PIPE if output else subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        env=env,
    )


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


def truth_uuids(sim: RunningSim) -> set[str]:
    """Uuids of every thread a complete archive must hold (deleted ones excluded)."""
    threads = sim_get(sim, "/__sim/truth")["threads"]
    return {t["uuid"] for t in threads if t.get("era_state", "ok") == "ok"}


def archived_records(out: Path) -> dict[str, dict[str, Any]]:
    """Thread uuid → parsed thread.json of every thread folder in the archive."""
    records = {}
    for path in out.glob("*/*/*/thread.json"):
        record = orjson.loads(path.read_bytes())
        records[record["uuid"]] = record
    return records


def index_statuses(out: Path) -> dict[str, str]:
    """Thread uuid → status in ``index/archive.sqlite``."""
    from pplx_archiver.shell.index import Index

    index = Index(out / "index" / "archive.sqlite")
    try:
        return {row.uuid: row.status for row in index.iter_threads()}
    finally:
        index.close()


def registry_lines(out: Path) -> list[dict[str, Any]]:
    """Parsed lines of ``index/answer_variants_log.jsonl`` ([] when absent)."""
    path = out / "index" / "answer_variants_log.jsonl"
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
