"""Benchmark `pplx-export mcp`: p95 latency of the `search` and `get_thread` tools; prints JSON.

The archive is the search benchmark's (``scripts/bench_search.py``: the simulator's generated
account, seed 7, 100,000 turns by default) indexed through the real indexing code, with each
thread's index row marked done and a thread folder holding ``thread.json``,
``conversation.md`` and ``turns/turn_NNNN.md`` made from the same prose. The server runs as
`pplx-export mcp --out ARCHIVE` in a child process; the timings are those the MCP SDK's own
client sees over stdio (a request sent, its answer parsed): ``search`` with English words,
English phrases and 2-character Chinese queries drawn from the corpus (limit 10), and
``get_thread`` of random threads, outline and ``full=true``. Target: p95 <= 100 ms for each.

Usage: ``python scripts/bench_mcp.py [--turns 100000] [--calls 200] [--keep DIR [--reuse]]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import anyio  # noqa: E402
from bench_search import _percentiles, corpus, queries  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from pplx_archiver.core.thread.prose import ThreadProse  # noqa: E402
from pplx_archiver.shell.archive import search, search_index  # noqa: E402
from pplx_archiver.shell.archive.store import Archive  # noqa: E402

BATCH = 200
TARGET_MS = 100.0


def _folder_files(meta: search.ThreadMeta, prose: ThreadProse) -> dict[str, str]:
    turns = [r for r in prose.rows if r.turn > 0]
    record = {
        "uuid": meta.uuid,
        "title": meta.title,
        "mode": meta.mode,
        "created": meta.created,
        "last_updated": meta.created,
        "url": f"https://www.perplexity.ai/search/{meta.uuid}",
        "counts": {"turns": len(turns), "sources": 0},
        "mode_signals": {"display_models": ["turbo"]},
    }
    files = {"thread.json": json.dumps(record, indent=2, sort_keys=True) + "\n"}
    parts = [f"# {meta.title}\n"]
    for n, row in enumerate(turns, 1):
        text = f"# Turn {n}\n\n## Query\n\n{row.query}\n\n## Answer\n\n{row.answer}\n"
        files[f"turns/turn_{n:04d}.md"] = text
        parts.append(text)
    files["conversation.md"] = "\n".join(parts)
    return files


def build(root: Path, turns: int) -> tuple[list[str], list[str]]:
    """The archive under ``root``; the thread uuids and the indexed texts."""
    threads = list(corpus(turns))
    with Archive(root) as archive:
        for first in range(0, len(threads), BATCH):
            chunk = threads[first : first + BATCH]
            with archive.index.transaction() as db:
                for meta, prose in chunk:
                    search.index_thread(db, meta, prose)
            for meta, prose in chunk:
                folder = root / meta.path
                for name, text in _folder_files(meta, prose).items():
                    (folder / name).parent.mkdir(parents=True, exist_ok=True)
                    (folder / name).write_text(text, encoding="utf-8")
                archive.index.upsert(
                    meta.uuid, meta.account, status="done", path=meta.path, mode=meta.mode,
                    title=meta.title, created=meta.created, last_updated=meta.created,
                    archived_at=meta.created,
                )  # fmt: skip
        with archive.index.transaction() as db:
            search_index.optimize(db)
    return [m.uuid for m, _p in threads], _texts(threads)


def _texts(threads: list[tuple[search.ThreadMeta, ThreadProse]]) -> list[str]:
    return [v for _m, p in threads for r in p.rows for v in r.values() if v]


async def _timed(session: ClientSession, tool: str, calls: list[dict[str, Any]]) -> list[float]:
    await session.call_tool(tool, calls[0])  # warm
    samples = []
    for args in calls:
        began = time.perf_counter()
        result = await session.call_tool(tool, args)
        samples.append(1000 * (time.perf_counter() - began))
        if result.is_error:
            raise SystemExit(f"{tool} {args}: {result.content}")
    return samples


async def measure(root: Path, uuids: list[str], texts: list[str], calls: int) -> dict[str, Any]:
    rng = random.Random(23)
    drawn = queries(texts, calls, rng)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pplx_archiver", "mcp", "--out", str(root)]
    )
    latency: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for kind in ("english_word", "english_phrase", "chinese_2"):
            args = [{"query": q, "limit": 10} for q in drawn[kind][:calls]]
            latency[f"search_{kind}"] = _percentiles(await _timed(session, "search", args))
        picks = [rng.choice(uuids) for _ in range(calls)]
        outline = [{"thread": u} for u in picks]
        latency["get_thread"] = _percentiles(await _timed(session, "get_thread", outline))
        full = [{"thread": u, "full": True} for u in picks]
        latency["get_thread_full"] = _percentiles(await _timed(session, "get_thread", full))
    return latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns in the archive")
    parser.add_argument("--calls", type=int, default=200, help="calls per measured kind")
    parser.add_argument("--keep", type=Path, help="build the archive here and keep it")
    parser.add_argument("--reuse", action="store_true", help="measure the --keep archive as is")
    args = parser.parse_args()
    import structlog

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # stdout stays JSON
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-mcp-")) / "archive"
    started = time.perf_counter()
    if args.reuse and (root / "index" / "archive.sqlite").is_file():
        threads = list(corpus(args.turns))
        uuids, texts = [m.uuid for m, _p in threads], _texts(threads)
        build_s = None
    else:
        uuids, texts = build(root, args.turns)
        build_s = round(time.perf_counter() - started, 1)
    load = [round(x, 2) for x in os.getloadavg()]
    latency = anyio.run(measure, root, uuids, texts, args.calls)
    worst = max(v["p95_ms"] for v in latency.values())
    print(
        json.dumps(
            {
                "benchmark": "mcp",
                "turns": args.turns,
                "threads": len(uuids),
                "build_s": build_s,
                "latency": latency,
                "worst_p95_ms": worst,
                "p95_target_ms": TARGET_MS,
                "target_met": worst <= TARGET_MS,
                "load_average_at_start": load,
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            }
        )
    )
    if not args.keep:
        shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
