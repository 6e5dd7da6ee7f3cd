"""Session commands: ``pplx-export auth check``, ``auth save`` and ``pplx-export spaces``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import typer

from pplx_archiver import logconfig
from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import (
    ACCOUNT,
    BASE_URL,
    COOKIES,
    COOKIES_FROM,
    IMPERSONATE,
    LOG_FORMAT,
    PROXY,
    TOKEN,
)
from pplx_archiver.errors import (
    EXIT_AUTH,
    EXIT_OK,
    ConfigError,
    FetchError,
    ForbiddenError,
    LoggedOutError,
    PplxError,
    exit_code_for,
)
from pplx_archiver.settings import Settings, load_settings
from pplx_archiver.shell.net.auth import (
    Credential,
    load_credential,
    open_session,
    save_credential,
)
from pplx_archiver.shell.net.cookies import split_sessions
from pplx_archiver.shell.net.credentials import (
    DEFAULT_ACCOUNT,
    NamedCredential,
    account_path,
    check_account_name,
    has_explicit_credential,
    name_from,
    resolve_credentials,
)
from pplx_archiver.shell.net.listing import LIST_PATH, list_spaces

auth_app = typer.Typer(
    name="auth",
    help="Check the session used to reach your account, or store it for later runs.",
    no_args_is_help=True,
)
app.add_typer(auth_app, name="auth")


def _execute(job: Callable[[Settings], Awaitable[int]], overrides: dict[str, Any]) -> None:
    """Build settings, run ``job`` under anyio, print errors for a person, exit with the code."""
    try:
        settings = load_settings(overrides)
        logconfig.register_secret(settings.session_token)
        logconfig.configure(log_format=settings.log_format)
        code = anyio.run(job, settings)
    except (PplxError, KeyboardInterrupt) as exc:
        message = logconfig.redact_text(str(exc)) if isinstance(exc, PplxError) else "interrupted"
        typer.echo(f"error: {message}", err=True)
        code = exit_code_for(exc)
    raise typer.Exit(code)


def _overrides(
    base_url: str | None,
    cookies: Path | None,
    session_token: str | None,
    cookies_from: str | None,
    impersonate: str | None,
    log_format: str | None,
    proxy: str | None,
) -> dict[str, Any]:
    return {
        "base_url": base_url,
        "cookies_file": cookies,
        "session_token": session_token,
        "cookies_from": cookies_from,
        "impersonate": impersonate,
        "log_format": log_format,
        "proxy": proxy,
    }


class _Said:
    """What `auth check` found: printed line by line, or kept for one JSON object."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.fields: dict[str, Any] = {}

    def __call__(self, key: str, value: Any, line: str | None) -> None:
        self.fields[key] = value
        if not self.as_json and line is not None:
            typer.echo(line)


async def _check_one(
    settings: Settings, credential: Credential | None = None, say: _Said | None = None
) -> int:
    say = say or _Said(False)
    async with open_session(settings, credential=credential) as (client, info):
        say("logged_in", True, f"Session: logged in (era {info.era or '?'})")
        say("era", info.era, None)
        say("account_id", info.account_id, f"  account id: {info.account_id or 'unknown'}")
        say("username", info.username, f"  user name:  {info.username}" if info.username else None)
        say("email", info.email_masked, f"  e-mail:     {info.email_masked or 'unknown'}")
        say("plan", info.plan, f"  plan:       {info.plan}")
        say("expires", info.expires, f"  expires:    {info.expires}" if info.expires else None)
        return await _check_threads(client, say)


