"""The `mcp` server's tools in process, through the SDK's in-memory client (#42).

tests/e2e/test_mcp.py drives the real command over stdio and HTTP; this file connects the
SDK's `Client` to the server object itself, so every branch of the tools is exercised (and
measured by coverage) without a child process.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from pplx_archiver.shell.care.mcp_reader import Reader, ToolInputError, excerpt, text_slice
from pplx_archiver.shell.care.mcp_server import build_server
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import run_cli, sim_args

FAST = ("--concurrency", "8", "--rate", "1000", "--burst", "100")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """16 simulated threads, their relations and usage."""
    root = tmp_path_factory.mktemp("mcp-tools")
    out = root / "archive"
    with pytest.MonkeyPatch.context() as mp, serve_in_thread(SimConfig(threads=16)) as sim:
        mp.setenv("PPLX_CONFIG_DIR", str(root / "config"))
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        assert run_cli(["relations", "--out", str(out)], out).exit_code == 0
        args = sim_args(sim, out, "--usage-rate", "500")
        assert run_cli(["usage-backfill", *args], out).exit_code == 0
    yield out


@contextlib.asynccontextmanager
async def connect(archive: Path) -> AsyncIterator[Client]:
    """The SDK's client connected in process to a server over ``archive``."""
    server, reader = build_server(archive)
    try:
        async with Client(server) as connected:
            yield connected
    finally:
        reader.close()


async def ok(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def error(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]


async def test_every_tool_and_resource(archive: Path) -> None:
    async with connect(archive) as client:
        await _every_tool(client, archive)


async def _every_tool(client: Client, archive: Path) -> None:
    threads = (await ok(client, "list_threads", limit=200))["threads"]
    assert len(threads) == 16
    spaces = await ok(client, "list_spaces")
    if spaces["spaces"]:
        space = spaces["spaces"][0]
        listed = await ok(client, "list_threads", space=space["slug"] or space["title"])
        assert listed["total"] == space["threads"]
    titled = await ok(client, "list_threads", title=threads[0]["title"][:5])
    assert threads[0]["uuid"] in {t["uuid"] for t in titled["threads"]}
    dated = await ok(client, "list_threads", since="2000-01-01", until="2999")
    assert dated["total"] == 16
    assert (await ok(client, "list_threads", since="2999-01-01"))["total"] == 0

    first = threads[0]
    model = first["models"][0]
    hits = await ok(client, "search", query="the", model=model, limit=100)
    assert all(
        model in t["models"]
        for t in threads
        if t["uuid"] in {h["thread_uuid"] for h in hits["hits"]}
    )
    research = next(t for t in threads if (archive / t["folder"] / "report.md").exists())
    report = await ok(client, "get_report", thread=research["uuid"], max_chars=50, offset=10)
    assert len(report["text"]) == 50 and report["offset"] == 10 and report["report_assets"]
    cited = await ok(client, "sources_for", thread=first["uuid"], limit=1)
    if cited["total"]:
        domain = cited["sources"][0]["domain"]
        same = await ok(client, "sources_for", thread=first["uuid"], domain=domain, limit=500)
        assert all(s["domain"].endswith(domain) for s in same["sources"])
        assert cited["next_offset"] == (1 if cited["total"] > 1 else None)
    for thread in threads:
        related = await ok(client, "related", thread=thread["uuid"], kind="same_prompt")
        assert all(e["kind"] == "same_prompt" for e in related["edges"])
    everything = await ok(client, "alerts", limit=500)
    if everything["alerts"]:
        kind = everything["alerts"][0]["kind"]
        assert all(a["kind"] == kind for a in (await ok(client, "alerts", kind=kind))["alerts"])
    assert (await ok(client, "alerts", thread=first["uuid"], since="2000-01-01"))["count"] >= 0

    turn = await client.read_resource(f"pplx://thread/{first['uuid']}/turn/1")
    assert turn.contents[0].text.startswith("# Turn 1")  # type: ignore[union-attr]
    body = await client.read_resource(f"pplx://report/{research['uuid']}")
    assert body.contents[0].text == (archive / research["folder"] / "report.md").read_text()  # type: ignore[union-attr]


async def test_refusals_say_why(archive: Path) -> None:
    async with connect(archive) as client:
        await _refusals(client)


async def _refusals(client: Client) -> None:
    first = (await ok(client, "list_threads", limit=1))["threads"][0]
    plain = next(
        t for t in (await ok(client, "list_threads", limit=200))["threads"] if t["mode"] == "search"
    )
    assert "no report" in await error(client, "get_report", thread=plain["uuid"])
    assert "kind" in await error(client, "related", thread=first["uuid"], kind="cousin")
    assert "give a thread" in await error(client, "get_thread", thread="  ")
    assert "date" in await error(client, "alerts", since="soon")
    assert "limit" in await error(client, "list_threads", limit=201)
    assert "offset" in await error(client, "search", query="a", offset=901)
    for uri in ("pplx://thread/nope", "pplx://thread/nope/turn/x", "pplx://report/nope"):
        with pytest.raises(MCPError):
            await client.read_resource(uri)


def test_reader_edges(archive: Path) -> None:
    reader = Reader(archive)
    try:
        threads = reader.list_threads(limit=200)["threads"]
        with pytest.raises(ToolInputError, match="from 1 to 200"):
            reader.list_threads(limit=True)
        with pytest.raises(ToolInputError, match="no archived thread"):
            reader.thread("zzzzzzzz")
        assert reader.thread(threads[0]["uuid"][:8]).uuid == threads[0]["uuid"]
        with pytest.raises(ToolInputError, match="max_chars"):
            text_slice("abc", 0, 0)
        assert text_slice("abc", 1, 5) == {
            "text": "bc", "offset": 1, "total_chars": 3, "next_offset": None,
        }  # fmt: skip
        assert excerpt("a  b\n c", 4) == "a b…"
        folder = threads[0]["folder"]
        (archive / folder / "conversation.md").rename(archive / folder / "c.bak")
        try:
            with pytest.raises(ToolInputError, match="re-render"):
                reader.get_thread(folder, full=True)
        finally:
            (archive / folder / "c.bak").rename(archive / folder / "conversation.md")
    finally:
        reader.close()


def test_the_command_refuses_a_folder_without_an_archive(tmp_path: Path) -> None:
    result = run_cli(["mcp", "--out", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: no archive at")
