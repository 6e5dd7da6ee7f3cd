"""`pplx-export doctor` (issue 40 item 4): every dependency of the commands in one report, one
line each — ok, warning or error with a hint — exit 0 without errors, 1 with; writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register
from pplx_archiver.cli._app import app
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import run_cli, sim_args

NAMES = {"python", "sqlite", "config", "session", "archive", "lock", "last run", "schedule"}


@pytest.fixture(autouse=True)
def _own_schedule_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _doctor(*args: str) -> tuple[int, str]:
    _register()
    result = CliRunner().invoke(app, ["doctor", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def _checks(out: str) -> dict[str, list[dict[str, Any]]]:
    report = orjson.loads(out)
    found: dict[str, list[dict[str, Any]]] = {}
    for check in report["checks"]:
        assert check["status"] in ("ok", "warning", "error")
        found.setdefault(check["name"], []).append(check)
    assert report["errors"] == sum(c["status"] == "error" for c in report["checks"])
    return found


def _tree(root: Path) -> dict[str, bytes]:
    """Every file's bytes; SQLite's own -wal/-shm files of a read-only open aside."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def test_doctor_on_a_healthy_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPLX_RATE", "3")
    out = tmp_path / "a"
    with serve_in_thread(SimConfig(threads=5)) as sim:
        assert run_cli(["batch", *sim_args(sim, out)], out).exit_code == 0
        before = _tree(out)
        session = ["--base-url", sim.base_url, "--session-token", sim.session_token]
        code, text = _doctor("-o", str(out), *session)
        code_json, body = _doctor("-o", str(out), "--json", *session)
    assert code == 0 and code_json == 0, text
    assert sim.session_token not in text + body
    found = _checks(body)
    assert set(found) >= NAMES
    assert found["session"][0]["status"] == "ok" and "logged in" in found["session"][0]["detail"]
    assert "exit 0" in found["last run"][0]["detail"]
    settings = [c["detail"] for c in found["setting"]]
    assert "rate = 3.0 (from environment variable PPLX_RATE)" in settings
    assert "session_token = *** (from option --session-token)" in settings
    assert any(s.startswith("out_dir = ") and "(from option --out)" in s for s in settings)
    lines = text.splitlines()
    assert len(lines) == len(orjson.loads(body)["checks"])
    assert all(line.split()[0] in ("ok", "warning", "error") for line in lines)
    assert _tree(out) == before
    assert not (tmp_path / "user-log").exists()


def test_doctor_without_session_is_an_error_with_a_hint(tmp_path: Path) -> None:
    code, body = _doctor("-o", str(tmp_path / "none"), "--offline", "--json")
    assert code == 1
    found = _checks(body)
    session = found["session"][0]
    assert session["status"] == "error" and "auth save" in session["hint"]
    assert found["archive"][0]["status"] == "warning"
    assert not (tmp_path / "none").exists()


def test_doctor_offline_does_not_ask_the_server(tmp_path: Path) -> None:
    closed = ["--base-url", "http://127.0.0.1:9", "--session-token", "abcdefgh"]
    code, body = _doctor("--offline", "--json", "-o", str(tmp_path / "none"), *closed)
    assert code == 0, body
    assert "--offline" in _checks(body)["session"][0]["detail"]


def test_doctor_names_a_corrupt_index_and_a_failed_last_run(tmp_path: Path) -> None:
    archive = tmp_path / "a"
    index = Index(archive / "index" / "archive.sqlite")
    run = index.begin_run("sync", "2026-11-30T03:17:00Z")
    index.finish_run(run, "2026-11-30T03:18:00Z", {"exit_code": 3})
    index.record_run_outcome(run, 3, None, "the session expired")
    index.close()
    common = ["--offline", "--json", "--session-token", "abcdefgh"]
    code, body = _doctor("-o", str(archive), *common)
    assert code == 0
    last = _checks(body)["last run"][0]
    assert last["status"] == "warning" and "exit 3" in last["detail"]
    assert "the session expired" in last["detail"]
    (archive / "index" / "archive.sqlite").write_bytes(b"not a database " * 300)
    for name in ("archive.sqlite-wal", "archive.sqlite-shm"):
        (archive / "index" / name).unlink(missing_ok=True)
    code, body = _doctor("-o", str(archive), *common)
    assert code == 1
    broken = _checks(body)["archive"][0]
    assert broken["status"] == "error" and "reindex" in broken["detail"]


def test_doctor_reports_a_bad_setting_and_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PPLX_CONCURRENCY", "0")
    code, body = _doctor("--offline", "--json", "-o", str(tmp_path / "none"))
    assert code == 1
    config = _checks(body)["config"][0]
    assert config["status"] == "error" and "PPLX_CONCURRENCY" in config["detail"]
