"""The `pplx-ask` command line: help texts, console script, usage errors before any request."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pplx_archiver.cli.ask import ask_app, clean

ROOT = Path(__file__).resolve().parent.parent


def test_console_script_is_declared() -> None:
    """pyproject declares `pplx-ask` next to `pplx-export`, in the same package."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["pplx-ask"] == "pplx_archiver.cli.ask:main"
    assert scripts["pplx-export"].startswith("pplx_archiver.")


@pytest.mark.parametrize("command", ["ask", "models", "mark-read", "space-create"])
def test_help_ends_with_examples(command: str) -> None:
    """Every command's --help explains itself and ends with an Examples block."""
    result = CliRunner().invoke(ask_app, [command, "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout
    assert "pplx-ask " + command in result.stdout.split("Examples:")[1]


def test_root_help_lists_exit_codes() -> None:
    """The root help names the in-band exit codes 10-15."""
    result = CliRunner().invoke(ask_app, ["--help"])
    assert "10 rate limit" in " ".join(result.stdout.split())
    assert "15 the stream ended" in " ".join(result.stdout.split())


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["ask", "q", "--mode", "computer"], "--mode 'computer'"),
        (["ask", "q", "--recency", "decade"], "--recency 'decade'"),
        (["ask", "q", "--sources", "web,tv"], "unknown source 'tv'"),
        (["ask", "   "], "the prompt is empty (PROMPT)"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], words: str) -> None:
    """Bad options and an empty prompt exit 2 with a one-line message naming the problem."""
    result = CliRunner().invoke(ask_app, [*args, "-o", str(tmp_path / "a")])
    assert result.exit_code == 2
    assert words in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_clean_removes_escape_sequences() -> None:
    """Text shown in a terminal keeps newlines and tabs but loses control characters."""
    assert clean("a\x1b[31mred\x07\n\tb\x9b") == "a[31mred\n\tb"
