"""Fixtures and helpers of the reliability suite: sizes (CI vs soak), CLI runs, archive views.

``PPLX_SOAK=1`` (``make soak``) scales every suite up; the default sizes keep the whole
directory well under 90 s on a 2-core machine. Runs go through the real command line, either
in-process (``run_cli``) or as a child process (``spawn_cli``), against the simulator on
127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.sim.runner import RunningSim
from tests.e2e.conftest import CliResult, run_cli, sim_args, sim_get

__all__ = ["CliResult", "run_cli", "sim_args", "sim_get"]

SOAK = os.environ.get("PPLX_SOAK", "") not in ("", "0")


def size(ci: int, soak: int) -> int:
    """The CI figure, or the soak figure under ``PPLX_SOAK=1``."""
    return soak if SOAK else ci


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
    from pplx_archiver.shell.archive.index import Index

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
