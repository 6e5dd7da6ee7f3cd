"""Benchmark full-text search: index size, build time and query latency; prints JSON.

The corpus is the simulator's generated account (seed 7): thread titles, each turn's query,
answer (``answer_text``), sub-agent conclusions and source titles/URLs, taken from the
thread plans directly rather than through HTTP and the render core, so a 100,000-turn
archive builds in minutes. The rows go through the real indexing code
(``search.index_thread`` in an ``Archive``, 200 threads per transaction, then ``optimize``
as a rebuild does). Queries go through the read-only connection ``pplx-export search``
opens.

Figures: ``index_bytes`` (the search tables, from SQLite's dbstat; the file size as well),
``prose_bytes`` (UTF-8 bytes of the indexed values), their ratio (target <= 3), build
seconds, and p50/p95 latency in ms of ``search()`` with the default limit (20) for English
words, English phrases, Chinese queries of 1, 2, 3 and 4 characters (drawn from the
corpus), and absent text (target p95 <= 50 ms).

Usage: ``python scripts/bench_search.py [--turns 100000] [--queries 40] [--keep DIR [--reuse]]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pplx_archiver.core.thread.prose import ThreadProse, TurnProse, joined  # noqa: E402
from pplx_archiver.core.thread.timeparse import iso  # noqa: E402
from pplx_archiver.shell.archive import search, search_index  # noqa: E402
from pplx_archiver.shell.archive.store import Archive  # noqa: E402
from pplx_archiver.sim.account import WORDS, plan_thread  # noqa: E402
from pplx_archiver.sim.build import answer_of, url_of  # noqa: E402

SEED = 7
BATCH = 200


def corpus(turns: int) -> Iterator[tuple[search.ThreadMeta, ThreadProse]]:
    """Simulated threads until ``turns`` turns (stub turns carry no prose and are skipped)."""
    made = 0
    index = 0
    while made < turns:
        plan = plan_thread(SEED, index, turns)
        index += 1
        rows = [TurnProse(0, iso(plan.created_us), title=plan.title)]
        for turn in plan.turns:
            if turn.stub:
                continue
            sources = "\n".join(
                f"Source {n} for thread {plan.index}\n{url_of(plan, n)}" for n in turn.web
            )
            conclusions = joined(
                f"Result of {p.headline}." for p in plan.payloads if p.turn == turn.index
            )
            rows.append(
                TurnProse(
                    turn.index + 1,
                    iso(turn.created_us),
                    query=turn.query,
                    answer=answer_of(plan, turn),
                    subagents=conclusions,
                    sources=sources,
                )
            )
        made += len(rows) - 1
        meta = search.ThreadMeta(
            uuid=plan.uuid,
            account="simuser",
            mode=plan.mode,
            title=plan.title,
            path=f"simuser/{plan.mode}/{plan.uuid}",
            created=iso(plan.created_us),
        )
        yield meta, ThreadProse(rows=tuple(rows))


def _percentiles(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(p95, 2),
        "max_ms": round(ordered[-1], 2),
    }


def _is_cjk(ch: str) -> bool:
    return "\u3040" <= ch <= "\u9fff"


def queries(texts: list[str], per_kind: int, rng: random.Random) -> dict[str, list[str]]:
    """Query sets drawn from the indexed text (plus absent ones)."""
    english = [t for t in texts if t.isascii() and " " in t]
    cjk = [(t, i) for t in texts for i, c in enumerate(t) if _is_cjk(c)]
    out: dict[str, list[str]] = {"english_word": [rng.choice(WORDS) for _ in range(per_kind)]}
    phrases: list[str] = []
    while len(phrases) < per_kind:
        words = rng.choice(english).split()
        if len(words) >= 3:
            at = rng.randrange(len(words) - 2)
            phrases.append(" ".join(words[at : at + rng.randint(2, 3)]))
    out["english_phrase"] = phrases
    for size in (1, 2, 3, 4):
        picked: list[str] = []
        while len(picked) < per_kind:
            text, at = rng.choice(cjk)
            piece = text[at : at + size]
            if len(piece) == size and all(_is_cjk(c) for c in piece):
                picked.append(piece)
        out[f"chinese_{size}"] = picked
    out["absent"] = ["鲸", "鲸鱼", "zq", "xylophone", "鲸鱼迁徙", "quantumz"] * (per_kind // 6 + 1)
    return out


def measure(db: Any, texts: list[str], per_kind: int) -> dict[str, Any]:
    """Latency per query kind through ``db`` (the read-only connection `search` opens)."""
    rng = random.Random(17)
    latency: dict[str, Any] = {}
    for kind, items in queries(texts, per_kind, rng).items():
        search.search(db, items[0])  # warm the page cache for this kind
        samples = []
        hits = []
        for query in items[:per_kind]:
            began = time.perf_counter()
            found = search.search(db, query)
            samples.append(1000 * (time.perf_counter() - began))
            hits.append(len(found))
        latency[kind] = _percentiles(samples) | {"mean_hits": round(statistics.mean(hits), 1)}
    return latency


def run(turns: int, per_kind: int, root: Path, reuse: bool = False) -> dict[str, Any]:
    """Build the index of ``turns`` simulated turns under ``root`` and measure it.

    With ``reuse``, an index already built there (``--keep``) is measured as it is.
    """
    import structlog

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # stdout stays JSON
    made = time.perf_counter()
    threads = list(corpus(turns))
    corpus_s = time.perf_counter() - made
    prose = 0
    texts: list[str] = []
    for _meta, thread in threads:
        for row in thread.rows:
            for value in row.values():
                prose += len(value.encode("utf-8"))
                if value:
                    texts.append(value)
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    with Archive(root / "archive") as archive:
        with archive.index.transaction() as db:
            built = reuse and search.index_state(db) == "ready"
        started = time.perf_counter()
        if not built:
            for first in range(0, len(threads), BATCH):
                with archive.index.transaction() as db:
                    for meta, thread in threads[first : first + BATCH]:
                        search.index_thread(db, meta, thread)
            with archive.index.transaction() as db:
                search_index.optimize(db)
        build_s = time.perf_counter() - started
        db = archive.index._db
        tables = dict(
            db.execute(
                "SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'search%' GROUP BY name"
            ).fetchall()
        )
        index_bytes = sum(int(v) for v in tables.values())
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        file_bytes = archive.index.path.stat().st_size
        latency = measure(search.open_readonly(archive.index.path), texts, per_kind)
    rows = sum(len(t.rows) for _m, t in threads)
    worst = max(v["p95_ms"] for v in latency.values())
    return {
        "benchmark": "search",
        "turns": rows - len(threads),
        "threads": len(threads),
        "rows": rows,
        "prose_bytes": prose,
        "index_bytes": index_bytes,
        "index_tables_bytes": tables,
        "archive_sqlite_bytes": file_bytes,
        "size_ratio": round(index_bytes / prose, 3),
        "size_target": 3.0,
        "corpus_s": round(corpus_s, 1),
        "build_s": None if built else round(build_s, 1),
        "build_turns_per_s": None if built else round((rows - len(threads)) / build_s, 1),
        "latency": latency,
        "worst_p95_ms": worst,
        "p95_target_ms": 50.0,
        "targets_met": index_bytes / prose <= 3.0 and worst <= 50.0,
        "load_average_at_start": load_at_start,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns in the corpus")
    parser.add_argument("--queries", type=int, default=40, help="queries per kind")
    parser.add_argument("--keep", type=Path, help="build here and keep it (debugging)")
    parser.add_argument(
        "--reuse", action="store_true", help="with --keep: measure the index built there before"
    )
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        result = run(args.turns, args.queries, args.keep, args.reuse)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="bench-search-"))
        try:
            result = run(args.turns, args.queries, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
