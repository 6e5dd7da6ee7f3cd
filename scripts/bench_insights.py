"""Benchmark the site's insights page: ``insights.html`` and its lists for N threads; JSON.

Usage: ``python scripts/bench_insights.py [--threads 20000] [--turns 5]``. The threads are
synthetic site-manifest entries (listing row and insight facts, as ``site`` keeps them for
each thread: the turns' months, hours and models, citations per domain, report length)
spread over two years, in 8 spaces, with credits for half of them; the manifest is written
and read back as JSON as a rebuild reads it, then the three insight files are built and
written (``site.build._write_insights``), best of ``--repeat`` runs, wall and CPU time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pplx_archiver.core.thread.mode_table import VIEWS  # noqa: E402
from pplx_archiver.site import build as site_build  # noqa: E402
from pplx_archiver.site.pages import ThreadMeta, page_id  # noqa: E402

MODES = VIEWS.names
MODELS = ("pplx_pro", "turbo", "gpt5", "claude", "gemini", "o3", "grok", "r1", "sonar", "")
DOMAINS = [f"site{n}.example.org" for n in range(300)]


def synth(threads: int, turns: int, seed: int = 7) -> dict[str, dict[str, Any]]:
    """Manifest entries of ``threads`` synthetic threads."""
    rng = random.Random(seed)
    start = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    kept: dict[str, dict[str, Any]] = {}
    for n in range(threads):
        uuid = f"thread-{n:06d}"
        when = start + dt.timedelta(seconds=rng.randrange(2 * 365 * 86400))
        mode = rng.choice(MODES)
        space = rng.randrange(12)
        meta = ThreadMeta(
            uuid=uuid,
            page=f"threads/{page_id(uuid)}.html",
            title=f"Thread {n}",
            created=when.isoformat(),
            updated=when.isoformat(),
            mode=mode,
            space=f"Space {space}" if space < 8 else "",
            space_id=page_id(f"space-{space}") if space < 8 else "",
            turns=turns,
            interrupted=False,
            variants=0,
            degraded=False,
        )
        facts = {
            "turns": [
                [
                    when.strftime("%Y-%m"),
                    (when.hour + t) % 24,
                    rng.choice(MODELS) or "unknown",
                    rng.choice(MODELS) or "unknown",
                ]
                for t in range(turns)
            ],
            "domains": {rng.choice(DOMAINS): rng.randrange(1, 6) for _ in range(6)},
            "report": rng.randrange(20_000, 90_000) if mode == "deep-research" else 0,
        }
        kept[uuid] = {"hash": "x" * 32, "meta": meta.as_json(), "facts": facts}
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20_000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    kept = synth(args.threads, args.turns)
    cents = {u: random.Random(u).randrange(1, 500) for i, u in enumerate(kept) if i % 2 == 0}
    best_wall = best_cpu = float("inf")
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="pplx-insights-") as tmp:
        target = Path(tmp)
        blob = orjson.dumps({"version": site_build.SITE_VERSION, "threads": kept})
        (target / site_build.MANIFEST).write_bytes(blob)
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            loaded = site_build._load_manifest(target)
            site_build._write_insights(target, loaded, cents)
            best_wall = min(best_wall, time.perf_counter() - wall)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        for name in ("insights.html", "insights-data.js", "insights-list.html"):
            sizes[name] = (target / name).stat().st_size
    result = {
        "threads": args.threads,
        "turns": args.threads * args.turns,
        "manifest_bytes": len(blob),
        "wall_s": round(best_wall, 3),
        "cpu_s": round(best_cpu, 3),
        "bytes": sizes,
        "target_s": 5.0,
        "target_met": best_wall <= 5.0,
    }
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
