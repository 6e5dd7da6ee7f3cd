"""Several accounts in one archive, end to end against a multi-account simulator on loopback.

Two or three small simulated accounts (distinct users, told apart by their cookies) are
archived by one command, each under its own account folder; `--account` picks; a failing
account does not stop the others and sets the exit code; `auth check` lists every account;
no session value reaches a log or the console.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import AccountLogin, RunningSim, serve_in_thread
from tests.e2e.conftest import cookie_file, run_cli

FAST = ("--concurrency", "3", "--rate", "1000", "--burst", "100")


pytestmark = pytest.mark.usefixtures("reset_logging")


def _truth(sim: RunningSim, k: int) -> set[str]:
    import httpx

    body = httpx.get(f"{sim.base_url}/__sim/truth?account={k}", timeout=30).json()
    return {t["uuid"] for t in body["threads"]}


def _by_account(out: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in out.glob("*/*/*/thread.json"):
        folder = path.relative_to(out).parts[0]
        found.setdefault(folder, set()).add(orjson.loads(path.read_bytes())["uuid"])
    return found


def _events(result: Any, name: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["event"] == name]


def _save(sim: RunningSim, tmp_path: Path, login: AccountLogin, name: str) -> None:
    cookies = cookie_file(tmp_path / f"{name}.json", login.cookies)
    saved = run_cli(["auth", "save", "--base-url", sim.base_url, "--cookies", str(cookies),
                     "--account", name, "--log-format", "json"])  # fmt: skip
    assert saved.exit_code == 0, saved.output
    assert f"Stored account {name} in" in saved.output
    again = run_cli(["auth", "save", "--base-url", sim.base_url, "--cookies", str(cookies),
                     "--account", name, "--log-format", "json", "--json"])  # fmt: skip
    stored = orjson.loads(again.output.strip().splitlines()[-1])["stored"]
    assert [s["account"] for s in stored] == [name] and "Stored" not in again.output


def _batch(sim: RunningSim, out: Path, *extra: str, command: str = "batch") -> Any:
    args = [command, "--out", str(out), "--base-url", sim.base_url, "--log-format", "json"]
    return run_cli([*args, *FAST, *extra], out)


def test_saved_accounts_are_archived_each_under_its_own_folder_in_one_command(
    tmp_path: Path,
) -> None:
    """Two saved sessions: one `batch` archives both (separate folders, listings, runs);
    `--account` picks one; `auth check` lists both; the next `sync` stops early per account."""
    config = SimConfig(threads=12, accounts=2, era="c")
    out = tmp_path / "archive"
    with serve_in_thread(config) as sim:
        home, work = sim.logins
        _save(sim, tmp_path, home, "home")
        _save(sim, tmp_path, work, "work")
        assert sorted(p.name for p in (tmp_path / "config" / "accounts").iterdir()) == [
            "home.json",
            "work.json",
        ]
        result = _batch(sim, out)
        assert result.exit_code == 0, result.output
        truths = [_truth(sim, 0), _truth(sim, 1)]
        check = run_cli(["auth", "check", "--base-url", sim.base_url, "--log-format", "json"])
        picked = _batch(sim, out, "--account", "work", command="sync")
    assert truths[0].isdisjoint(truths[1])
    assert _by_account(out) == {home.username: truths[0], work.username: truths[1]}
    assert home.username != work.username
    assert "account home:" in result.output and "account work:" in result.output
    assert "accounts: 2 (2 ok)" in result.output
    summaries = _events(result, "RUN_SUMMARY")
    assert [s["archived"] for s in summaries] == [12, 12]
    sessions = _events(result, "SESSION_CHECKED")
    assert [s["account_id"] for s in sessions] == [home.account_id, work.account_id]
    (total,) = _events(result, "ACCOUNTS_SUMMARY")
    assert total["codes"] == {"home": 0, "work": 0} and total["exit_code"] == 0
    # auth check: every account with its state.
    assert check.exit_code == 0, check.output
    assert "Account home (saved account home):" in check.output
    assert "Account work (saved account work):" in check.output
    assert "2 accounts: home ok, work ok" in check.output
    # --account picks: only work runs, and its listing stops early (its last one completed).
    assert picked.exit_code == 0, picked.output
    assert "account home:" not in picked.output
    (run,) = _events(picked, "RUN_SUMMARY")
    assert run["archived"] == 0 and run["unchanged"] == 12
    assert not _events(picked, "EARLY_STOP_DISABLED")
    records = orjson.loads((out / "index" / "accounts.json").read_bytes())["accounts"]
    assert set(records) == {"home", "work"} and all(r["listing_complete"] for r in records.values())
    logs = b"".join(p.read_bytes() for p in (out / "index" / "logs").glob("*.jsonl"))
    shown = logs + result.output.encode() + check.output.encode()
    for login in (home, work):
        for value in login.cookies.values():
            if value not in (login.account_id,):
                assert value.encode() not in shown


def test_a_failing_account_does_not_stop_the_others_and_sets_the_exit_code(
    tmp_path: Path,
) -> None:
    """Three saved sessions, the middle one no longer valid: the other two are archived, the
    summary names the failed one, and the exit code is the auth failure's (3)."""
    config = SimConfig(threads=8, accounts=3)
    out = tmp_path / "archive"
    with serve_in_thread(config) as sim:
        a, b, c = sim.logins
        _save(sim, tmp_path, a, "a")
        _save(sim, tmp_path, b, "b")
        _save(sim, tmp_path, c, "c")
        stale = tmp_path / "config" / "accounts" / "b.json"
        doc = json.loads(stale.read_bytes())
        doc["cookies"] = {k: "expired-" + v for k, v in doc["cookies"].items()}
        stale.write_text(json.dumps(doc))
        result = _batch(sim, out)
        again = _batch(sim, out, command="sync")
        truths = [_truth(sim, 0), _truth(sim, 2)]
    assert result.exit_code == 3, result.output
    assert _by_account(out) == {a.username: truths[0], c.username: truths[1]}
    assert "account b: error: The session is logged out" in result.output
    assert "accounts: 3 (2 ok); failed: b" in result.output
    (failed,) = _events(result, "ACCOUNT_FAILED")
    assert failed["account"] == "b" and failed["exit_code"] == 3
    assert _events(result, "ACCOUNTS_SUMMARY")[0]["codes"] == {"a": 0, "b": 3, "c": 0}
    # The next sync: a stops early; b has never completed a listing; c, run after an
    # incomplete listing run (b's), lists everything too (the archive-wide guard).
    assert again.exit_code == 3
    disabled = _events(again, "EARLY_STOP_DISABLED")
    assert [e.get("account") for e in disabled] == ["b", None]
    assert [r["unchanged"] for r in _events(again, "RUN_SUMMARY")] == [8, 0, 8]


