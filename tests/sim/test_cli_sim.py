"""The ``pplx-export sim`` commands."""

from __future__ import annotations

import json

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
