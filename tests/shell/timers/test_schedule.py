"""Installing a schedule writes only into the given unit folder and the given (fake) crontab."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register
from pplx_archiver.cli._app import app
from pplx_archiver.core.schedules import schedule as text
from pplx_archiver.errors import ScheduleError
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.timers import schedule as sched

FAKE_CRONTAB = """#!/bin/sh
F="$(dirname "$0")/crontab.txt"
if [ "$1" = "-l" ]; then
  if [ -f "$F" ]; then cat "$F"; else echo "no crontab for tester" >&2; exit 1; fi
elif [ "$1" = "-" ]; then cat > "$F"
else echo "unexpected arguments: $*" >&2; exit 2; fi
"""
FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/systemctl.calls"
"""


def _script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def _spec(archive: Path, **kw: object) -> text.ScheduleSpec:
    return text.ScheduleSpec(
        name="pplx-test",
        program=(sys.executable, "-m", "pplx_archiver"),
        archive=str(archive),
        **kw,  # type: ignore[arg-type]
    )


def test_cron_install_show_remove_keep_other_lines(tmp_path: Path) -> None:
    """The entry is added, replaced on reinstall and removed; the user's other lines stay."""
    fake = _script(tmp_path / "bin", "crontab", FAKE_CRONTAB)
    store = tmp_path / "bin" / "crontab.txt"
    store.write_text("MAILTO=me\n0 1 * * * /bin/true\n")
    host = sched.ScheduleHost(unit_dir=tmp_path / "units", systemctl=None, crontab=(str(fake),))
    sched.install_cron(host, _spec(tmp_path / "a", cron_time="1 2 * * *"))
    line = sched.install_cron(host, _spec(tmp_path / "a", cron_time="3 4 * * *"))
    assert store.read_text() == f"MAILTO=me\n0 1 * * * /bin/true\n{line}\n"
    shown = sched.show_cron(host, "pplx-test")
    assert shown == {"kind": "cron", "line": line, "archive": str(tmp_path / "a")}
    assert sched.remove_cron(host, "pplx-test") == line
    assert store.read_text() == "MAILTO=me\n0 1 * * * /bin/true\n"
    assert sched.remove_cron(host, "pplx-test") is None
    assert not (tmp_path / "units").exists()


def test_unreadable_crontab_is_never_overwritten(tmp_path: Path) -> None:
    """When `crontab -l` fails for another reason than "no crontab", nothing is written."""
    fake = _script(tmp_path / "bin", "crontab", "#!/bin/sh\necho 'permission denied' >&2\nexit 1\n")
    host = sched.ScheduleHost(unit_dir=tmp_path / "units", systemctl=None, crontab=(str(fake),))
    with pytest.raises(ScheduleError, match="permission denied"):
        sched.install_cron(host, _spec(tmp_path / "a"))
    assert not (tmp_path / "bin" / "crontab.txt").exists()


def test_systemd_install_enables_timer_and_remove_disables(tmp_path: Path) -> None:
    """Units land in the given folder; systemctl is told to reload, enable and disable."""
    fake = _script(tmp_path / "bin", "systemctl", FAKE_SYSTEMCTL)
    host = sched.ScheduleHost(unit_dir=tmp_path / "units", systemctl=(str(fake), "--user"))
    paths = sched.install_systemd(host, _spec(tmp_path / "a", on_calendar="hourly"))
    assert [p.name for p in paths] == ["pplx-test.service", "pplx-test.timer"]
    assert "OnCalendar=hourly" in paths[1].read_text().splitlines()
    shown = sched.show_systemd(host, "pplx-test")
    assert shown is not None and shown["archive"] == str(tmp_path / "a")
    assert sched.remove_systemd(host, "pplx-test") == paths
    assert not any(p.exists() for p in paths)
    calls = (tmp_path / "bin" / "systemctl.calls").read_text().splitlines()
    assert calls[:2] == ["--user daemon-reload", "--user enable --now pplx-test.timer"]
    assert "--user disable --now pplx-test.timer" in calls
    assert sched.show_systemd(host, "pplx-test") is None


