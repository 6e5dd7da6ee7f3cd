"""Install, show and remove a schedule: systemd user units or a crontab entry.

The text comes from :mod:`pplx_archiver.core.schedules.schedule`; this module writes it. Where it
writes is a :class:`ScheduleHost` (unit folder, the ``systemctl`` and ``crontab`` commands), so
tests point it at a temporary folder and a fake crontab command. The crontab is read with
``crontab -l`` and written whole with ``crontab -``; only the line carrying this schedule's
marker is replaced or removed, every other line is kept as it was. Unit files are written
0600, and what ``show`` returns has its secrets (a health-check URL) masked.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from pplx_archiver.core.schedules import schedule as text
from pplx_archiver.errors import ConfigError, ScheduleError
from pplx_archiver.shell.archive.fsutil import write_atomic

COMMAND_TIMEOUT_S = 30.0
# Unit files are readable by their owner only: a health-check URL in them is a secret.
UNIT_MODE = 0o600


@dataclasses.dataclass(frozen=True, slots=True)
class ScheduleHost:
    """Where a schedule is installed: unit folder and the commands that manage schedules."""

    unit_dir: Path
    systemctl: tuple[str, ...] | None = ("systemctl", "--user")
    crontab: tuple[str, ...] = ("crontab",)


def default_unit_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/systemd/user`` (``~/.config/systemd/user`` by default)."""
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def systemd_available(systemctl: Sequence[str] | None) -> bool:
    """True when the machine runs systemd and has ``systemctl``."""
    return (
        systemctl is not None
        and Path("/run/systemd/system").is_dir()
        and shutil.which(systemctl[0]) is not None
    )


def this_program() -> tuple[str, ...]:
    """The absolute command that runs this installation's ``pplx-export``."""
    script = Path(sys.executable).parent / "pplx-export"
    if script.is_file() and os.access(script, os.X_OK):
        return (str(script.absolute()),)
    return (str(Path(sys.executable).absolute()), "-m", "pplx_archiver")


def _run(argv: Sequence[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            list(argv),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise ScheduleError(_missing(argv[0])) from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ScheduleError(f"{argv[0]}: could not run: {exc}") from exc


def _missing(program: str) -> str:
    """The one line for a ``crontab`` or ``systemctl`` program that is not installed."""
    if "crontab" in Path(program).name:
        hint = (
            "install cron (e.g. `apt install cron`), use systemd units (--systemd), or name "
            "the program with --crontab-command"
        )
    else:
        hint = "use a crontab entry (--cron), or write the unit files only (--no-systemctl)"
    return f"{program}: no such program on this machine (not on PATH); {hint}"


def _checked(argv: Sequence[str], stdin: str | None = None) -> str:
    done = _run(argv, stdin)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise ScheduleError(
            f"{' '.join(argv)} exited {done.returncode}" + (f": {why[-1]}" if why else "")
        )
    return done.stdout


# -- systemd ------------------------------------------------------------------------------


def unit_paths(host: ScheduleHost, name: str) -> tuple[Path, Path]:
    service, timer = text.unit_names(name)
    return host.unit_dir / service, host.unit_dir / timer


def install_systemd(host: ScheduleHost, spec: text.ScheduleSpec) -> list[Path]:
    """Write the service and timer, reload systemd and start the timer; return the files."""
    service_path, timer_path = unit_paths(host, spec.name)
    try:  # 0600: the service may hold a health-check URL, a secret
        write_atomic(service_path, text.service_text(spec).encode("utf-8"), mode=UNIT_MODE)
        write_atomic(timer_path, text.timer_text(spec).encode("utf-8"), mode=UNIT_MODE)
    except OSError as exc:
        raise ConfigError(f"{host.unit_dir}: cannot write the units: {exc}") from exc
    if host.systemctl is not None:
        _checked([*host.systemctl, "daemon-reload"])
        _checked([*host.systemctl, "enable", "--now", timer_path.name])
    return [service_path, timer_path]


def remove_systemd(host: ScheduleHost, name: str) -> list[Path]:
    """Stop and disable the timer, delete both units; return the files deleted."""
    paths = [p for p in unit_paths(host, name) if p.exists()]
    if not paths:
        return []
    for path in paths:
        if text.archive_of_unit(path.read_text(encoding="utf-8", errors="replace")) is None:
            raise ScheduleError(f"{path}: not written by pplx-export schedule; left alone")
    if host.systemctl is not None:
        _try([*host.systemctl, "disable", "--now", unit_paths(host, name)[1].name])
    for path in paths:
        path.unlink()
    if host.systemctl is not None:
        _try([*host.systemctl, "daemon-reload"])
    return paths


def _try(argv: Sequence[str]) -> subprocess.CompletedProcess[str] | None:
    """Run a command whose failure changes nothing (None when it could not run at all)."""
    try:
        return _run(argv)
    except ScheduleError:
        return None


def show_systemd(host: ScheduleHost, name: str) -> dict[str, object] | None:
    """What is installed as systemd units (None when nothing), with the timer's state."""
    service_path, timer_path = unit_paths(host, name)
    if not timer_path.exists() and not service_path.exists():
        return None
    texts = {
        p: p.read_text(encoding="utf-8", errors="replace")
        for p in (service_path, timer_path)
        if p.exists()
    }
    archive = next((a for t in texts.values() if (a := text.archive_of_unit(t))), None)
    lines = [
        text.mask_secrets(line)
        for t in texts.values()
        for line in t.splitlines()
        if line.startswith(("ExecStart=", "OnCalendar=", "RandomizedDelaySec=", "Persistent="))
    ]
    state = None
    if host.systemctl is not None:
        done = _try([*host.systemctl, "list-timers", "--all", "--no-pager", timer_path.name])
        state = done.stdout.strip() if done is not None and done.returncode == 0 else None
    return {
        "kind": "systemd",
        "files": [str(p) for p in texts],
        "archive": archive,
        "directives": lines,
        "timer_state": state,
    }


# -- cron ---------------------------------------------------------------------------------


def read_crontab(host: ScheduleHost) -> str:
    """The user's crontab ('' when they have none); a ScheduleError when it cannot be read."""
    done = _run([*host.crontab, "-l"])
    if done.returncode == 0:
        return done.stdout
    if "no crontab" in (done.stderr + done.stdout).lower():
        return ""
    why = (done.stderr or done.stdout).strip()
    raise ScheduleError(
        f"{' '.join(host.crontab)} -l exited {done.returncode}: {why or 'no message'}; "
        "the crontab was left as it is"
    )


def install_cron(host: ScheduleHost, spec: text.ScheduleSpec) -> str:
    """Set this schedule's crontab entry (replacing an earlier one); return the line."""
    line = text.cron_line(spec)
    current = read_crontab(host)
    _checked([*host.crontab, "-"], text.crontab_with(current, line, spec.name))
    return line


def remove_cron(host: ScheduleHost, name: str) -> str | None:
    """Remove this schedule's crontab entry; return the line removed (None when none)."""
    current = read_crontab(host)
    line = text.find_cron_line(current, name)
    if line is None:
        return None
    _checked([*host.crontab, "-"], text.crontab_without(current, name))
    return line


def show_cron(host: ScheduleHost, name: str) -> dict[str, object] | None:
    """This schedule's crontab entry (None when there is none)."""
    line = text.find_cron_line(read_crontab(host), name)
    if line is None:
        return None
    shown = text.mask_secrets(line)
    return {"kind": "cron", "line": shown, "archive": text.archive_of_cron_line(line)}
