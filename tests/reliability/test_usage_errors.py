"""Errors, not tracebacks: bad paths, numbers, tokens and config files are usage errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pplx_archiver.cli._run import fail, project_error
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.index import Index
from tests.reliability.conftest import run_cli

BASE = ["--base-url", "http://127.0.0.1:9", "--session-token", "tok", "--log-format", "json"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--rate", "nan"],
        ["--rate", "inf"],
        ["--request-deadline", "nan"],
        ["--total-deadline", "inf"],
    ],
)
def test_bad_numbers_exit_2_and_create_nothing(tmp_path: Path, extra: list[str]) -> None:
    """nan and inf are refused with exit 2 before the archive folder is created."""
    out = tmp_path / "a"
    result = run_cli(["batch", "--out", str(out), *BASE, *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not out.exists()


def test_non_ascii_token_exit_2(tmp_path: Path) -> None:
    """A non-ASCII session token is a usage error, not a traceback after a run summary."""
    out = tmp_path / "a"
    args = ["sync", "--out", str(out), "--base-url", "http://127.0.0.1:9"]
    result = run_cli([*args, "--session-token", "tökén"])
    assert result.exit_code == 2
    assert "non-ASCII" in result.output
    assert not out.exists()


def test_out_is_a_file(tmp_path: Path) -> None:
    """--out naming a regular file is a usage error for writing and read-only commands."""
    target = tmp_path / "file"
    target.write_bytes(b"x")
    for args in (["batch", "--out", str(target), *BASE], ["status", "--out", str(target)]):
        result = run_cli(args)
        assert result.exit_code == 2, result.output
        assert "not a folder" in result.output
    under = run_cli(["batch", "--out", str(target / "sub"), *BASE])
    assert under.exit_code == 2
    assert target.read_bytes() == b"x"


def test_missing_config_file_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PPLX_CONFIG naming a missing file stops the command with exit 2."""
    monkeypatch.setenv("PPLX_CONFIG", str(tmp_path / "nope.toml"))
    out = tmp_path / "a"
    result = run_cli(["batch", "--out", str(out), *BASE])
    assert result.exit_code == 2
    assert "nope.toml" in result.output
    assert not out.exists()


def test_os_and_sqlite_errors_become_project_errors(tmp_path: Path) -> None:
    """OS and SQLite errors are reported as one line with the path and a hint."""
    error = project_error(OSError(28, "No space left on device", str(tmp_path / "x")))
    assert isinstance(error, StoreError)
    assert str(tmp_path / "x") in str(error) and "disk space" in str(error)
    assert isinstance(project_error(sqlite3.OperationalError("disk I/O error")), StoreError)
    path = tmp_path / "index" / "archive.sqlite"
    Index(path).close()
    index = Index(path)
    index._db.execute("PRAGMA max_page_count = 1")  # the next growth fails like a full disk
    with pytest.raises(StoreError) as info:
        for n in range(200):
            index.upsert(f"t{n}", "me", title="x" * 2000)
    index.close()
    assert str(path) in str(info.value)
    assert fail(info.value) == 1
