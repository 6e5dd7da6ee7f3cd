"""`export` archives the named threads; `--mode` and `--dry-run` limit what a batch writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_get


@pytest.fixture(scope="module")
def sim20() -> Iterator[RunningSim]:
    """A small healthy account shared by the tests of this module."""
    with serve_in_thread(SimConfig(threads=20)) as sim:
        yield sim


def _uuids(out: Path) -> set[str]:
    return {orjson.loads(p.read_bytes())["uuid"] for p in out.glob("*/*/*/thread.json")}


def test_export_by_uuid_and_url(sim20: RunningSim, tmp_path: Path) -> None:
    """A uuid and a thread URL both name a thread; exactly those two are archived."""
    truth = sim_get(sim20, "/__sim/truth")["threads"]
    first, second = truth[0]["uuid"], truth[5]["uuid"]
    out = tmp_path / "x"
    url = f"https://www.perplexity.ai/search/{second}"
    result = run_cli(["export", first, url, *sim_args(sim20, out)], out)
    assert result.exit_code == 0, result.output
    assert _uuids(out) == {first, second}


def test_export_rejects_a_bad_id(sim20: RunningSim, tmp_path: Path) -> None:
    """Something that is not a thread id is a usage error (exit 2) naming the argument."""
    out = tmp_path / "x"
    result = run_cli(["export", "../../etc/passwd", *sim_args(sim20, out)], out)
    assert result.exit_code == 2
    assert "not a thread uuid" in result.output


def test_mode_filter_and_dry_run(sim20: RunningSim, tmp_path: Path) -> None:
    """--dry-run writes no thread; --mode search writes only search threads."""
    out = tmp_path / "x"
    dry = run_cli(["batch", "--dry-run", *sim_args(sim20, out)], out)
    assert dry.exit_code == 0 and "plan: 20 new" in dry.output and "dry run" in dry.output
    assert not _uuids(out)
    result = run_cli(["batch", "--mode", "search", *sim_args(sim20, out, "--rate", "500")], out)
    assert result.exit_code == 0, result.output
    truth = sim_get(sim20, "/__sim/truth")["threads"]
    assert _uuids(out) == {t["uuid"] for t in truth if t["mode"] == "search"}
    bad = run_cli(["batch", "--mode", "chat", *sim_args(sim20, out)], out)
    assert bad.exit_code == 2 and "unknown mode" in bad.output
