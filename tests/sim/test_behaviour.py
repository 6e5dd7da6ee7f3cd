"""Server behaviour switches: latency, 429s, faults, challenges, sessions, Era C, rotation."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from pplx_archiver.sim.sessions import ERA_B_COOKIE, LAST_ACTIVE
from pplx_archiver.sim.state import AccountState
from tests.sim.conftest import PARAMS

LIST = "/rest/thread/list_ask_threads"


def _first(config: SimConfig) -> str:
    return AccountState(config).plan(0).uuid


async def test_latency_and_jitter_delay_responses(make_client: Any) -> None:
    """latency_ms + jitter_ms delay each request by at least the latency."""
    client = make_client(SimConfig(threads=3, latency_ms=60, jitter_ms=20))
    start = time.perf_counter()
    await client.get("/api/auth/session")
    assert time.perf_counter() - start >= 0.06


@pytest.mark.parametrize("retry_after", [True, False])
async def test_token_bucket_answers_429(make_client: Any, retry_after: bool) -> None:
    """Past the burst the bucket answers 429 RATE_LIMITED, with Retry-After when configured."""
    client = make_client(SimConfig(threads=3, rate=0.5, burst=2, retry_after=retry_after))
    codes = [(await client.get("/api/auth/session")) for _ in range(4)]
    assert [r.status_code for r in codes] == [200, 200, 429, 429]
    assert codes[2].json() == {"detail": {"error_code": "RATE_LIMITED"}}
    assert ("retry-after" in codes[2].headers) is retry_after
    stats = (await client.get("/__sim/stats")).json()
    assert stats["rate_limited"] == 2


async def test_concurrency_limit_answers_503_beyond_max_in_flight(make_client: Any) -> None:
    """With max_in_flight=2, of 4 requests at once 2 are answered and 2 get 503 at once."""
    client = make_client(SimConfig(threads=3, latency_ms=100, max_in_flight=2))
    rs = await asyncio.gather(*(client.get("/api/auth/session") for _ in range(4)))
    assert sorted(r.status_code for r in rs) == [200, 200, 503, 503]
    assert (await client.get("/api/auth/session")).status_code == 200  # the others are done
    stats = (await client.get("/__sim/stats")).json()
    assert stats["busy_503"] == 2


async def test_challenge_windows_serve_cloudflare_html(make_client: Any) -> None:
    """Requests numbered inside a window get the HTML 403 challenge page."""
    client = make_client(SimConfig(threads=3, challenge_windows=((1, 2),)))
    rs = [await client.get("/api/auth/session") for _ in range(4)]
    assert [r.status_code for r in rs] == [200, 403, 403, 200]
    page = rs[1]
    assert page.headers["cf-mitigated"] == "challenge"
    assert page.headers["server"] == "cloudflare"
    assert page.text.startswith("<!DOCTYPE html>") and "Just a moment..." in page.text


async def test_sustained_excess_rate_triggers_a_challenge(make_client: Any) -> None:
    """After enough 429s within the window, requests get the challenge page instead."""
    config = SimConfig(threads=3, rate=0.001, burst=1, challenge_after_429s=3)
    client = make_client(config)
    codes = [(await client.get("/api/auth/session")).status_code for _ in range(6)]
    assert codes[:4] == [200, 429, 429, 429]
    assert codes[4:] == [403, 403]


@pytest.mark.parametrize("kind", ["500", "502", "503"])
async def test_server_error_faults(make_client: Any, kind: str) -> None:
    """With fault_rate 1 every request fails with the configured status."""
    client = make_client(SimConfig(threads=3, fault_rate=1.0, fault_kinds=(kind,)))
    r = await client.get("/api/auth/session")
    assert r.status_code == int(kind)
    assert (await client.get("/__sim/stats")).json()["faults"] == {kind: 1}


async def test_fault_draws_are_deterministic(make_client: Any) -> None:
    """The same fault seed fails the same request numbers."""
    config = SimConfig(threads=3, fault_rate=0.3, fault_kinds=("503",), fault_seed=5)
    runs = []
    for _ in range(2):
        client = make_client(config)
        runs.append([(await client.get("/api/auth/session")).status_code for _ in range(30)])
    assert runs[0] == runs[1] and 503 in runs[0] and 200 in runs[0]


def test_dropped_and_truncated_responses_over_a_socket() -> None:
    """Over uvicorn, 'drop' and 'truncate' reach the client as protocol/connection errors."""
    for kind in ("drop", "truncate"):
        config = SimConfig(threads=3, fault_rate=1.0, fault_kinds=(kind,))
        with (
            serve_in_thread(config) as sim,
            httpx.Client(base_url=sim.base_url, cookies=sim.cookies) as client,
            pytest.raises(httpx.TransportError),
        ):
            client.get(f"/rest/thread/{_first(config)}", params=PARAMS)


async def test_logged_out_session(make_client: Any) -> None:
    """Without a valid cookie: session {}, lists [], detail 401 JSON."""
    config = SimConfig(threads=3)
    client = make_client(config, login=False)
    assert (await client.get("/api/auth/session")).json() == {}
    assert (await client.post(LIST, json={"limit": 10})).json() == []
    detail = await client.get(f"/rest/thread/{_first(config)}")
    assert detail.status_code == 401
    assert detail.json()["detail"]["error_code"] == "UNAUTHORIZED"
    client.cookies.set(ERA_B_COOKIE, "invalid")
    assert (await client.get("/api/auth/session")).json() == {}
    off = make_client(SimConfig(threads=3, logged_in=False))
    assert (await off.get("/api/auth/session")).json() == {}


async def test_era_c_requires_the_account_header(make_client: Any) -> None:
    """Era C: per-account cookies; without x-pplx-account lists are [] and detail is 403."""
    config = SimConfig(threads=3, era="c")
    client = make_client(config)
    account = client.app.sim.state.account_id
    assert client.cookies[LAST_ACTIVE] == account
    assert f"__Secure-pplx.session.{account}" in client.cookies
    assert (await client.get("/api/auth/session")).json()["user"]["id"] == account
    assert (await client.post(LIST, json={"limit": 10})).json() == []
    denied = await client.get(f"/rest/thread/{_first(config)}")
    assert denied.status_code == 403
    assert denied.json() == {"detail": {"error_code": "VIEW_THREAD_NOT_ALLOWED"}}
    headers = {"x-pplx-account": account}
    assert len((await client.post(LIST, json={"limit": 10}, headers=headers)).json()) == 3
    ok = await client.get(f"/rest/thread/{_first(config)}", headers=headers)
    assert ok.status_code == 200 and ok.headers["x-pplx-account-used"] == account


async def test_session_cookie_rotates_with_grace(make_client: Any) -> None:
    """After N requests Set-Cookie carries a new token; the old one works for the grace."""
    config = SimConfig(threads=3, rotate_session_every=2, rotation_grace=1)
    client = make_client(config)
    old = client.app.sim.sessions.cookies()[ERA_B_COOKIE]
    await client.get("/api/auth/session")
    second = await client.get("/api/auth/session")
    assert second.headers["set-cookie"].startswith(f"{ERA_B_COOKIE}=")
    new = second.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    assert new != old
    headers = {"cookie": f"{ERA_B_COOKIE}={old}"}
    bare = httpx.AsyncClient(transport=httpx.ASGITransport(client.app), base_url="http://s")
    async with bare:
        first = await bare.get("/api/auth/session", headers=headers)
        assert first.json() != {}
        later = await bare.get("/api/auth/session", headers=headers)
        assert later.json() == {}


async def test_deleted_and_expired_rates(make_client: Any) -> None:
    """deleted_rate/expired_rate make threads answer 400 ENTRY_DELETED / ENTRY_EXPIRED."""
    config = SimConfig(threads=60, deleted_rate=0.2, expired_rate=0.2)
    client = make_client(config)
    truth = AccountState(config).truth()["threads"]
    codes = set()
    for t in truth:
        if t["era_state"] == "ok":
            continue
        r = await client.get(f"/rest/thread/{t['uuid']}")
        codes.add((r.status_code, r.json()["detail"]["error_code"], t["era_state"]))
    assert codes == {(400, "ENTRY_DELETED", "deleted"), (400, "ENTRY_EXPIRED", "expired")}
    listed = {i["uuid"] for i in (await client.post(LIST, json={"limit": 100})).json()}
    assert not any(t["uuid"] in listed for t in truth if t["era_state"] == "deleted")
    assert all(t["uuid"] in listed for t in truth if t["era_state"] != "deleted")


def test_invalid_config_names_the_field() -> None:
    """A bad switch value raises ValueError naming it."""
    with pytest.raises(ValueError, match="fault_kinds"):
        SimConfig(fault_kinds=("boom",))
    with pytest.raises(ValueError, match="era"):
        SimConfig(era="d")
