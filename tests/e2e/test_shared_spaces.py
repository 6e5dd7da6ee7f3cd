"""Shared spaces in full, end to end against the simulator on loopback.

A space another user shared with the account holds more threads than one page of its
listing: every one is archived under its author's (guarded) folder, through REST offset
paging (era B) or the era C GraphQL space query (with its fallback to REST on a stale hash),
and the space page says who contributed what.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from pplx_archiver.sim.config import SPACE_THREADS_HASH, SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import cookie_file, run_cli

FAST = ("--concurrency", "4", "--rate", "1000", "--burst", "100")
RESERVED = {"index", "spaces", "relations", "site"}


pytestmark = pytest.mark.usefixtures("reset_logging")


def _run(sim: RunningSim, tmp_path: Path, *extra: str, command: str = "batch") -> Any:
    out = tmp_path / "archive"
    cookies = cookie_file(tmp_path / "cookies.json", sim.cookies)
    args = [command, "--out", str(out), "--base-url", sim.base_url, "--cookies", str(cookies)]
    return run_cli([*args, "--log-format", "json", *FAST, "--include-spaces", *extra], out)


def _archived(out: Path) -> dict[str, Path]:
    return {
        orjson.loads(p.read_bytes())["uuid"]: p.parent.relative_to(out)
        for p in out.glob("*/*/*/thread.json")
    }


def _shared(sim: RunningSim) -> set[str]:
    truth = httpx.get(f"{sim.base_url}/__sim/truth", timeout=30).json()["threads"]
    return {t["uuid"] for t in truth[-sim.config.shared_space_threads :]}


def _stats(sim: RunningSim) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{sim.base_url}/__sim/stats", timeout=30).json()
    return body


def _events(result: Any, name: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["event"] == name]


@pytest.mark.parametrize(("era", "writer"), [("b", "off"), ("c", "off"), ("b", "on")])
def test_every_members_thread_of_a_big_shared_space_is_archived(
    tmp_path: Path, era: str, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """45 shared threads (three REST pages of 20, two GraphQL pages of 25): all archived once
    under the author's folder; era C lists the space through GraphQL, era B through REST;
    the same with the writer in a process of its own (``writer_process``)."""
    monkeypatch.setenv("PPLX_WRITER_PROCESS", writer)
    config = SimConfig(threads=60, shared_space_threads=45, era=era)
    with serve_in_thread(config) as sim:
        result = _run(sim, tmp_path)
        shared = _shared(sim)
        stats = _stats(sim)
    assert result.exit_code == 0, result.output
    assert bool(_events(result, "WRITER_PROCESS_STARTED")) == (writer == "on")
    out = tmp_path / "archive"
    archived = _archived(out)
    assert len(archived) == 60 and shared <= set(archived)
    assert {archived[u].parts[0] for u in shared} == {"Ana Ñ-other-user"}
    assert {archived[u].parts[0] for u in set(archived) - shared} == {"simuser"}
    listed = {e["slug"]: e for e in _events(result, "SPACE_LISTED")}
    (space,) = [e for e in listed.values() if e["others_threads"]]
    assert space["others_threads"] == 45
    requests = stats["requests"]
    if era == "c":
        assert not _events(result, "LISTER_FALLBACK")
        assert requests["graphql"] >= 2  # two pages of the space with 45 threads
    else:
        assert requests["list_collection_threads"] >= 3
        assert requests.get("graphql", 0) == 0
    doc = json.loads((out / "spaces" / "spaces.json").read_bytes())
    (record,) = [s for s in doc["spaces"] if s["slug"] == space["slug"]]
    owner = config.shared_space_owner
    assert record["contributors"][0]["member"] == owner
    assert record["contributors"][0]["threads"] == record["contributors"][0]["archived"] == 45
    assert record["contributors"][1] == {"member": "simuser", "threads": 0, "archived": 0,
                                         "modes": {}}  # fmt: skip
    assert sum(record["contributors"][0]["modes"].values()) == 45
    page = (out / record["page"]).read_text()
    assert "## Contributors\n" in page and f"| {owner} | 45 | 45 |" in page


def test_a_stale_space_query_hash_falls_back_to_rest_and_loses_nothing(tmp_path: Path) -> None:
    hashes = tuple(h for h in SimConfig().graphql_hashes if h != SPACE_THREADS_HASH)
    config = SimConfig(threads=30, shared_space_threads=22, era="c", graphql_hashes=hashes)
    with serve_in_thread(config) as sim:
        result = _run(sim, tmp_path)
        shared = _shared(sim)
    assert result.exit_code == 0, result.output
    assert shared <= set(_archived(tmp_path / "archive"))
    fallbacks = _events(result, "LISTER_FALLBACK")
    assert fallbacks and all(e["operation"] == "SpaceProjectThreadsRelayQuery" for e in fallbacks)


@pytest.mark.parametrize(
    ("owner", "expect"),
    [
        ("..", None),
        ("../../etc", "etc"),
        ("index", None),
        ("Spaces", None),
        ("CON", None),
        ("simuser.", None),  # would sanitize onto the account's own folder
        ("\x1b[31mred\x00\u202e", "[31mred"),
        ("x" * 300, "x" * 80),
    ],
)
def test_hostile_author_names_stay_inside_their_own_folder(
    tmp_path: Path, owner: str, expect: str | None
) -> None:
    config = dataclasses.replace(
        SimConfig(threads=8, shared_space_threads=3), shared_space_owner=owner
    )
    with serve_in_thread(config) as sim:
        result = _run(sim, tmp_path)
        shared = _shared(sim)
    assert result.exit_code == 0, result.output
    out = tmp_path / "archive"
    archived = _archived(out)
    (folder,) = {archived[u].parts[0] for u in shared}
    if expect is not None:
        assert folder == expect
    assert folder.casefold() not in RESERVED | {"simuser"}
    assert not folder.startswith(".") and len(folder) <= 80
    assert all(ch.isprintable() for ch in folder)
    for uuid in shared:
        assert (out / archived[uuid]).resolve().is_relative_to(out.resolve())
        assert orjson.loads((out / archived[uuid] / "thread.json").read_bytes())["author"] == owner
    assert {archived[u].parts[0] for u in set(archived) - shared} == {"simuser"}
    assert (out / "index" / "archive.sqlite").is_file()
    assert not (out / "index" / "search").exists() and not (out / "search").exists()
