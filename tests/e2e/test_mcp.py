"""End to end: `pplx-export mcp` driven by the MCP SDK's own client over stdio (issue 42).

The archive is made by the real harvester against the simulator; the server runs as a child
process, as an MCP client starts it.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from pplx_archiver.shell.archive import search as search_mod
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_post

FAST = ("--concurrency", "8", "--rate", "1000", "--burst", "100")
TOOLS = {
    "search",
    "list_threads",
    "list_spaces",
    "get_thread",
    "get_turn",
    "get_report",
    "sources_for",
    "related",
    "alerts",
}
CJK = re.compile(r"[\u4e00-\u9fff]{2}")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningSim, Path, Path]]:
    """A running simulator and an archive of 24 of its threads (relations built)."""
    root = tmp_path_factory.mktemp("mcp")
    config = root / "config"
    with pytest.MonkeyPatch.context() as mp, serve_in_thread(SimConfig(threads=24)) as sim:
        mp.setenv("PPLX_CONFIG_DIR", str(config))
        out = root / "archive"
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        assert run_cli(["relations", "--out", str(out)], out).exit_code == 0
        yield sim, out, config


@contextlib.asynccontextmanager
async def client(out: Path, config: Path) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with `pplx-export mcp --out OUT` as its server."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pplx_archiver", "mcp", "--out", str(out)],
        env={"PPLX_CONFIG_DIR": str(config), "PYTHONPATH": os.getcwd()},
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    """A successful tool call's structured answer."""
    result = await session.call_tool(tool, args)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def refused(session: ClientSession, tool: str, **args: Any) -> str:
    """The message of a tool call the server refuses."""
    result = await session.call_tool(tool, args)
    assert result.is_error, result.structured_content
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    return str(text)


def _corpus(out: Path) -> list[tuple[str, int, tuple[str, ...]]]:
    db = search_mod.open_readonly(out / "index" / "archive.sqlite")
    try:
        return [row for row in search_mod.iter_prose(db) if row[1] > 0]
    finally:
        db.close()