def test_a_multi_account_cookie_export_archives_every_account(tmp_path: Path) -> None:
    """A browser logged in to two accounts exports both session cookies in one file: each
    account is archived under its folder; `auth save` of that file saves both by user name."""
    config = SimConfig(threads=6, accounts=2, era="c")
    out = tmp_path / "archive"
    with serve_in_thread(config) as sim:
        first, second = sim.logins
        jar = {**first.cookies, **second.cookies, "pplx.visitor-id": "v-1"}
        jar["__Host-pplx-last-active-account"] = second.account_id
        cookies = cookie_file(tmp_path / "browser.json", jar)
        result = _batch(sim, out, "--cookies", str(cookies))
        one = _batch(sim, out, "--cookies", str(cookies), "--account", first.account_id)
        save = run_cli(["auth", "save", "--base-url", sim.base_url, "--cookies", str(cookies),
                        "--log-format", "json"])  # fmt: skip
        truths = [_truth(sim, 0), _truth(sim, 1)]
    assert result.exit_code == 0, result.output
    assert _by_account(out) == {first.username: truths[0], second.username: truths[1]}
    assert f"account {first.account_id}:" in result.output
    assert one.exit_code == 0 and f"account {second.account_id}:" not in one.output
    assert save.exit_code == 0, save.output
    saved = sorted(p.stem for p in (tmp_path / "config" / "accounts").iterdir())
    assert saved == sorted([first.username, second.username])


def test_unknown_account_is_a_usage_error_naming_the_known_ones(tmp_path: Path) -> None:
    config = SimConfig(threads=3, accounts=2)
    out = tmp_path / "archive"
    with serve_in_thread(config) as sim:
        _save(sim, tmp_path, sim.logins[0], "home")
        result = _batch(sim, out, "--account", "nope")
        bad = run_cli(["auth", "save", "--session-token", "x", "--account", "../up"])
    assert result.exit_code == 2
    assert "--account nope: no such account (known: home)" in result.output
    assert not list(out.glob("*/*/*/thread.json"))
    assert bad.exit_code == 2 and "an account name is 1-64 letters" in bad.output
