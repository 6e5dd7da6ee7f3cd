"""The simulator's ask endpoint: real stream formats, threads it creates, injected faults."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pplx_archiver import errors
from pplx_archiver.core.ask.stream import AskResult, AskStream
from pplx_archiver.sim.config import SimConfig
from tests.sim.conftest import PARAMS, list_all

ASK = "/rest/sse/perplexity_ask"
MODE_OF_MODEL = {
    "pplx_pro": "SEARCH",
    "pplx_alpha": "RESEARCH",
    "pplx_agentic_research": "AGENTIC_RESEARCH",
    "pplx_study": "STUDY",
}


async def _ask(client: httpx.AsyncClient, query: str, **params: Any) -> tuple[AskStream, str]:
    r = await client.post(ASK, params=PARAMS, json={"query_str": query, "params": params})
    assert r.status_code == 200, r.text
    stream = AskStream()
    stream.feed(r.text)
    stream.close()
    return stream, r.text


def _stored_answer(body: dict[str, Any], turn: int = -1) -> str:
    steps = json.loads(body["entries"][turn]["text"])
    return str(json.loads(steps[-1]["content"]["answer"])["answer"])


@pytest.mark.parametrize("generation", ["diff", "blocks", "text"])
@pytest.mark.parametrize("model", sorted(MODE_OF_MODEL))
async def test_ask_streams_the_answer_the_thread_then_holds(
    make_client: Any, generation: str, model: str
) -> None:
    """Each generation streams exactly the answer the created thread then serves."""
    client = make_client(SimConfig(threads=5))
    await client.post("/__sim/ask", json={"generation": generation})
    stream, raw = await _ask(client, "why is the sky blue", model_preference=model)
    result: AskResult = stream.result()
    assert result.early_final  # final: true arrives before the COMPLETED frame
    assert ("diff_block" in raw) is (generation == "diff")
    r = await client.get(f"/rest/thread/{result.backend_uuid}", params=PARAMS)
    assert r.status_code == 200
    entry = r.json()["entries"][-1]
    assert entry["search_mode"] == MODE_OF_MODEL[model]
    assert entry["query_str"] == "why is the sky blue"
    assert _stored_answer(r.json()) == result.answer and result.answer
    listed = await list_all(client)
    assert listed[0]["uuid"] == result.backend_uuid
    assert len(listed) == 6


async def test_follow_up_appends_an_entry(make_client: Any) -> None:
    """An ask with last_backend_uuid and the thread's token appends a turn to that thread."""
    client = make_client(SimConfig(threads=3))
    first = (await _ask(client, "first question", model_preference="pplx_pro"))[0].result()
    second_stream, _ = await _ask(
        client,
        "second question",
        model_preference="pplx_pro",
        last_backend_uuid=first.backend_uuid,
        read_write_token=first.read_write_token,
    )
    second = second_stream.result()
    body = (await client.get(f"/rest/thread/{first.backend_uuid}", params=PARAMS)).json()
    assert [e["query_str"] for e in body["entries"]] == ["first question", "second question"]
    assert _stored_answer(body) == second.answer
    assert second.thread_url_slug == first.backend_uuid
    bad = await client.post(
        ASK,
        json={
            "query_str": "x",
            "params": {"last_backend_uuid": first.backend_uuid, "read_write_token": "nope"},
        },
    )
    assert bad.status_code == 403


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("rate_limit", errors.AskRateLimitedError),
        ("failed", errors.AskFailedError),
        ("clarify", errors.ClarifyingQuestionsError),
        ("expired", errors.AskSessionError),
        ("cut", errors.AskIncompleteError),
    ],
)
async def test_injected_faults(make_client: Any, fault: str, error: type[Exception]) -> None:
    """A queued fault turns the next ask into its in-band error; the one after is normal."""
    client = make_client(SimConfig(threads=2))
    await client.post("/__sim/ask", json={"faults": [fault]})
    with pytest.raises(error):
        stream, _ = await _ask(client, "q", model_preference="pplx_alpha")
        stream.result()
    (await _ask(client, "q", model_preference="pplx_alpha"))[0].result()
    created = 1 + (fault == "cut")  # a cut stream had started its thread
    assert len(await list_all(client)) == 2 + created


async def test_bad_control_and_unknown_model(make_client: Any) -> None:
    """Bad control input and an unknown model id get clear errors."""
    client = make_client(SimConfig(threads=1))
    r = await client.post("/__sim/ask", json={"generation": "v9"})
    assert r.status_code == 400 and "generation" in r.json()["error"]
    r = await client.post(ASK, json={"query_str": "q", "params": {"model_preference": "nope"}})
    assert r.status_code == 400


async def test_space_create_move_and_mark_viewed(make_client: Any) -> None:
    """A created space is listed; moving a thread into it and marking it viewed succeed."""
    client = make_client(SimConfig(threads=2))
    thread = (await _ask(client, "q", model_preference="pplx_pro"))[0].result()
    made = await client.post("/rest/collections/create_collection", json={"title": "Notes"})
    space = made.json()
    spaces = (await client.get("/rest/collections/list_user_collections")).json()
    assert space["uuid"] in [s["uuid"] for s in spaces]
    moved = await client.post(
        "/rest/collections/batch_move_threads",
        json={"context_uuids": [thread.context_uuid], "target_collection_uuid": space["uuid"]},
    )
    assert moved.status_code == 200
    listed = (
        await client.get(
            "/rest/collections/list_collection_threads", params={"collection_slug": space["slug"]}
        )
    ).json()
    assert [i["uuid"] for i in listed] == [thread.backend_uuid]
    viewed = await client.post(
        "/rest/thread/mark_viewed", json={"context_uuid": thread.context_uuid}
    )
    assert viewed.status_code == 200
    assert (await client.get("/__sim/ask")).json()["viewed"] == [thread.context_uuid]
