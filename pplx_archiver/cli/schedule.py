"""``pplx-export schedule install|show|remove``: run ``sync`` on a timer, like a backup tool.

systemd user units (a oneshot service and a timer with ``Persistent=true`` and a randomized
delay) where systemd runs, else (or with ``--cron``) one crontab entry. Exit codes: 0 done;
1 ``systemctl`` or ``crontab`` refused; 2 bad option or value. Everything printed goes through
:func:`_say`, which masks a health-check URL (``https://hc-ping.com/…d1f2``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import orjson
import platformdirs
import typer

from pplx_archiver.cli._app import app
from pplx_archiver.core.schedules import schedule as text
from pplx_archiver.errors import ConfigError, PplxError, ScheduleError
from pplx_archiver.settings import APP_DIR_NAME, load_settings
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.store import INDEX_DIR
from pplx_archiver.shell.timers import schedule as sched

schedule_app = typer.Typer(
    help="Run `pplx-export sync` on a schedule (systemd user timer or crontab).",
    no_args_is_help=True,
)
app.add_typer(schedule_app, name="schedule")

NAME = typer.Option("pplx-export", "--name", metavar="NAME", help="Unit / crontab entry name.")
UNIT_DIR = typer.Option(
    None,
    "--unit-dir",
    metavar="DIR",
    help="systemd user unit folder [default: ~/.config/systemd/user].",
)
CRONTAB = typer.Option(
    "crontab", "--crontab-command", metavar="PROGRAM", help="The crontab program."
)
SYSTEMCTL = typer.Option(
    "systemctl",
    "--systemctl-command",
    metavar="PROGRAM",
    help="The systemctl program (called with --user).",
)
NO_SYSTEMCTL = typer.Option(
    False, "--no-systemctl", help="Write or delete the unit files only; do not call systemctl."
)
CRON = typer.Option(False, "--cron", help="Use a crontab entry even where systemd runs.")
SYSTEMD = typer.Option(False, "--systemd", help="Use systemd units even if none seems to run.")


def _host(
    unit_dir: Path | None, crontab: str, systemctl: str, no_systemctl: bool
) -> sched.ScheduleHost:
    folder = unit_dir.expanduser().absolute() if unit_dir else sched.default_unit_dir(os.environ)
    return sched.ScheduleHost(
        unit_dir=folder,
        systemctl=None if no_systemctl else (systemctl, "--user"),
        crontab=(crontab,),
    )


def _say(out: str, stream: Any = None) -> None:
    """Print ``out`` with every secret (a health-check URL) masked."""
    (stream or sys.stdout).write(text.mask_secrets(out))


def _fail(exc: PplxError) -> typer.Exit:
    _say(f"error: {exc}\n", sys.stderr)
    return typer.Exit(exc.exit_code)


def _use_cron(cron: bool, systemd: bool, host: sched.ScheduleHost) -> bool:
    if cron and systemd:
        raise typer.BadParameter("--cron and --systemd exclude each other")
    if cron or systemd:
        return cron
    return not sched.systemd_available(host.systemctl or ("systemctl",))


@schedule_app.command()
def install(
    out: Path | None = typer.Option(
        None, "--out", "-o", metavar="DIR", help="Archive folder [default: $PPLX_OUT or ./archive]."
    ),
    command: str = typer.Option(
        "sync", "--command", metavar="COMMAND", help="Command to schedule: sync or batch."
    ),
    on_calendar: str = typer.Option(
        "daily", "--on-calendar", metavar="WHEN", help="systemd OnCalendar= expression."
    ),
    randomized_delay: str = typer.Option(
        "1h",
        "--randomized-delay",
        metavar="SPAN",
        help="systemd RandomizedDelaySec= (spreads start times).",
    ),
    cron_time: str | None = typer.Option(
        None,
        "--cron-time",
        metavar="'MIN HOUR'",
        help="Crontab time [default: a fixed time between 02:00 and 05:59].",
    ),
    healthcheck: str | None = typer.Option(
        None, "--healthcheck", metavar="URL", help="Pass --healthcheck URL to every scheduled run."
    ),
    metrics_file: Path | None = typer.Option(
        None,
        "--metrics-file",
        metavar="FILE",
        help="Pass --metrics-file PATH to every scheduled run.",
    ),
    extra: list[str] | None = typer.Argument(
        None, help="More options for the scheduled command, after `--`."
    ),
    cron: bool = CRON,
    systemd: bool = SYSTEMD,
    name: str = NAME,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what would be written; write nothing."
    ),
    unit_dir: Path | None = UNIT_DIR,
    crontab_command: str = CRONTAB,
    systemctl_command: str = SYSTEMCTL,
    no_systemctl: bool = NO_SYSTEMCTL,
    json_output: bool = typer.Option(
        False, "--json", help="Print what was done as one JSON object (secrets masked)."
    ),
) -> None:
    """Schedule `pplx-export sync` of an archive with absolute, quoted paths.

    With systemd: writes NAME.service and NAME.timer (Persistent=true catches up a run missed
    while the machine was off; RandomizedDelaySec spreads the start) and enables the timer.
    Without systemd, or with --cron: adds one crontab entry (an earlier entry of the same
    --name is replaced; other lines are kept).

    \b
    Examples:
      pplx-export schedule install -o ~/pplx-archive --healthcheck https://hc-ping.com/UUID
      pplx-export schedule install -o ~/pplx-archive --cron --cron-time '30 4 * * *'
    """
    host = _host(unit_dir, crontab_command, systemctl_command, no_systemctl)
    try:
        if command not in ("sync", "batch"):
            raise typer.BadParameter(f"--command: {command!r}; choose sync or batch")
        settings = load_settings({"out_dir": out})
        args: list[str] = []
        if healthcheck:
            from pplx_archiver.shell.run.monitor import check_ping_url

            args += ["--healthcheck", check_ping_url(healthcheck)]
        if metrics_file:
            args += ["--metrics-file", str(metrics_file.expanduser().absolute())]
        args += list(extra or ())
        env: list[tuple[str, str]] = []
        default_config = Path(platformdirs.user_config_dir(APP_DIR_NAME))
        if settings.config_dir.absolute() != default_config.absolute():
            env.append(("PPLX_CONFIG_DIR", str(settings.config_dir.expanduser().absolute())))
        spec = text.check_spec(
            text.ScheduleSpec(
                name=name,
                program=sched.this_program(),
                archive=str(settings.out_dir.expanduser().absolute()),
                command=command,
                args=tuple(args),
                on_calendar=on_calendar,
                randomized_delay=randomized_delay,
                cron_time=cron_time or "",
                environment=tuple(env),
            )
        )
        if _use_cron(cron, systemd, host):
            line = text.cron_line(spec)
            if not dry_run:
                sched.install_cron(host, spec)
            done = {"kind": "cron", "dry_run": dry_run, "crontab_entry": line}
            _report(
                done, json_output, line + "\n" if dry_run else f"crontab entry installed:\n{line}\n"
            )
            return
        if dry_run:
            service, timer = sched.unit_paths(host, spec.name)
            units = {str(service): text.service_text(spec), str(timer): text.timer_text(spec)}
            words = "".join(
                f"# {path}\n{body}" + ("\n" if i == 0 else "")
                for i, (path, body) in enumerate(units.items())
            )
            _report({"kind": "systemd", "dry_run": True, "units": units}, json_output, words)
            return
        paths = sched.install_systemd(host, spec)
    except PplxError as exc:
        raise _fail(exc) from None
    words = "".join(f"wrote {path}\n" for path in paths)
    if host.systemctl is None:
        words += f"enable with: systemctl --user enable --now {paths[1].name}\n"
    else:
        words += f"timer enabled: {paths[1].name}\n"
    done = {"kind": "systemd", "dry_run": False, "files": [str(p) for p in paths]}
    _report({**done, "timer_enabled": host.systemctl is not None}, json_output, words)


def _report(done: dict[str, Any], json_output: bool, words: str) -> None:
    """What a schedule command did: as words, or as one JSON object; secrets masked."""
    if json_output:
        sys.stdout.write(orjson.dumps(_masked(done)).decode("utf-8") + "\n")
    else:
        _say(words)


def _history(archive: str | None) -> dict[str, Any] | None:
    if not archive:
        return None
    path = Path(archive) / INDEX_DIR / "archive.sqlite"
    if not path.is_file():
        return {"archive": archive, "last_run": None, "last_success": None}
    index = Index(path)
    try:
        runs = [r for r in index.runs(200) if r.command in ("sync", "batch")]
        success = index.last_success(["sync", "batch"])
    finally:
        index.close()

    def brief(run: Any) -> dict[str, Any] | None:
        if run is None:
            return None
        summary = run.summary or {}
        return {
            "id": run.id,
            "command": run.command,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "exit_code": run.exit_code,
            "archived": summary.get("archived"),
            "failed": summary.get("failed"),
            "log_file": run.log_file,
        }

    return {
        "archive": archive,
        "last_run": brief(runs[0] if runs else None),
        "last_success": brief(success),
    }


def _run_text(label: str, run: dict[str, Any] | None) -> str:
    if run is None:
        return f"{label}: never"
    ended = f"exit {run['exit_code']}" if run["finished_at"] else "did not finish"
    counts = ""
    if run["archived"] is not None:
        counts = f" ({run['archived']} archived, {run['failed']} failed)"
    return f"{label}: #{run['id']} {run['command']} started {run['started_at']}, {ended}{counts}"


@schedule_app.command()
def show(
    name: str = NAME,
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR",
        help="Archive whose history to show [default: the scheduled one].",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
    unit_dir: Path | None = UNIT_DIR,
    crontab_command: str = CRONTAB,
    systemctl_command: str = SYSTEMCTL,
    no_systemctl: bool = NO_SYSTEMCTL,
) -> None:
    """Show the installed schedule (systemd units and/or crontab entry) and when it last ran.

    \b
    Examples:
      pplx-export schedule show
      pplx-export schedule show --name pplx-work --json
    """
    host = _host(unit_dir, crontab_command, systemctl_command, no_systemctl)
    installed: list[dict[str, Any]] = []
    notes: list[str] = []
    try:
        units = sched.show_systemd(host, name)
        if units:
            installed.append(units)
        try:
            entry = sched.show_cron(host, name)
        except ScheduleError as exc:
            entry = None
            notes.append(f"crontab not read: {exc}")
        if entry:
            installed.append(entry)
        archive = str(out.expanduser().absolute()) if out else None
        archive = archive or next((str(i["archive"]) for i in installed if i.get("archive")), None)
        history = _history(archive)
    except PplxError as exc:
        raise _fail(exc) from None
    if json_output:
        report = {"name": name, "installed": installed, "history": history, "notes": notes}
        sys.stdout.write(orjson.dumps(_masked(report)).decode("utf-8") + "\n")
        return
    lines = [f"schedule {name}:"]
    if not installed:
        lines.append("  not installed")
    for item in installed:
        if item["kind"] == "systemd":
            lines.append("  systemd units: " + ", ".join(item["files"]))
            lines += [f"    {d}" for d in item["directives"]]
            if item["timer_state"]:
                lines += [f"    {s}" for s in str(item["timer_state"]).splitlines()]
        else:
            lines.append("  crontab entry:")
            lines.append(f"    {item['line']}")
    lines += [f"  note: {n}" for n in notes]
    if history is not None:
        lines.append(f"  archive: {history['archive']}")
        lines.append("  " + _run_text("last run", history["last_run"]))
        lines.append("  " + _run_text("last success", history["last_success"]))
    _say("\n".join(lines) + "\n")


def _masked(value: Any) -> Any:
    """``value`` (JSON data) with every string's secrets masked."""
    if isinstance(value, str):
        return text.mask_secrets(value)
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _check_archive(
    host: sched.ScheduleHost, name: str, out: Path, *, cron: bool, systemd: bool
) -> None:
    """Refuse to remove a schedule of another archive than ``out`` (nothing is removed)."""
    wanted = str(out.expanduser().absolute())
    found: list[object] = []
    if not cron:
        found.append((sched.show_systemd(host, name) or {}).get("archive"))
    if not systemd and (cron or shutil.which(host.crontab[0]) is not None):
        found.append((sched.show_cron(host, name) or {}).get("archive"))
    others = sorted({str(a) for a in found if a and str(a) != wanted})
    if others:
        raise ConfigError(
            f"schedule {name} archives {', '.join(others)}, not {wanted}; nothing removed "
            "(leave out --out to remove it anyway)"
        )


