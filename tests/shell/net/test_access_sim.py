"""Against the simulator: Era B and C sessions, the account header, logged-out refusal, GraphQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.errors import ForbiddenError, LoggedOutError
from pplx_archiver.shell.net.auth import Credential, open_session
from pplx_archiver.shell.net.cookies import is_session_cookie
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.net.listing import iter_threads
from pplx_archiver.sim.config import LIBRARY_PAGINATION_HASH, LIBRARY_ROOT_HASH, SimConfig
from pplx_archiver.sim.runner import login_for, serve_in_thread
from pplx_archiver.sim.server import create_app
from tests.shell.fake_time import StepTime
from tests.shell.helpers import settings

SIM = "http://sim.test"


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    """CLI runs point the log sink at the runner's stream; later tests must not inherit it."""
    yield
    structlog.reset_defaults()


def _transport(config: SimConfig) -> httpx.ASGITransport:
    return httpx.ASGITransport(app=create_app(config))


async def _probe_list_and_fetch(client: ApiClient) -> tuple[int, Any]:
    listed, _ = await client.post_json("/rest/thread/list_ask_threads", {"limit": 5, "offset": 0})
    try:
        await client.get_json(f"/rest/thread/{listed[0]['slug']}" if listed else "/rest/thread/x")
    except ForbiddenError as exc:
        return len(listed), exc.code
    return len(listed), "ok"


async def test_era_c_needs_the_account_header() -> None:
    """Era C: without x-pplx-account lists are [] and details 403; with it both work."""
    config = SimConfig(threads=8, era="c")
    cookies, account, _ = login_for(config)
    t = StepTime()
    without = ApiClient(settings(base_url=SIM), cookies=cookies, transport=_transport(config),
                        sleep=t.sleep, clock=t.clock)  # fmt: skip
    async with without:
        listed, _ = await without.post_json("/rest/thread/list_ask_threads", {"limit": 5})
        assert listed == []
        truth_id = (await without.get_json("/__sim/truth"))[0]["threads"][0]["uuid"]
        with pytest.raises(ForbiddenError) as raised:
            await without.get_json(f"/rest/thread/{truth_id}")
        assert raised.value.code == "VIEW_THREAD_NOT_ALLOWED"
    cred = Credential(cookies, "sim")
    async with open_session(settings(base_url=SIM), credential=cred, transport=_transport(config),
                            sleep=t.sleep, clock=t.clock) as (client, info):  # fmt: skip
        assert info.era == "C" and info.account_id == account
        assert await _probe_list_and_fetch(client) == (5, "ok")


async def test_era_b_session_works_without_header() -> None:
    """Era B: the NextAuth cookie alone lists and fetches threads."""
    config = SimConfig(threads=8, era="b")
    cookies, _, _ = login_for(config)
    t = StepTime()
    async with open_session(settings(base_url=SIM), credential=Credential(cookies, "sim"),
                            transport=_transport(config), sleep=t.sleep,
                            clock=t.clock) as (client, info):  # fmt: skip
        assert info.era == "B" and info.plan == "pro"
        assert await _probe_list_and_fetch(client) == (5, "ok")


async def test_logged_out_simulator_is_refused() -> None:
    """A logged-out session (200 [] lists) never gets past the probe."""
    config = SimConfig(threads=8, logged_in=False)
    cookies, _, _ = login_for(config)
    t = StepTime()
    with pytest.raises(LoggedOutError):
        async with open_session(settings(base_url=SIM), credential=Credential(cookies, "sim"),
                                transport=_transport(config), sleep=t.sleep,
                                clock=t.clock):  # fmt: skip
            pytest.fail("must not open")


@pytest.mark.parametrize("era", ["b", "c"])
async def test_graphql_stale_hash_falls_back_to_the_same_threads(era: str) -> None:
    """With the simulator's hashes GraphQL lists all threads; stale ones fall back to REST."""
    config = SimConfig(threads=60, era=era)
    cookies, _, _ = login_for(config)
    t = StepTime()
    good = {"LibraryThreadsRelayQuery": LIBRARY_ROOT_HASH,
            "LibraryRecentThreadsPaginationQuery": LIBRARY_PAGINATION_HASH}  # fmt: skip
    async with open_session(settings(base_url=SIM), credential=Credential(cookies, "sim"),
                            transport=_transport(config), sleep=t.sleep,
                            clock=t.clock) as (client, _):  # fmt: skip
        rest = [r.thread_id async for r in iter_threads(client, page_size=20)]
        gql = [r.thread_id async for r in iter_threads(client, lister="graphql",
                                                       graphql_hashes=good)]  # fmt: skip
        stale = [r.thread_id async for r in iter_threads(client, lister="graphql",
                                                         graphql_hashes={})]  # fmt: skip
        truth, _ = await client.get_json("/__sim/truth")
    listed = {t["uuid"] for t in truth["threads"] if t["era_state"] != "deleted"}
    assert len(rest) == len(set(rest)) == len(listed)
    assert set(rest) == set(gql) == set(stale) == listed


