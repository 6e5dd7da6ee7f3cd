"""The simulator's service incident: a share of the threads leaves the listings and 404s."""

from __future__ import annotations

from typing import Any

import pytest

from pplx_archiver.sim.config import SimConfig
from tests.sim.conftest import PARAMS, list_all


def _uuids(items: list[dict[str, Any]]) -> set[str]:
    return {item["uuid"] for item in items}


async def test_vanish_rate_hides_threads_from_the_listing_and_answers_404(
    make_client: Any,
) -> None:
    client = make_client(SimConfig(threads=200, vanish_rate=0.3))
    whole = make_client(SimConfig(threads=200))
    listed, everything = _uuids(await list_all(client)), _uuids(await list_all(whole))
    gone = everything - listed
    assert listed < everything and 40 <= len(gone) <= 80  # about 30 % of 200
    for uuid in sorted(gone)[:3]:
        answer = await client.get(f"/rest/thread/{uuid}", params=PARAMS)
        assert answer.status_code == 404
        assert answer.json()["detail"]["error_code"] == "THREAD_NOT_FOUND"
    kept = await client.get(f"/rest/thread/{sorted(listed)[0]}", params=PARAMS)
    assert kept.status_code == 200


async def test_vanish_mutation_on_a_running_server(make_client: Any) -> None:
    """`{"vanish": share}` hides threads still listed and names them; a larger share more."""
    client = make_client(SimConfig(threads=100))
    before = _uuids(await list_all(client))
    first = (await client.post("/__sim/mutate", json={"vanish": 0.3})).json()["vanished"]
    after = _uuids(await list_all(client))
    assert set(first) == before - after and 15 <= len(first) <= 45
    again = (await client.post("/__sim/mutate", json={"vanish": 0.5})).json()["vanished"]
    assert not set(again) & set(first)
    assert _uuids(await list_all(client)) == after - set(again)


@pytest.mark.parametrize("share", [-0.1, 1.5, "a lot"])
async def test_vanish_refuses_a_share_outside_0_1(make_client: Any, share: object) -> None:
    client = make_client()
    answer = await client.post("/__sim/mutate", json={"vanish": share})
    assert answer.status_code == 400 and "vanish" in answer.json()["error"]


def test_vanish_rate_is_checked() -> None:
    with pytest.raises(ValueError, match="vanish_rate"):
        SimConfig(vanish_rate=2.0)