async def _check_threads(client: Any, say: _Said) -> int:
    body = {"limit": 1, "offset": 0, "ascending": False, "search_term": ""}
    try:
        listed, _ = await client.post_json(LIST_PATH, body, kind="list", auth_fatal=True)
    except FetchError as exc:
        say("thread_list", f"failed: {exc}", f"Thread list: FAILED ({exc})")
        return exit_code_for(exc)
    if not isinstance(listed, list) or not listed:
        say("thread_list", "empty", "Thread list: answered with no threads. If your library is "
            "not empty, the session is not accepted by the thread endpoints (Era C accounts "
            "need the account id; try `--cookies` with a fresh export).")  # fmt: skip
        return EXIT_OK
    first = listed[0] if isinstance(listed[0], dict) else {}
    thread_id = first.get("slug") or first.get("uuid")
    say("thread_list", "ok", f"Thread list: OK (newest thread {thread_id})")
    if not isinstance(thread_id, str) or not thread_id:
        return EXIT_OK
    try:
        await client.get_json(f"/rest/thread/{thread_id}", [("limit", "1")], kind="thread")
    except ForbiddenError as exc:
        say("thread_detail", "refused", f"Thread detail: REFUSED ({exc.code or exc})")
        return EXIT_AUTH
    except FetchError as exc:
        say("thread_detail", f"failed: {exc}", f"Thread detail: FAILED ({exc})")
        return exit_code_for(exc)
    say("thread_detail", "ok", "Thread detail: OK")
    return EXIT_OK


def _check_job(picks: list[str], as_json: bool) -> Callable[[Settings], Awaitable[int]]:
    """``auth check``: the one session as before; with several accounts, each in turn."""

    async def job(settings: Settings) -> int:
        try:
            accounts = resolve_credentials(settings, picks)
        except LoggedOutError:
            if picks:
                raise
            return await _check_one(settings)  # says that no session is configured
        if as_json:
            return await _check_json(settings, accounts)
        if len(accounts) == 1 and not picks:
            return await _check_one(settings, accounts[0].credential)
        codes: dict[str, int] = {}
        for named in accounts:
            typer.echo(f"Account {named.name} ({named.credential.source}):")
            try:
                codes[named.name] = await _check_one(settings, named.credential)
            except PplxError as exc:
                typer.echo(f"Session: {logconfig.redact_text(str(exc))}")
                codes[named.name] = exit_code_for(exc)
        states = ", ".join(f"{k} {'ok' if v == EXIT_OK else f'exit {v}'}" for k, v in codes.items())
        typer.echo(f"{len(codes)} accounts: {states}")
        return max(codes.values(), default=EXIT_OK)

    return job


async def _check_json(settings: Settings, accounts: list[NamedCredential]) -> int:
    """Every account's check as one JSON object: ``{"accounts": [...], "exit_code": N}``."""
    found: list[dict[str, Any]] = []
    for named in accounts:
        say = _Said(True)
        try:
            code = await _check_one(settings, named.credential, say)
        except PplxError as exc:
            code = exit_code_for(exc)
            say("error", logconfig.redact_text(str(exc)), None)
        found.append({"name": named.name, "source": named.credential.source, **say.fields,
                      "exit_code": code})  # fmt: skip
    worst = max((a["exit_code"] for a in found), default=EXIT_OK)
    typer.echo(orjson.dumps({"accounts": found, "exit_code": worst}).decode("utf-8"))
    return int(worst)


@auth_app.command("check")
def auth_check(
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
    impersonate: str | None = IMPERSONATE,
    proxy: str | None = PROXY,
    log_format: str | None = LOG_FORMAT,
    account: list[str] | None = ACCOUNT,
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object: every account's findings and exit code."
    ),
) -> None:
    """Probe each account's session: id, masked e-mail, plan, era, and whether threads answer.

    Every account is checked (each saved session, or each account of a multi-account cookie
    export); the exit code is the worst of them.

    \b
    Examples:
      pplx-export auth check
      pplx-export auth check --cookies ~/Downloads/cookies.txt
      pplx-export auth check --account work
    """
    _execute(
        _check_job(list(account or ()), as_json),
        _overrides(base_url, cookies, session_token, cookies_from, impersonate, log_format, proxy),
    )


