"""The simulator's several accounts (routing by session) and its era C space query."""

from __future__ import annotations

from typing import Any

import httpx

from pplx_archiver.sim.config import SPACE_THREADS_HASH, SimConfig
from pplx_archiver.sim.multi import account_configs, create_multi_app
from pplx_archiver.sim.runner import logins_for
from pplx_archiver.sim.sessions import LAST_ACTIVE
from tests.sim.conftest import PARAMS, FakeClock


def _client(app: Any, cookies: dict[str, str], **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app), base_url="http://sim.test", cookies=cookies,
        headers=headers,
    )  # fmt: skip


async def _who(client: httpx.AsyncClient) -> tuple[str | None, list[str]]:
    session = (await client.get("/api/auth/session")).json()
    body = {"limit": 100, "offset": 0}
    listed = (await client.post("/rest/thread/list_ask_threads", params=PARAMS, json=body)).json()
    user = session.get("user") or {}
    first = (await client.get(f"/rest/thread/{listed[0]['slug']}", params=PARAMS)).json()
    return user.get("username"), sorted({e["author_username"] for e in first["entries"]})


async def test_each_cookie_reaches_its_own_account() -> None:
    config = SimConfig(threads=5, accounts=3, era="c")
    app = create_multi_app(config, clock=FakeClock())
    logins = logins_for(config)
    assert [c.username for c in account_configs(config)] == ["simuser", "simuser2", "simuser3"]
    assert len({login.account_id for login in logins}) == 3
    seen = []
    for login in logins:
        async with _client(app, login.cookies, **{"x-pplx-account": login.account_id}) as client:
            name, authors = await _who(client)
            assert authors == [login.username]
            seen.append(name)
    assert seen == ["simuser", "simuser2", "simuser3"]
    # A multi-account browser jar: the header (else the last-active cookie) picks the account.
    jar = {**logins[0].cookies, **logins[2].cookies, LAST_ACTIVE: logins[2].account_id}
    async with _client(app, jar) as client:
        assert (await client.get("/api/auth/session")).json()["user"]["username"] == "simuser3"
    async with _client(app, jar, **{"x-pplx-account": logins[0].account_id}) as client:
        assert (await _who(client)) == ("simuser", ["simuser"])
    async with _client(app, {"__Secure-next-auth.session-token": "forged"}) as client:
        assert (await client.get("/api/auth/session")).json() == {}
    async with _client(app, {}) as client:
        truth = (await client.get("/__sim/truth", params={"account": "1"})).json()
    assert truth["seed"] == config.seed + 1


def _space_query(space_id: str, cursor: str | None = None, count: int = 25) -> dict[str, Any]:
    variables = {"spaceId": space_id, "ownThreadsOnly": False, "searchTerm": None,
                 "groupType": "ALL", "count": count, "cursor": cursor}  # fmt: skip
    return {
        "operationName": "SpaceProjectThreadsRelayQuery",
        "variables": variables,
        "extensions": {"persistedQuery": {"version": 1, "sha256Hash": SPACE_THREADS_HASH}},
    }


async def test_space_query_pages_every_members_thread(make_client: Any) -> None:
    client = make_client(SimConfig(threads=40, shared_space_threads=30))
    spaces = (await client.get("/rest/collections/list_user_collections", params=PARAMS)).json()
    shared = next(s for s in spaces if s.get("is_invited"))
    nodes: list[dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        body = _space_query(shared["uuid"], cursor, count=12)
        answer = (await client.post("/rest/perplexity_ask/graphql", json=body)).json()
        threads = answer["data"]["viewer"]["space"]["threadGroup"]["threads"]
        nodes += [edge["node"] for edge in threads["edges"]]
        pages += 1
        if not threads["pageInfo"]["hasNextPage"]:
            break
        cursor = threads["pageInfo"]["endCursor"]
    assert pages == 3 and len(nodes) == len({n["slug"] for n in nodes}) == 30
    assert {n["author"]["username"] for n in nodes} == {SimConfig().shared_space_owner}
    unknown = (await client.post("/rest/perplexity_ask/graphql", json=_space_query("nope"))).json()
    assert unknown == {"data": {"viewer": {"space": None}}}
    bad = _space_query(shared["uuid"], cursor="SPC:???")
    answer = (await client.post("/rest/perplexity_ask/graphql", json=bad)).json()
    assert answer["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