def test_foreign_unit_is_left_alone(tmp_path: Path) -> None:
    """A unit of the same name not written by this program is not deleted."""
    units = tmp_path / "units"
    units.mkdir()
    (units / "pplx-test.timer").write_text("[Timer]\nOnCalendar=daily\n")
    host = sched.ScheduleHost(unit_dir=units, systemctl=None)
    with pytest.raises(ScheduleError, match="left alone"):
        sched.remove_systemd(host, "pplx-test")
    assert (units / "pplx-test.timer").exists()


def test_cli_install_show_remove_with_history(tmp_path: Path) -> None:
    """The commands use absolute paths and `show` reports the last run from the history."""
    _register()
    fake = _script(tmp_path / "bin", "crontab", FAKE_CRONTAB)
    archive = tmp_path / "my archive"
    index = Index(archive / "index" / "archive.sqlite")
    run = index.begin_run("sync", "2026-11-30T03:17:00Z")
    index.finish_run(run, "2026-11-30T03:18:00Z", {"exit_code": 0, "archived": 4, "failed": 0})
    index.close()
    common = ["--crontab-command", str(fake), "--unit-dir", str(tmp_path / "u"), "--no-systemctl"]
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = runner.invoke(app, ["schedule", "install", "--cron", "-o", "my archive", *common])
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0, result.output
    line = (tmp_path / "bin" / "crontab.txt").read_text().strip()
    assert f"--out '{archive}'" in line and line.endswith("# pplx-export-schedule:pplx-export")
    shown = runner.invoke(app, ["schedule", "show", "--json", *common])
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.stdout)
    assert report["installed"][0]["kind"] == "cron"
    assert report["history"]["last_run"]["started_at"] == "2026-11-30T03:17:00Z"
    assert report["history"]["last_success"]["archived"] == 4
    text_out = runner.invoke(app, ["schedule", "show", *common]).stdout
    assert "last run: #1 sync started 2026-11-30T03:17:00Z, exit 0 (4 archived" in text_out
    removed = runner.invoke(app, ["schedule", "remove", *common])
    assert removed.exit_code == 0 and "removed crontab entry" in removed.stdout
    assert (tmp_path / "bin" / "crontab.txt").read_text() == ""


def test_cli_refuses_bad_values_with_exit_2(tmp_path: Path) -> None:
    """A bad time span or name is a usage error (exit 2) and nothing is written."""
    _register()
    fake = _script(tmp_path / "bin", "crontab", FAKE_CRONTAB)
    args = ["schedule", "install", "--systemd", "--unit-dir", str(tmp_path / "u"), "--no-systemctl"]
    bad_delay = CliRunner().invoke(app, [*args, "-o", str(tmp_path), "--randomized-delay", "x"])
    assert bad_delay.exit_code == 2 and "--randomized-delay" in bad_delay.output
    bad_name = CliRunner().invoke(
        app, [*args, "--name", "a/b", "-o", str(tmp_path), "--crontab-command", str(fake)]
    )
    assert bad_name.exit_code == 2 and "--name" in bad_name.output
    assert not (tmp_path / "u").exists()


def test_cli_crontab_refusal_exits_1_and_keeps_the_crontab(tmp_path: Path) -> None:
    """When the crontab program fails, install exits 1 with its message; nothing changes."""
    _register()
    fake = _script(tmp_path / "bin", "crontab", "#!/bin/sh\necho 'cron denied' >&2\nexit 1\n")
    result = CliRunner().invoke(
        app,
        [
            "schedule",
            "install",
            "--cron",
            "-o",
            str(tmp_path / "a"),
            "--crontab-command",
            str(fake),
        ],
    )
    assert result.exit_code == 1 and "cron denied" in result.output
    assert not (tmp_path / "bin" / "crontab.txt").exists()


def test_missing_systemctl_does_not_block_show_or_remove(tmp_path: Path) -> None:
    """Without a systemctl program, show still reports the units and remove deletes them."""
    host = sched.ScheduleHost(unit_dir=tmp_path / "units", systemctl=None)
    paths = sched.install_systemd(host, _spec(tmp_path / "a"))
    absent = sched.ScheduleHost(
        unit_dir=tmp_path / "units", systemctl=(str(tmp_path / "no-such-systemctl"), "--user")
    )
    shown = sched.show_systemd(absent, "pplx-test")
    assert shown is not None and shown["timer_state"] is None
    assert sched.remove_systemd(absent, "pplx-test") == paths
    assert not any(p.exists() for p in paths)