@auth_app.command("save")
def auth_save(
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
    impersonate: str | None = IMPERSONATE,
    proxy: str | None = PROXY,
    log_format: str | None = LOG_FORMAT,
    check: bool = typer.Option(
        True, "--check/--no-check", help="Probe the session before storing it."
    ),
    account: str | None = typer.Option(
        None,
        "--account",
        metavar="NAME",
        help="Save it as this account, next to the others (one archive, several accounts) "
        "[default: the default account; each account's user name for a multi-account export].",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print what was stored as one JSON object (never a secret)."
    ),
) -> None:
    """Store the session (from --cookies, --session-token or --cookies-from) for later runs.

    The credential file is written with mode 0600 in the user config directory and updated
    when the server rotates the session cookie during a run. With `--account NAME` it is
    saved as one more account; later runs archive every saved account (each under its own
    account folder) unless `--account` picks some. A cookie export of a browser logged in to
    several accounts is saved as one account each.

    \b
    Examples:
      pplx-export auth save --cookies ~/Downloads/cookies.txt
      pplx-export auth save --cookies-from firefox --account work
    """

    async def job(settings: Settings) -> int:
        if not has_explicit_credential(settings):
            raise ConfigError(
                "auth save needs a session to store: --cookies FILE, --session-token or "
                "--cookies-from BROWSER"
            )
        name = check_account_name(account) if account is not None else None
        stored: list[dict[str, str | None]] = []

        def say(line: str) -> None:
            if not as_json:
                typer.echo(line)

        for named in _to_save(load_credential(settings), name):
            cred, target, who = named.credential, named.name, None
            if check:
                async with open_session(settings, credential=cred) as (client, info):
                    cred = Credential(client.cookies, cred.source)
                    who = info.email_masked or info.account_id
                    say(f"Session: logged in as {who}")
                    if target not in (name, DEFAULT_ACCOUNT):
                        target = name_from(info.username, target)
            path = account_path(settings, target)
            save_credential(path, cred.cookies, source=cred.source)
            label = "the session" if target == DEFAULT_ACCOUNT else f"account {target}"
            say(f"Stored {label} in {path} (readable only by you).")
            stored.append({"account": target, "path": str(path), "logged_in_as": who})
        if as_json:
            typer.echo(orjson.dumps({"stored": stored}).decode("utf-8"))
        return EXIT_OK

    _execute(
        job,
        _overrides(base_url, cookies, session_token, cookies_from, impersonate, log_format, proxy),
    )


def _to_save(cred: Credential, name: str | None) -> list[NamedCredential]:
    """The sessions ``auth save`` stores: one, or one per account of a multi-account export."""
    parts = split_sessions(cred.cookies)
    if len(parts) == 1:
        return [NamedCredential(name or DEFAULT_ACCOUNT, cred)]
    if name is not None:
        for account_id, cookies in parts:
            if account_id == name:
                return [NamedCredential(name, Credential(cookies, cred.source))]
        ids = ", ".join(str(a) for a, _ in parts)
        raise ConfigError(
            f"--account {name}: the session holds {len(parts)} accounts ({ids}); save them "
            "all without --account, or name one of these account ids"
        )
    return [NamedCredential(str(a), Credential(c, cred.source)) for a, c in parts]


@app.command("spaces")
def spaces_command(
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR",
        help="Archive folder, as on every command (spaces reads and writes nothing in it).",
    ),
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
    impersonate: str | None = IMPERSONATE,
    proxy: str | None = PROXY,
    log_format: str | None = LOG_FORMAT,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array, one object a space."),
) -> None:
    """List the spaces (collections) of your account.

    \b
    Examples:
      pplx-export spaces
      pplx-export spaces --cookies ~/Downloads/cookies.txt
    """

    async def job(settings: Settings) -> int:
        async with open_session(settings) as (client, _info):
            spaces = await list_spaces(client)
        if as_json:
            keys = ("uuid", "slug", "title", "emoji", "description", "thread_count")
            typer.echo(orjson.dumps([{k: getattr(s, k) for k in keys} for s in spaces]).decode())
            return EXIT_OK
        if not spaces:
            typer.echo("No spaces.")
            return EXIT_OK
        typer.echo(f"{'slug':<40} {'threads':>7}  title")
        for space in spaces:
            count = "" if space.thread_count is None else str(space.thread_count)
            typer.echo(f"{space.slug:<40} {count:>7}  {space.title}")
        typer.echo(f"{len(spaces)} spaces")
        return EXIT_OK

    overrides = _overrides(
        base_url, cookies, session_token, cookies_from, impersonate, log_format, proxy
    )
    _execute(job, overrides | {"out_dir": out})
