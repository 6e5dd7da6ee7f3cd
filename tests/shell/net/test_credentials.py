"""Several accounts: multi-account cookie sets split per account, saved sessions by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pplx_archiver.errors import ConfigError, LoggedOutError
from pplx_archiver.shell.net.auth import save_credential
from pplx_archiver.shell.net.cookies import (
    LAST_ACTIVE_COOKIE,
    NEXT_AUTH_COOKIE,
    PPLX_SESSION_PREFIX,
    session_era,
    split_sessions,
)
from pplx_archiver.shell.net.credentials import (
    account_path,
    check_account_name,
    name_from,
    resolve_credentials,
    saved_accounts,
)
from tests.shell.helpers import settings

A = "0b7c9a2e-1111-4222-8333-444455556666"
B = "9f8e7d6c-aaaa-4bbb-8ccc-ddddeeeeffff"


def test_a_multi_account_jar_gives_one_era_c_session_per_account() -> None:
    jar = {
        NEXT_AUTH_COOKIE: "tok-a",
        PPLX_SESSION_PREFIX + A: "tok-a",
        PPLX_SESSION_PREFIX + B: "tok-b",
        LAST_ACTIVE_COOKIE: A,
        "pplx.visitor-id": "v",
    }
    parts = split_sessions(jar)
    assert [account for account, _ in parts] == [A, B]
    first, second = (cookies for _, cookies in parts)
    assert first == {
        "pplx.visitor-id": "v",
        PPLX_SESSION_PREFIX + A: "tok-a",
        LAST_ACTIVE_COOKIE: A,
    }
    assert second == {
        "pplx.visitor-id": "v",
        PPLX_SESSION_PREFIX + B: "tok-b",
        LAST_ACTIVE_COOKIE: B,
    }
    assert {session_era(c) for c in (first, second)} == {"C"}


@pytest.mark.parametrize(
    "jar",
    [
        {NEXT_AUTH_COOKIE: "tok"},
        {PPLX_SESSION_PREFIX + A: "tok", LAST_ACTIVE_COOKIE: A},
        {PPLX_SESSION_PREFIX + A: "tok", PPLX_SESSION_PREFIX + B: ""},  # an empty one is none
    ],
)
def test_a_single_session_is_kept_as_it_is(jar: dict[str, str]) -> None:
    ((_, cookies),) = split_sessions(jar)
    assert cookies == jar


@pytest.mark.parametrize("bad", ["", "../up", "a/b", ".hidden", "-x", "x" * 65, "tab\there"])
def test_account_names_that_could_be_paths_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="an account name is 1-64 letters"):
        check_account_name(bad)


def test_user_names_become_safe_account_names() -> None:
    assert name_from("Ana Ñ/../x", "fallback") == "Ana-x"
    assert name_from("..", "fallback") == "fallback"
    assert name_from(None, A) == A


def _save(path: Path, token: str) -> None:
    save_credential(path, {NEXT_AUTH_COOKIE: token})


def test_saved_sessions_are_found_default_first_and_picked_by_name(tmp_path: Path) -> None:
    conf = settings(config_dir=tmp_path)
    with pytest.raises(LoggedOutError, match="No session configured"):
        resolve_credentials(conf)
    _save(account_path(conf, "work"), "tok-work")
    _save(account_path(conf, "default"), "tok-default")
    _save(account_path(conf, "club"), "tok-club")
    (tmp_path / "accounts" / "not a name.json").write_text("{}")  # ignored
    assert saved_accounts(conf) == ["default", "club", "work"]
    creds = resolve_credentials(conf)
    assert [c.name for c in creds] == ["default", "club", "work"]
    assert [c.credential.cookies[NEXT_AUTH_COOKIE] for c in creds] == [
        "tok-default",
        "tok-club",
        "tok-work",
    ]
    assert creds[2].credential.persist_to == tmp_path / "accounts" / "work.json"
    picked = resolve_credentials(conf, ["work", "default", "work"])
    assert [c.name for c in picked] == ["work", "default"]
    with pytest.raises(ConfigError, match=r"--account nope: no such account \(known: default"):
        resolve_credentials(conf, ["nope"])


def test_a_damaged_saved_session_names_its_file(tmp_path: Path) -> None:
    conf = settings(config_dir=tmp_path)
    path = account_path(conf, "work")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"cookies": {"x": 1}}))
    with pytest.raises(ConfigError, match=r"work\.json: stored credential has no 'cookies'"):
        resolve_credentials(conf)


def test_an_explicit_multi_account_session_is_used_per_account(tmp_path: Path) -> None:
    header = f"{PPLX_SESSION_PREFIX}{A}=tok-a; {PPLX_SESSION_PREFIX}{B}=tok-b"
    conf = settings(config_dir=tmp_path, session_token=header)
    _save(account_path(conf, "work"), "tok-work")  # not used: the command line says which
    creds = resolve_credentials(conf)
    assert [c.name for c in creds] == [A, B]
    assert [c.credential.account_id for c in creds] == [A, B]
    assert [c.name for c in resolve_credentials(conf, [B])] == [B]


def test_a_forced_account_id_picks_that_account_of_a_multi_account_session(
    tmp_path: Path,
) -> None:
    header = f"{PPLX_SESSION_PREFIX}{A}=tok-a; {PPLX_SESSION_PREFIX}{B}=tok-b"
    conf = settings(config_dir=tmp_path, session_token=header, account_id=B)
    (only,) = resolve_credentials(conf)
    assert only.credential.cookies == {PPLX_SESSION_PREFIX + B: "tok-b", LAST_ACTIVE_COOKIE: B}