def _snapshot(out: Path) -> dict[str, tuple[int, int]]:
    """Every archive file's mtime and size (SQLite's shared-memory file, which any reader of
    a WAL database maps, and the lock file aside)."""
    return {
        str(p.relative_to(out)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in out.rglob("*")
        if p.is_file() and p.name not in {"write.lock", "archive.sqlite-shm"}
    }


async def test_tools_are_listed_with_schemas(world: tuple[RunningSim, Path, Path]) -> None:
    _sim, out, config = world
    async with client(out, config) as session:
        listed = (await session.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        for tool in listed:
            assert tool.description and len(tool.description) > 40, tool.name
            assert tool.input_schema["type"] == "object"
        schema = next(t for t in listed if t.name == "search").input_schema
        assert schema["required"] == ["query"]
        assert schema["properties"]["limit"]["maximum"] == 100
        templates = (await session.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {
            "pplx://thread/{uuid}",
            "pplx://thread/{uuid}/turn/{turn}",
            "pplx://report/{uuid}",
        }


async def test_search_finds_a_random_turn_by_chinese_and_english(
    world: tuple[RunningSim, Path, Path],
) -> None:
    _sim, out, config = world
    rng = random.Random(42)
    corpus = _corpus(out)
    counts: dict[str, int] = {}
    for _uuid, _turn, values in corpus:
        for pair in {m for v in values for m in CJK.findall(v.casefold())}:
            counts[pair] = counts.get(pair, 0) + 1
    chinese = [row for row in corpus if any(CJK.search(v) for v in row[2])]
    uuid, turn, values = rng.choice(chinese)
    pairs = {m for v in values for m in CJK.findall(v.casefold())}
    pair = min(pairs, key=lambda p: (counts[p], p))
    english = rng.choice([row for row in corpus if len(row[2][1].split()) >= 4])
    words = english[2][1].split()
    start = rng.randrange(len(words) - 2)
    phrase = " ".join(words[start : start + 3])
    async with client(out, config) as session:
        found = await call(session, "search", query=pair, limit=100)
        assert (uuid, turn) in {(h["thread_uuid"], h["turn"]) for h in found["hits"]}, pair
        hit = next(h for h in found["hits"] if h["thread_uuid"] == uuid)
        assert hit["url"].endswith(uuid) and hit["folder"] and (out / hit["folder"]).is_dir()
        found = await call(session, "search", query=phrase, limit=100)
        keys = {(h["thread_uuid"], h["turn"]) for h in found["hits"]}
        assert (english[0], english[1]) in keys, phrase
        filtered = await call(session, "search", query=phrase, mode="council", limit=100)
        assert all(h["mode"] == "council" for h in filtered["hits"])
        raw = await call(session, "search", query=f'"{words[start]}"', raw=True, limit=5)
        assert raw["count"] >= 1


async def test_each_tool_answers(world: tuple[RunningSim, Path, Path]) -> None:
    _sim, out, config = world
    async with client(out, config) as session:
        page = await call(session, "list_threads", limit=5)
        assert page["total"] == 24 and len(page["threads"]) == 5 and page["next_offset"] == 5
        created = [t["created"] for t in page["threads"]]
        assert created == sorted(created, reverse=True)
        rest = await call(session, "list_threads", limit=200, offset=5)
        assert len(rest["threads"]) == 19 and rest["next_offset"] is None
        everything = page["threads"] + rest["threads"]
        research = await call(session, "list_threads", mode="deep-research", limit=200)
        assert research["threads"] and all(
            t["mode"] == "deep-research" for t in research["threads"]
        )
        model = everything[0]["models"][0]
        by_model = await call(session, "list_threads", model=model, limit=200)
        assert all(model in t["models"] for t in by_model["threads"])
        await call(session, "list_spaces")

        first = everything[0]
        outline = await call(session, "get_thread", thread=first["uuid"][:8])
        assert outline["thread"]["folder"] == first["folder"] and outline["outline"]
        assert "text" not in outline
        full = await call(session, "get_thread", thread=first["url"], full=True, max_chars=100)
        assert len(full["text"]) == 100 and full["next_offset"] == 100
        turn = await call(session, "get_turn", thread=first["folder"], turn=1)
        assert turn["text"].startswith("# Turn 1")
        sources = await call(session, "sources_for", thread=first["uuid"], limit=3)
        assert sources["thread"]["url"] == first["url"] and len(sources["sources"]) <= 3

        with_report = [t for t in research["threads"] if (out / t["folder"] / "report.md").exists()]
        report = await call(session, "get_report", thread=with_report[0]["uuid"])
        assert report["text"] == (out / with_report[0]["folder"] / "report.md").read_text()

        edges = json.loads((out / "relations" / "edges.jsonl").read_text().splitlines()[0])
        related = await call(session, "related", thread=edges["src"])
        assert any(e["other"]["uuid"] == edges["dst"] for e in related["edges"])
        assert "alerts" in await call(session, "alerts", limit=5)

        text = await session.read_resource(f"pplx://thread/{first['uuid']}")
        body = text.contents[0].text  # type: ignore[union-attr]
        assert body == (out / first["folder"] / "conversation.md").read_text()


async def test_bad_input_is_an_error_not_a_crash(world: tuple[RunningSim, Path, Path]) -> None:
    _sim, out, config = world
    async with client(out, config) as session:
        assert "no archived thread" in await refused(session, "get_thread", thread="nope")
        assert "expected one of" in await refused(session, "search", query="a", mode="fast")
        assert "date" in await refused(session, "list_threads", since="yesterday")
        assert "limit" in await refused(session, "search", query="a", limit=0)
        assert "query" in await refused(session, "search", query="   ")
        assert "unterminated" in await refused(session, "search", query='"open', raw=True)
        first = (await call(session, "list_threads", limit=1))["threads"][0]
        assert "turn" in await refused(session, "get_turn", thread=first["uuid"], turn=9999)
        assert "thread" in await refused(session, "get_turn", turn=1)
        assert (await call(session, "list_spaces"))["total"] >= 0  # still serving


async def test_read_only_beside_a_running_sync(
    world: tuple[RunningSim, Path, Path], tmp_path: Path
) -> None:
    """No file of the archive changes while the server answers; a sync (which takes the
    writer lock) runs to completion beside it, and the server sees its changes. (On a copy
    of the archive: the other tests keep theirs as it is.)"""
    sim, shared, config = world
    out = tmp_path / "copy"
    shutil.copytree(shared, out)
    before = _snapshot(out)
    async with client(out, config) as session:
        for tool, args in (("search", {"query": "the"}), ("list_threads", {}), ("alerts", {})):
            await call(session, tool, **args)
        assert _snapshot(out) == before
        sim_post(sim, "/__sim/mutate", {"add": 2})
        env = {**os.environ, "PPLX_CONFIG_DIR": str(config)}
        command = [sys.executable, "-m", "pplx_archiver", "sync", *sim_args(sim, out, *FAST)]
        results: list[int] = []

        async def writer() -> None:
            done = await anyio.run_process(command, check=False, env=env)
            results.append(done.returncode)

        async with anyio.create_task_group() as tg:
            tg.start_soon(writer)
            while not results:
                await call(session, "search", query="autoscaling", limit=5)
                await call(session, "list_threads", limit=3)
                await anyio.sleep(0.05)
        assert results == [0]
        after = await call(session, "list_threads", limit=1)
        assert after["total"] == 26


async def test_search_pages(world: tuple[RunningSim, Path, Path]) -> None:
    _sim, out, config = world
    async with client(out, config) as session:
        whole = await call(session, "search", query="the", limit=12)
        first = await call(session, "search", query="the", limit=5)
        second = await call(session, "search", query="the", limit=5, offset=first["next_offset"])
        assert first["next_offset"] == 5
        keys = [(h["thread_uuid"], h["turn"]) for h in first["hits"] + second["hits"]]
        assert keys == [(h["thread_uuid"], h["turn"]) for h in whole["hits"][:10]]


async def test_an_archive_of_an_older_version(
    world: tuple[RunningSim, Path, Path], tmp_path: Path
) -> None:
    """A search index of another version, no relations or usage table, thread records
    without the newer keys: the server says how to rebuild the index and serves the rest;
    after the rebuild (a writing command) search works."""
    _sim, out, config = world
    old = tmp_path / "old"
    shutil.copytree(out, old)
    db = sqlite3.connect(old / "index" / "archive.sqlite")
    with db:
        db.execute("UPDATE search_meta SET value = '0' WHERE key = 'version'")
        db.execute("DROP TABLE relations")
    db.close()
    for record in old.rglob("thread.json"):
        data = json.loads(record.read_text())
        for key in ("mode_signals", "lang", "counts"):
            data.pop(key, None)
        record.write_text(json.dumps(data))
    async with client(old, config) as session:
        says = await refused(session, "search", query="the")
        assert f"pplx-export search --rebuild --out {old}" in says
        page = await call(session, "list_threads", limit=3)
        assert page["total"] == 24 and page["threads"][0]["models"] == []
        outline = await call(session, "get_thread", thread=page["threads"][0]["uuid"])
        assert outline["thread"]["url"].startswith("https://www.perplexity.ai/")
        assert outline["outline"], "turns counted from the turn files"
        related = await call(session, "related", thread=page["threads"][0]["uuid"])
        assert related["edges"] == [] and "relations" in related["note"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PPLX_CONFIG_DIR", str(config))
        assert run_cli(["search", "--out", str(old), "--rebuild", "the"], old).exit_code == 0
    async with client(old, config) as session:
        assert (await call(session, "search", query="the"))["count"] > 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_streamable_http_on_loopback(world: tuple[RunningSim, Path, Path]) -> None:
    _sim, out, config = world
    port = _free_port()
    env = {**os.environ, "PPLX_CONFIG_DIR": str(config)}
    command = [sys.executable, "-m", "pplx_archiver", "mcp", "-o", str(out), "--http"]
    process = await anyio.open_process(
        [*command, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await anyio.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            assert (await call(s, "list_threads", limit=1))["total"] == 24
    finally:
        process.terminate()
        await process.wait()
