"""End to end: `pplx-export relations` over a small archive built with the real render core."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread.model import ListingRow, RawPage, RenderContext, ThreadInput
from pplx_archiver.core.thread.rawfile import encode_raw_pages
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.relations import stored_edges
from tests.commit_door import commit_thread
from tests.core.builders import entry, final_step, page, payload, workflow
from tests.e2e.conftest import run_cli

U = [f"{i:08x}-3333-4000-8000-{i:012x}" for i in range(6)]
SPACE = {"uuid": "space-0001", "slug": "research", "title": "Research"}


def _commit(
    archive: Archive,
    uuid: str,
    plain: list[dict[str, Any]],
    blocks: list[dict[str, Any]] | None = None,
) -> None:
    """Render a thread from page bodies and commit it as the harvester does."""
    req = {"method": "GET", "path": f"/rest/thread/{uuid}", "params": [["limit", "100"]]}
    pairs = [(req, orjson.dumps(b)) for b in plain]
    block_pairs = [(req, orjson.dumps(b)) for b in blocks or []]
    row = ListingRow(
        thread_id=uuid, title=f"T {uuid[:8]}", slug=uuid, updated_at="2026-07-21T10:00:00Z"
    )
    inp = ThreadInput(
        thread_id=uuid,
        plain_pages=tuple(RawPage(r, orjson.loads(b)) for r, b in pairs),
        blocks_pages=tuple(RawPage(r, orjson.loads(b)) for r, b in block_pairs),
        listing=row,
    )
    result = render_thread(inp, RenderContext(exported_at="2026-09-01T00:00:00Z", account="me"))
    raw_blocks = encode_raw_pages(block_pairs) if block_pairs else None
    commit_thread(
        archive, "me", result, encode_raw_pages(pairs), raw_blocks, row.updated_at, listing=row
    )


def _thread(uuid: str, minute: int, query: str, answer: str = "ok", **extra: Any) -> dict[str, Any]:
    """One page of a one-turn thread created at ``minute`` past eight."""
    e = entry(
        uuid,
        minute * 60,
        query=query,
        text=[final_step(answer, minute)],
        thread_url_slug=uuid,
        **extra,
    )
    return page([e], title=f"T {uuid[:8]}")


def build_archive(out: Path) -> None:
    """Five threads: two scheduled runs and a manual resend of one prompt in one space, a
    thread linking another by URL, and a computer thread with an archived sub-agent."""
    with Archive(out) as archive:
        _commit(
            archive,
            U[0],
            [_thread(U[0], 1, "Daily digest", query_source="scheduled", collection_info=SPACE)],
        )
        _commit(
            archive,
            U[1],
            [
                _thread(
                    U[1],
                    2,
                    "daily  DIGEST!",
                    f"as in https://www.perplexity.ai/search/{U[3]}",
                    query_source="scheduled",
                    collection_info=SPACE,
                )
            ],
        )
        _commit(archive, U[2], [_thread(U[2], 3, "Daily digest?")])
        main = entry(U[3], 240, query="plan a trip", search_mode="ASI", thread_url_slug=U[3])
        main["blocks"] = [workflow([payload("toolu_T", anchor=True)])]
        background = entry(U[4], 250, query="", search_mode="ASI", is_background=True)
        background["blocks"] = [workflow([payload("toolu_T", completed="2026-07-20T08:04:30Z")])]
        _commit(archive, U[3], [page([main])], [page([main], [background])])
        _commit(archive, U[4], [_thread(U[4], 5, "sub task")])


def test_relations_writes_every_kind_stores_them_and_is_byte_identical(tmp_path: Path) -> None:
    """The command writes all four kinds to edges.jsonl, graph.md and the index, twice alike."""
    out = tmp_path / "archive"
    build_archive(out)
    first = run_cli(["relations", "--out", str(out)], out)
    assert first.exit_code == 0, first.output
    edges_path = out / "relations" / "edges.jsonl"
    graph_path = out / "relations" / "graph.md"
    rows = [orjson.loads(line) for line in edges_path.read_bytes().splitlines()]
    assert rows == [
        {"src": U[0], "dst": U[1], "kind": "same_prompt", "evidence": "scheduled task"},
        {"src": U[0], "dst": U[1], "kind": "same_space", "evidence": "space space-0001"},
        {"src": U[1], "dst": U[2], "kind": "same_prompt", "evidence": "manual resend"},
        {"src": U[1], "dst": U[3], "kind": "references", "evidence": "answer url"},
        {"src": U[4], "dst": U[3], "kind": "subagent_of", "evidence": "sub-agent run toolu_T"},
    ]
    assert "relations: 5 threads, 5 edges" in first.output
    assert any(e.get("event") == "RELATIONS_BUILT" and e.get("edges") == 5 for e in first.events)
    stored = stored_edges(out / "index" / "archive.sqlite")
    assert [e.as_dict() for e in stored] == rows
    md = graph_path.read_text()
    assert "| references | 1 |" in md and "## Same prompt clusters (1)" in md
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (edges_path, graph_path)}
    second = run_cli(["relations", "-o", str(out)], out)
    assert second.exit_code == 0, second.output
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before} == before
    assert "0 files written" in second.output
    assert len(stored_edges(out / "index" / "archive.sqlite")) == 5
    status = run_cli(["status", "--out", str(out)], out)
    assert "relations: 1 same_space, 2 same_prompt, 1 references, 1 subagent_of" in status.output


def test_relations_reports_an_unreadable_thread_and_keeps_the_rest(tmp_path: Path) -> None:
    """A thread whose raw file is corrupt is named and exits 1; the others still get edges."""
    out = tmp_path / "archive"
    build_archive(out)
    broken = next(out.glob("me/*/*_00000002/raw_entries.json"))
    broken.write_bytes(b"{not json")
    result = run_cli(["relations", "--out", str(out)], out)
    assert result.exit_code == 1
    assert "1 failed" in result.output and "_00000002" in result.output
    assert len(stored_edges(out / "index" / "archive.sqlite")) == 4


def test_relations_without_an_archive_exits_2_with_one_line(tmp_path: Path) -> None:
    """--out pointing at a folder that is not an archive is a usage error on one line."""
    result = run_cli(["relations", "--out", str(tmp_path / "nothing")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: no archive at")
    assert not (tmp_path / "nothing").exists()
