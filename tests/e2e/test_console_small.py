"""The console's smaller promises (issue 40, items 4 and 7): `-V`, shell completion, `-o`
everywhere, absolute log paths in `runs`, the last run's exit code and error in `status`, a
corrupt index (exit 2, the real archive in the hint), a missing `crontab`, the README's
pointers."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver import __version__
from pplx_archiver.cli import _register
from pplx_archiver.cli._app import app
from pplx_archiver.cli.ask import ask_app
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.net.auth import HOW_TO_CONNECT
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import run_cli, sim_args

ROOT = Path(__file__).resolve().parents[2]


def _invoke(args: list[str]) -> tuple[int, str, str]:
    _register()
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_short_version_flag_on_both_programs() -> None:
    assert _invoke(["-V"])[:2] == (0, f"pplx-export {__version__}\n")
    result = CliRunner().invoke(ask_app, ["-V"])
    assert result.exit_code == 0 and result.stdout == f"pplx-ask {__version__}\n"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion_scripts(shell: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    code, out, _err = _invoke(["--show-completion", shell])
    assert code == 0 and "pplx-export" in out and "_PPLX_EXPORT_COMPLETE" in out


def test_readme_pointer_of_the_session_error_names_a_real_section() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    headings = {line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("#")}
    named = re.findall(r"'([^']+)' in the README", HOW_TO_CONNECT)
    assert named and all(name in headings for name in named), (named, headings)
    for doc in re.findall(r"docs/[a-z-]+\.md", HOW_TO_CONNECT):
        assert (ROOT / doc).is_file()


def test_spaces_and_schedule_remove_accept_short_out(tmp_path: Path) -> None:
    with serve_in_thread(SimConfig(threads=5)) as sim:
        session = sim_args(sim, tmp_path / "a")[2:]
        code, out, err = _invoke(["spaces", *session])
        code_o, out_o, _ = _invoke(["spaces", "-o", str(tmp_path / "a"), *session])
    assert code == 0 and code_o == 0 and out_o == out, err
    assert not (tmp_path / "a").exists()
    _code, _out, err = _invoke(["schedule", "remove", "-o", str(tmp_path), "--cron",
                                "--crontab-command", str(tmp_path / "no-crontab"),
                                "--unit-dir", str(tmp_path / "u"), "--no-systemctl"])  # fmt: skip
    assert "No such option" not in err


def test_missing_crontab_says_so_with_a_hint(tmp_path: Path) -> None:
    missing = str(tmp_path / "bin" / "crontab")
    code, _out, err = _invoke(["schedule", "install", "--cron", "-o", str(tmp_path / "a"),
                               "--crontab-command", missing, "--unit-dir", str(tmp_path / "u"),
                               "--no-systemctl"])  # fmt: skip
    assert code == 1
    assert "Errno" not in err and "no such program" in err and "--systemd" in err
    assert len(err.strip().splitlines()) == 1


def test_schedule_remove_out_leaves_another_archives_schedule(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "crontab"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/sh\nF="$(dirname "$0")/crontab.txt"\n'
        'if [ "$1" = "-l" ]; then cat "$F" 2>/dev/null || { echo "no crontab" >&2; exit 1; }\n'
        'else cat > "$F"; fi\n'
    )
    fake.chmod(0o755)
    common = ["--crontab-command", str(fake), "--unit-dir", str(tmp_path / "u"), "--no-systemctl"]
    assert _invoke(["schedule", "install", "--cron", "-o", str(tmp_path / "a"), *common])[0] == 0
    code, _out, err = _invoke(["schedule", "remove", "--cron", "-o", str(tmp_path / "b"), *common])
    assert code == 2 and "nothing removed" in err
    assert "pplx-export-schedule" in (tmp_path / "bin" / "crontab.txt").read_text()
    code, out, _err = _invoke(["schedule", "remove", "--cron", "-o", str(tmp_path / "a"), *common])
    assert code == 0 and "removed crontab entry" in out


def test_runs_show_absolute_logs_and_status_the_last_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with serve_in_thread(SimConfig(threads=6)) as sim:
        fast = ("--rate", "1000", "--burst", "100")  # the pacing is not what is tested
        made = run_cli(["batch", *sim_args(sim, Path("arch"), *fast)], Path("arch"))
        assert made.exit_code == 0
        # a run that ends in an error: the session is refused
        bad = ["sync", "--out", "arch", "--base-url", sim.base_url, "--session-token", "nope12"]
        assert run_cli([*bad, "--log-format", "json"]).exit_code == 3
    code, out, _err = _invoke(["runs", "-o", "arch", "--json"])
    assert code == 0
    logs = [run["log_file"] for run in orjson.loads(out)]
    assert logs and all(Path(log).is_absolute() and Path(log).is_file() for log in logs)
    code, text, _ = _invoke(["runs", "-o", "arch"])
    assert f"log: {tmp_path}" in text
    code, out, _ = _invoke(["status", "-o", "arch", "--json"])
    last = orjson.loads(out)["last_run"]
    assert last["command"] == "sync" and last["exit_code"] == 3 and last["error"]
    code, text, _ = _invoke(["status", "-o", "arch"])
    assert ", exit 3" in text and "  error: " in text


def test_corrupt_index_status_exits_2_naming_the_archive(tmp_path: Path) -> None:
    archive = tmp_path / "my archive"
    Index(archive / "index" / "archive.sqlite").close()
    (archive / "index" / "archive.sqlite").write_bytes(b"not a database " * 400)
    for name in ("archive.sqlite-wal", "archive.sqlite-shm"):
        (archive / "index" / name).unlink(missing_ok=True)
    code, _out, err = _invoke(["status", "-o", str(archive)])
    assert code == 2, err
    assert "<archive>" not in err and f"reindex --out '{archive}'" in err
    assert os.path.isdir(archive)