@schedule_app.command()
def remove(
    name: str = NAME,
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR",
        help="Only remove a schedule of this archive [default: whichever it archives].",
    ),
    cron: bool = typer.Option(False, "--cron", help="Only remove the crontab entry."),
    systemd: bool = typer.Option(False, "--systemd", help="Only remove the systemd units."),
    unit_dir: Path | None = UNIT_DIR,
    crontab_command: str = CRONTAB,
    systemctl_command: str = SYSTEMCTL,
    no_systemctl: bool = NO_SYSTEMCTL,
    json_output: bool = typer.Option(
        False, "--json", help="Print what was removed as one JSON object (secrets masked)."
    ),
) -> None:
    """Remove the schedule: stop and delete the systemd units and/or the crontab entry.

    The archive and its history are not touched.

    \b
    Examples:
      pplx-export schedule remove
      pplx-export schedule remove --name pplx-work --cron
    """
    host = _host(unit_dir, crontab_command, systemctl_command, no_systemctl)
    removed: list[str] = []
    files: list[str] = []
    entry: str | None = None
    try:
        if out is not None:
            _check_archive(host, name, out, cron=cron, systemd=systemd)
        if not cron:
            files = [str(p) for p in sched.remove_systemd(host, name)]
            removed += [f"deleted {p}" for p in files]
        if not systemd and (cron or shutil.which(host.crontab[0]) is not None):
            entry = sched.remove_cron(host, name)
            if entry is not None:
                removed.append(f"removed crontab entry: {entry}")
    except PplxError as exc:
        raise _fail(exc) from None
    done = {"name": name, "deleted_files": files, "removed_crontab_entry": entry}
    words = "\n".join(removed or [f"schedule {name}: nothing installed"]) + "\n"
    _report(done, json_output, words)
