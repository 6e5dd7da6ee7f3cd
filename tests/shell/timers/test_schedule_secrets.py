"""A health-check URL is a secret (issue 40): every output of `schedule install/show/remove`
and of a scheduled run shows it masked (`https://hc-ping.com/…d1f2`), and every file that
holds it is readable by its owner only. Nothing here touches the real crontab or systemd: the
commands get a unit folder under tmp_path and fake `crontab` / `systemctl` programs."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register
from pplx_archiver.cli._app import app
from pplx_archiver.core.schedules import schedule as text
from pplx_archiver.shell.archive.fsutil import write_atomic
from pplx_archiver.shell.run import monitor
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import sim_args
from tests.shell.ping_server import ping_server
from tests.shell.timers.test_schedule import FAKE_SYSTEMCTL, _script

KEY = "2b5e7a3c-90f1-4c1e-8a4d-6e0b9c11d1f2"
SECRET_URL = f"https://hc-ping.com/{KEY}"
MASKED = "https://hc-ping.com/…d1f2"
# The fake crontab keeps its store readable by the user only, as cron's own spool is.
FAKE_CRONTAB = """#!/bin/sh
umask 077
F="$(dirname "$0")/crontab.txt"
if [ "$1" = "-l" ]; then
  if [ -f "$F" ]; then cat "$F"; else echo "no crontab for tester" >&2; exit 1; fi
elif [ "$1" = "-" ]; then cat > "$F"
else echo "unexpected arguments: $*" >&2; exit 2; fi
"""


def _leaks(secret: str) -> tuple[str, ...]:
    """The pieces of a secret that must never be shown: the key and any 8 of its characters
    beyond the last 4 shown."""
    return (secret, *(secret[i : i + 8] for i in range(len(secret) - 12)))


def _files(root: Path) -> Iterator[Path]:
    return (p for p in sorted(root.rglob("*")) if p.is_file())


def _assert_kept(outputs: list[str], root: Path, key: str) -> None:
    for output in outputs:
        for piece in _leaks(key):
            assert piece not in output, output
    holding = [p for p in _files(root) if key.encode() in p.read_bytes()]
    for path in holding:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_mask_shows_scheme_host_and_last_four() -> None:
    """The mask keeps what tells checks apart and nothing that lets anyone ping."""
    assert text.mask_url(SECRET_URL) == MASKED
    assert text.mask_url(SECRET_URL + "/") == MASKED
    assert text.mask_url("https://hc-ping.com/short") == "https://hc-ping.com/…"
    assert text.mask_url("not a url") == "…"
    assert monitor.shown_url(SECRET_URL) == MASKED
    line = f'ExecStart="/p" "sync" "--healthcheck" "{SECRET_URL}" "--healthcheck={SECRET_URL}"'
    assert KEY not in text.mask_secrets(line)
    assert text.mask_secrets(line).count(MASKED) == 2


@pytest.mark.parametrize("kind", ["--systemd", "--cron"])
def test_schedule_commands_never_print_the_secret(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """install (also --dry-run), show (text and --json) and remove print it masked; the unit
    files and the crontab hold it whole, readable by the user only."""
    _register()
    monkeypatch.setenv("PPLX_CONFIG_DIR", str(tmp_path / "config"))
    crontab = _script(tmp_path / "bin", "crontab", FAKE_CRONTAB)
    systemctl = _script(tmp_path / "bin", "systemctl", FAKE_SYSTEMCTL)
    host = ["--unit-dir", str(tmp_path / "units"), "--crontab-command", str(crontab)]
    host += ["--systemctl-command", str(systemctl)]
    install = ["schedule", "install", kind, "-o", str(tmp_path / "a"), *host]
    install += ["--healthcheck", SECRET_URL, "--metrics-file", str(tmp_path / "m.prom")]
    runs = [
        [*install, "--dry-run"],
        [*install, "--dry-run", "--json"],
        install,
        [*install, "--json"],  # again: replaces the same units / entry
        ["schedule", "show", *host],
        ["schedule", "show", "--json", *host],
        ["schedule", "remove", "--json", *host],
    ]
    outputs = []
    for args in runs[:-1]:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        outputs += [result.stdout, result.stderr]
        if args[1] == "show" or "--dry-run" in args:  # shown, so that one can tell it is set
            assert MASKED in result.stdout, (args, result.stdout)
        if "--json" in args:  # one JSON object
            assert isinstance(orjson.loads(result.stdout), dict)
    stored = (tmp_path / "units" / "pplx-export.service") if kind == "--systemd" else None
    stored = stored or tmp_path / "bin" / "crontab.txt"
    assert KEY in stored.read_text()  # the schedule itself holds the whole URL
    _assert_kept(outputs, tmp_path, KEY)
    result = CliRunner().invoke(app, runs[-1])
    assert result.exit_code == 0, result.output
    outputs += [result.stdout, result.stderr]
    _assert_kept(outputs, tmp_path, KEY)
    removed = orjson.loads(result.stdout)
    assert removed["deleted_files"] if kind == "--systemd" else removed["removed_crontab_entry"]


def test_unit_files_become_0600_even_when_unchanged(tmp_path: Path) -> None:
    """A unit written 0644 by an older version is tightened on the next install."""
    path = tmp_path / "u.service"
    path.write_text("same")
    path.chmod(0o644)
    assert write_atomic(path, b"same", mode=0o600) is False
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_scheduled_run_never_logs_the_secret(tmp_path: Path) -> None:
    """A run with the options a schedule passes: its output, log, run history and metrics
    file never hold the key, even when the ping fails and a warning names the URL."""
    _register()
    out = tmp_path / "a"
    metrics = tmp_path / "m.prom"
    with serve_in_thread(SimConfig(threads=3)) as sim, ping_server(status=500) as hc:
        key = f"{KEY}-{hc.url.rsplit('/', 1)[1]}"
        url = f"{hc.url}/{key}"
        options = ("--healthcheck", url, "--metrics-file", str(metrics), "--rate", "1000")
        args = ["sync", *sim_args(sim, out, *options)]
        result = CliRunner().invoke(app, args, catch_exceptions=False)
        assert len(hc.pings) == 2  # the pings went to the whole URL
    assert result.exit_code == 0, result.output
    assert "health-check ping http://127.0.0.1:" in result.stderr  # the warning, masked
    assert f"/…{key[-4:]}/start failed: HTTP 500" in result.stderr
    assert list((out / "index" / "logs").glob("*.jsonl"))
    _assert_kept([result.stdout, result.stderr], tmp_path, key)
    assert [p for p in _files(tmp_path) if key.encode() in p.read_bytes()] == []
    assert stat.S_IMODE(metrics.stat().st_mode) == 0o600
