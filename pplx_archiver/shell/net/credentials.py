"""Several accounts: named saved sessions, multi-account cookie exports, picking accounts.

A run archives every account it has credentials for, each under its own account folder:

- an explicit ``--cookies FILE`` / ``--session-token`` / ``--cookies-from BROWSER`` is used
  alone; a browser (or its export) logged in to several accounts holds one
  ``__Secure-pplx.session.<uuid>`` cookie per account and gives one session per account
  (:func:`~pplx_archiver.shell.net.cookies.split_sessions`), each named by its account uuid;
- otherwise every saved session: ``<config dir>/credentials.json`` (the account named
  ``default``, written by ``auth save``) and ``<config dir>/accounts/<NAME>.json`` (written by
  ``auth save --account NAME``), in name order after ``default``.

``--account NAME`` (repeatable) keeps only the named accounts: a saved session's name or an
account uuid of a multi-account export. Every saved file has the format of the stored
credential (mode 0600, replaced atomically, updated when the server rotates the cookie).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from pplx_archiver.core.thread.layout import safe_component
from pplx_archiver.errors import ConfigError, LoggedOutError
from pplx_archiver.settings import Settings
from pplx_archiver.shell.net.auth import (
    HOW_TO_CONNECT,
    Credential,
    load_credential,
    read_stored_credential,
    register_cookies,
)
from pplx_archiver.shell.net.cookies import split_sessions

ACCOUNTS_DIR = "accounts"
DEFAULT_ACCOUNT = "default"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_NOT_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclasses.dataclass(frozen=True, slots=True)
class NamedCredential:
    """One account's credential and the name it is known by in this run."""

    name: str
    credential: Credential


def check_account_name(name: str) -> str:
    """``name`` when it can name a saved session, else a ConfigError saying what is allowed."""
    if not _NAME.match(name):
        raise ConfigError(
            f"--account {name!r}: an account name is 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def name_from(text: str | None, fallback: str) -> str:
    """A valid account name made from a user name (or ``fallback`` when nothing is left)."""
    safe = safe_component(text or "", fallback="")
    name = re.sub(r"-{2,}", "-", _NOT_NAME.sub("-", safe)).strip(".-_")[:64]
    return name if name and _NAME.match(name) else fallback


def account_path(settings: Settings, name: str) -> Path:
    """Where the saved session of account ``name`` lives (``default``: credentials.json)."""
    if name == DEFAULT_ACCOUNT:
        return settings.credential_path
    return settings.config_dir / ACCOUNTS_DIR / f"{check_account_name(name)}.json"


def saved_accounts(settings: Settings) -> list[str]:
    """Names of the saved sessions: ``default`` first (when saved), then the others by name."""
    names = [DEFAULT_ACCOUNT] if settings.credential_path.is_file() else []
    folder = settings.config_dir / ACCOUNTS_DIR
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            if _NAME.match(path.stem) and path.stem != DEFAULT_ACCOUNT and path.is_file():
                names.append(path.stem)
    return names


def _saved(settings: Settings, name: str) -> NamedCredential:
    if name == DEFAULT_ACCOUNT:
        return NamedCredential(name, load_credential(settings))
    path = account_path(settings, name)
    cookies = read_stored_credential(path)
    if cookies is None:
        raise ConfigError(f"--account {name}: no saved session {path}")
    register_cookies(cookies)
    return NamedCredential(name, Credential(cookies, f"saved account {name}", persist_to=path))


def _explicit(settings: Settings) -> list[NamedCredential]:
    cred = load_credential(settings)
    parts = split_sessions(cred.cookies)
    if len(parts) == 1:
        return [NamedCredential(DEFAULT_ACCOUNT, cred)]
    if settings.account_id:  # PPLX_ACCOUNT_ID / --account-id names the one account to use
        parts = [p for p in parts if p[0] == settings.account_id] or parts[:1]
        return [NamedCredential(DEFAULT_ACCOUNT, Credential(parts[0][1], cred.source))]
    return [
        NamedCredential(account or DEFAULT_ACCOUNT, Credential(c, f"{cred.source}, {account}"))
        for account, c in parts
    ]


def has_explicit_credential(settings: Settings) -> bool:
    """True when the command line (or environment) names the session to use."""
    return bool(settings.cookies_file or settings.session_token or settings.cookies_from)


def resolve_credentials(settings: Settings, picks: Sequence[str] = ()) -> list[NamedCredential]:
    """Every account the run covers (see the module docstring), ``picks`` applied."""
    if has_explicit_credential(settings):
        creds = _explicit(settings)
    else:
        names = saved_accounts(settings)
        if not names:
            raise LoggedOutError("No session configured. " + HOW_TO_CONNECT)
        creds = [_saved(settings, name) for name in names]
    if not picks:
        return creds
    chosen: list[NamedCredential] = []
    for pick in picks:
        match = [c for c in creds if pick in (c.name, c.credential.account_id)]
        if not match:
            known = ", ".join(c.name for c in creds)
            raise ConfigError(f"--account {pick}: no such account (known: {known})")
        chosen += [c for c in match if c not in chosen]
    return chosen
