"""Benchmark the pure render core on the simulator's default account (2,000 threads).

Collects every thread's pages from the in-process simulator once (not timed), then renders
all threads in this one process and prints JSON: threads/s overall and per mode, p50/p99
milliseconds per thread, the time of the largest (most turns) thread and the slowest
thread of about 40 turns (36–44). Times are process
CPU time (``time.process_time``), so the figures are per core even on a busy machine;
wall-clock figures are printed alongside. The corpus (fixture data) is frozen out of the
garbage collector's passes before timing, so collections triggered by rendering do not scan
two thousand threads of input pages.

    .venv/bin/python scripts/bench_core.py [--threads 2000] [--seed 7]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pplx_archiver.core.model import RenderContext
from pplx_archiver.core.render import render_thread
from tests.core.simcorpus import account


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    ctx = RenderContext(exported_at="2026-09-01T00:00:00Z")
    inputs = account(args.threads, args.seed)
    gc.collect()
    gc.freeze()  # the collected corpus is fixture data: keep it out of GC passes
    per_mode: dict[str, list[float]] = defaultdict(list)
    times: list[float] = []
    biggest = (0, 0.0)
    forty: list[float] = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for inp, _truth in inputs:
        start = time.process_time()
        result = render_thread(inp, ctx)
        spent = time.process_time() - start
        times.append(spent)
        per_mode[result.mode].append(spent)
        turns = sum(1 for k in result.files if k.startswith("turns/"))
        if 36 <= turns <= 44:
            forty.append(spent)
        if turns > biggest[0] or (turns == biggest[0] and spent > biggest[1]):
            biggest = (turns, spent)
    cpu = time.process_time() - cpu0
    wall = time.perf_counter() - wall0
    report = {
        "threads": len(times),
        "cpu_seconds": round(cpu, 3),
        "wall_seconds": round(wall, 3),
        "threads_per_s": round(len(times) / cpu, 1),
        "threads_per_s_wall": round(len(times) / wall, 1),
        "p50_ms": round(statistics.median(times) * 1000, 2),
        "p99_ms": round(_pct(times, 0.99) * 1000, 2),
        "per_mode": {
            mode: {
                "threads": len(v),
                "threads_per_s": round(len(v) / sum(v), 1),
                "p50_ms": round(statistics.median(v) * 1000, 2),
                "p99_ms": round(_pct(v, 0.99) * 1000, 2),
            }
            for mode, v in sorted(per_mode.items())
        },
        "largest_thread": {"turns": biggest[0], "ms": round(biggest[1] * 1000, 2)},
        "turns_36_to_44": {
            "threads": len(forty),
            "max_ms": round(max(forty, default=0.0) * 1000, 2),
        },
    }
    sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
