"""``pplx-export doctor``: everything a run depends on, checked in one go.

Exit codes: 0 no check is an error (warnings allowed); 1 some check is an error. Nothing is
written, the archive included.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import structlog
import typer

from pplx_archiver import logconfig
from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import BASE_URL, COOKIES, COOKIES_FROM, TOKEN
from pplx_archiver.errors import PplxError
from pplx_archiver.settings import Settings, load_settings, setting_sources
from pplx_archiver.shell.care import doctor as checks
from pplx_archiver.shell.care.doctor import ERROR, OK, Check

HOW_TO_SAVE = "`pplx-export auth save --cookies cookies.txt` (docs/connecting.md)"


def _settings(overrides: dict[str, Any]) -> tuple[Settings, list[Check]]:
    try:
        settings = load_settings(overrides)
        found = checks.config_checks(settings, setting_sources(overrides))
    except PplxError as exc:
        fallback = Settings(**{k: v for k, v in overrides.items() if k == "out_dir" and v})
        hint = "fix the setting named; every other check uses the defaults"
        return fallback, [Check("config", ERROR, logconfig.redact_text(str(exc)), hint)]
    return settings, found


async def _session_checks(settings: Settings, offline: bool) -> list[Check]:
    """The configured session(s); against the server unless ``offline``."""
    from pplx_archiver.shell.net.auth import open_session
    from pplx_archiver.shell.net.credentials import resolve_credentials

    try:
        accounts = resolve_credentials(settings)
    except PplxError as exc:
        return [Check("session", ERROR, _first_sentence(exc), HOW_TO_SAVE)]
    if offline:
        return [
            Check("session", OK, f"{a.name}: {a.credential.source} (not checked: --offline)")
            for a in accounts
        ]
    quick = dataclasses.replace(settings, max_attempts=2)  # an unreachable host: seconds
    found: list[Check] = []
    for account in accounts:
        try:
            async with open_session(quick, credential=account.credential) as (_client, info):
                detail = (
                    f"{account.name}: logged in, plan {info.plan} ({account.credential.source})"
                )
                found.append(Check("session", OK, detail))
        except PplxError as exc:
            hint = HOW_TO_SAVE if exc.exit_code == 3 else "check --base-url and the network"
            found.append(Check("session", ERROR, f"{account.name}: {_first_sentence(exc)}", hint))
    return found


def _first_sentence(exc: BaseException) -> str:
    text = logconfig.redact_text(str(exc))
    return text.split(". ")[0].rstrip(".")


def _report(found: list[Check], as_json: bool) -> None:
    if as_json:
        body = {
            "checks": [dataclasses.asdict(c) for c in found],
            "errors": sum(c.status == ERROR for c in found),
            "warnings": sum(c.status not in (OK, ERROR) for c in found),
        }
        sys.stdout.write(orjson.dumps(body).decode("utf-8") + "\n")
        return
    for check in found:
        typer.echo(check.line())


@app.command("doctor")
def doctor(
    out: Path | None = typer.Option(
        None, "--out", "-o", metavar="DIR", help="Archive folder to check [default: ./archive]."
    ),
    offline: bool = typer.Option(
        False, "--offline", help="Do not ask the server whether the session is logged in."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
) -> None:
    """Check in one go what the commands depend on; one line each: ok, warning or error.

    Python and SQLite (FTS5), the configuration and where each setting came from (secrets
    masked), the session (against the server unless --offline), the archive (index, writer
    lock, last run and its exit code), the schedule, and the browser site's tests use.
    Exit 0 when no check is an error, 1 otherwise. Writes nothing.

    \b
    Examples:
      pplx-export doctor -o ~/pplx-archive
      pplx-export doctor --offline --json
    """
    overrides = {"out_dir": out, "base_url": base_url, "cookies_file": cookies,
                 "session_token": session_token, "cookies_from": cookies_from}  # fmt: skip
    settings, config = _settings(overrides)
    logconfig.register_secret(settings.session_token)
    logconfig.configure(log_format="console", json_files=[], console_level="error")
    try:
        found = [checks.check_python(), checks.check_sqlite(), *config]
        found += anyio.run(_session_checks, settings, offline)
        found += checks.archive_checks(settings.out_dir)
        found += [checks.schedule_check(), checks.browser_check()]
    finally:
        structlog.reset_defaults()
    _report(found, as_json)
    raise typer.Exit(checks.exit_code(found))
