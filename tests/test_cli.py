"""The command line answers --version and --help, also as `python -m pplx_archiver`."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pplx_archiver import __version__
from pplx_archiver.cli import _register, app


def test_version_and_help() -> None:
    """`pplx-export --version` prints the version; `--help` explains the exit codes."""
    _register()
    runner = CliRunner()
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "Exit codes" in result.output


def test_python_dash_m() -> None:
    """`python -m pplx_archiver --version` runs the same command line."""
    out = subprocess.run(
        [sys.executable, "-m", "pplx_archiver", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=240,  # a hang guard only: a fresh interpreter's imports are slow on a busy machine
    )
    assert __version__ in out.stdout


def test_demo_without_the_sim_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the simulator's server packages, `demo` stops with exit 2 naming the extra."""
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # `import uvicorn` now fails
    _register()
    result = CliRunner().invoke(app, ["demo", "--out", "unused"])
    assert result.exit_code == 2
    assert "pplx-archiver[sim]" in result.output
    assert "uvicorn" in result.output