async def test_graphql_empty_end_cursor_against_simulator() -> None:
    """The simulator's 'hasNextPage but empty endCursor' page ends the GraphQL listing."""
    config = SimConfig(threads=60, graphql_empty_end_cursor=True)
    cookies, _, _ = login_for(config)
    t = StepTime()
    good = {"LibraryThreadsRelayQuery": LIBRARY_ROOT_HASH,
            "LibraryRecentThreadsPaginationQuery": LIBRARY_PAGINATION_HASH}  # fmt: skip
    async with open_session(settings(base_url=SIM), credential=Credential(cookies, "sim"),
                            transport=_transport(config), sleep=t.sleep,
                            clock=t.clock) as (client, _):  # fmt: skip
        ids = [r.thread_id async for r in iter_threads(client, lister="graphql",
                                                       graphql_hashes=good)]  # fmt: skip
    assert len(ids) == len(set(ids)) == 60


def _cookie_file(tmp_path: Path, cookies: dict[str, str]) -> Path:
    path = tmp_path / "cookies.json"
    items = [{"name": k, "value": v, "domain": "127.0.0.1"} for k, v in cookies.items()]
    path.write_text(json.dumps(items))
    return path


def _cli(tmp_path: Path, *args: str) -> Any:
    _register()
    env = {"PPLX_CONFIG_DIR": str(tmp_path / "cfg"), "PPLX_SESSION_TOKEN": "",
           "PPLX_COOKIES": "", "PPLX_BASE_URL": ""}  # fmt: skip
    return CliRunner().invoke(app, list(args), env=env)


@pytest.mark.parametrize("era", ["b", "c"])
def test_cli_auth_check_and_save(tmp_path: Path, era: str) -> None:
    """`auth check` reports the session and working thread endpoints; `auth save` stores it."""
    with serve_in_thread(SimConfig(threads=5, era=era)) as sim:
        cookies = _cookie_file(tmp_path, sim.cookies)
        result = _cli(tmp_path, "auth", "check", "--base-url", sim.base_url,
                      "--cookies", str(cookies), "--log-format", "json")  # fmt: skip
        assert result.exit_code == 0, result.output
        assert f"account id: {sim.account_id}" in result.stdout
        assert f"era {era.upper()}" in result.stdout
        assert "s***@example.invalid" in result.stdout and "sim@" not in result.stdout
        assert "Thread detail: OK" in result.stdout
        saved = _cli(tmp_path, "auth", "save", "--base-url", sim.base_url,
                     "--cookies", str(cookies), "--log-format", "json")  # fmt: skip
        assert saved.exit_code == 0, saved.output
        store = tmp_path / "cfg" / "credentials.json"
        assert (store.stat().st_mode & 0o777) == 0o600
        again = _cli(tmp_path, "spaces", "--base-url", sim.base_url, "--log-format", "json")
        assert again.exit_code == 0, again.output
        assert "spaces" in again.stdout
    for name, value in sim.cookies.items():
        if is_session_cookie(name):
            assert value not in result.output and value not in saved.output


def test_cli_logged_out_exits_3(tmp_path: Path) -> None:
    """A logged-out session makes `auth check` exit 3 with advice on supplying a session."""
    with serve_in_thread(SimConfig(threads=3, logged_in=False)) as sim:
        cookies = _cookie_file(tmp_path, sim.cookies)
        result = _cli(tmp_path, "auth", "check", "--base-url", sim.base_url,
                      "--cookies", str(cookies), "--log-format", "json")  # fmt: skip
    assert result.exit_code == 3
    assert "logged out" in result.output and "--cookies" in result.output


def test_cli_bad_cookie_file_exits_2(tmp_path: Path) -> None:
    """A malformed cookie file is a usage error naming the file and line."""
    bad = tmp_path / "cookies.txt"
    bad.write_text("not a cookie line\n")
    result = _cli(tmp_path, "auth", "check", "--cookies", str(bad), "--log-format", "json")
    assert result.exit_code == 2
    assert "line 1" in result.output and "cookies.txt" in result.output


def test_cli_impersonate_without_curl_cffi_exits_2(tmp_path: Path) -> None:
    """--impersonate without curl_cffi installed explains how to install it."""
    result = _cli(tmp_path, "auth", "check", "--session-token", "tok-abcdef",
                  "--impersonate", "chrome", "--log-format", "json")  # fmt: skip
    assert result.exit_code == 2
    assert "pplx-archiver[impersonate]" in result.output
