"""The command line answers --version and --help, also as `python -m pplx_archiver`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pplx_archiver import __version__
from pplx_archiver.cli import _register, app
from pplx_archiver.errors import EXIT_BUSY
from pplx_archiver.shell.archive.lock import writer_lock


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


def test_demo_on_a_busy_archive_says_so_and_claims_nothing(tmp_path: Path) -> None:
    """A demo whose archive another command is writing ends with the busy code and its one
    line, without the hints that say an archive was written."""
    _register()
    out = tmp_path / "demo"
    with writer_lock(out, "batch"):
        result = CliRunner().invoke(app, ["demo", "--out", str(out), "--threads", "2"])
    assert result.exit_code == EXIT_BUSY
    assert "is busy" in result.output
    assert "Archive written" not in result.output
    assert "Traceback" not in result.output
