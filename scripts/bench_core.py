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

``--flow`` times the whole per-thread flow instead (``core/thread/flow.py: thread_flow``: the scrub,
every decode, the raw files and the rendering), answering its page needs with the bodies as
bytes and their parsed values as the shell does (parsed before timing: that is the shell's
work). ``--flow --ref REV --rounds N`` runs it with the ``pplx_archiver`` package of git
revision ``REV`` (A) and the working tree's (B) in alternating child processes over the same
pages and prints the ratio B/A of CPU per thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__" and "--package" in sys.argv:  # a child of --ref: that package first
    sys.path.insert(0, sys.argv[sys.argv.index("--package") + 1])
sys.path.insert(1 if "--package" in sys.argv else 0, str(ROOT))

from pplx_archiver.core.thread.model import RenderContext  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def render_report(threads: int, seed: int) -> dict[str, Any]:
    """Render every thread of the simulated account once; the figures of the render core."""
    from pplx_archiver.core.thread.render import render_thread
    from tests.core.simcorpus import account

    ctx = RenderContext(exported_at="2026-09-01T00:00:00Z")
    inputs = account(threads, seed)
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
    return report


def dump_pages(threads: int, seed: int, dest: Path) -> None:
    """The simulated account's listing rows and page bodies (bytes), free of package types."""
    from tests.core.simcorpus import account

    rows = []
    for inp, _truth in account(threads, seed):
        assert inp.listing is not None
        listing = {f: getattr(inp.listing, f) for f in inp.listing.__dataclass_fields__}
        space = listing.pop("space")
        listing["space"] = (space.uuid, space.slug, space.title) if space else None
        plain = [orjson.dumps(p.body) for p in inp.plain_pages]
        rows.append((listing, plain, [orjson.dumps(p.body) for p in inp.blocks_pages]))
    dest.write_bytes(pickle.dumps(rows))


def flow_ms(pages: Path, repeat: int) -> list[float]:
    """CPU ms per thread of ``thread_flow`` over the dumped pages, ``repeat`` times."""
    from pplx_archiver.core.thread.flow import PageNeed, thread_flow
    from pplx_archiver.core.thread.model import ListingRow, SpaceRef

    ctx = RenderContext(exported_at="2026-09-01T00:00:00Z")
    inputs = []
    for listing, plain, blocks in pickle.loads(pages.read_bytes()):
        space = listing.pop("space")
        row = ListingRow(**listing, space=SpaceRef(*space) if space else None)
        # parsed here, not timed: the shell parses each body to check it (seam.py)
        served = {"plain": plain, "blocks": blocks}
        inputs.append((row, {k: [(orjson.loads(b), b) for b in v] for k, v in served.items()}))

    def one(row: ListingRow, served: dict[str, list[tuple[Any, bytes]]]) -> None:
        queues = {flavour: list(answers) for flavour, answers in served.items()}
        gen, answer = thread_flow(row, ctx, page_limit=100, assets=True), None
        try:
            while True:
                need = gen.send(answer)
                answer = queues[need.flavour].pop(0) if isinstance(need, PageNeed) else ()
        except StopIteration:
            return

    gc.collect()
    gc.freeze()
    for row, served in inputs[:20]:  # warm the caches of the first threads' shapes
        one(row, served)
    out = []
    for _ in range(repeat):
        start = time.process_time()
        for row, served in inputs:
            one(row, served)
        out.append((time.process_time() - start) / len(inputs) * 1000)
    return out


def export_ref(ref: str, ref_dir: Path) -> Path:
    """The ``pplx_archiver`` package of git revision ``ref`` under ``ref_dir`` (made here);
    that package and the working tree's compiled, so both sides of an A/B run bytecode."""
    ref_dir.mkdir()
    archive = subprocess.run(["git", "archive", ref, "pplx_archiver"], cwd=ROOT,
                             capture_output=True, check=True)  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(ref_dir)], input=archive.stdout, check=True)
    for package in (ref_dir, ROOT / "pplx_archiver"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
    return ref_dir


def flow_ab(ref: str, rounds: int, threads: int, seed: int) -> dict[str, Any]:
    """``--flow`` with the package of ``ref`` (A) and the working tree (B), alternating."""
    runs: dict[str, list[float]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory(prefix="pplx-core-ab-") as tmp:
        pages, ref_dir = Path(tmp) / "pages.pickle", export_ref(ref, Path(tmp) / "ref")
        dump_pages(threads, seed, pages)
        for index in range(rounds):
            for side in ("A", "B") if index % 2 == 0 else ("B", "A"):
                package = ["--package", str(ref_dir)] if side == "A" else []
                cmd = [sys.executable, __file__, "--flow", "--pages", str(pages), *package]
                done = subprocess.run(cmd, capture_output=True, text=True, check=True)
                median = statistics.median(json.loads(done.stdout)["ms_per_thread"])
                runs[side].append(round(median, 3))
    a, b = statistics.median(runs["A"]), statistics.median(runs["B"])
    return {"ref": ref, "threads": threads, "runs_ms_per_thread": runs,
            "median_a": round(a, 3), "median_b": round(b, 3), "ratio_b_over_a": round(b / a, 3),
            "load": os.getloadavg()}  # fmt: skip


def main() -> None:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--flow", action="store_true", help="time thread_flow, not render")
    parser.add_argument("--ref", help="with --flow: A/B against this git revision")
    parser.add_argument("--rounds", type=int, default=6, help="with --ref: A and B, alternating")
    parser.add_argument("--pages", type=Path, help=argparse.SUPPRESS)  # a child of --ref
    parser.add_argument("--package", help=argparse.SUPPRESS)  # read before the imports
    args = parser.parse_args()
    if args.flow and args.ref:
        report = flow_ab(args.ref, args.rounds, args.threads, args.seed)
    elif args.flow and args.pages:
        report = {"ms_per_thread": flow_ms(args.pages, 3)}
    elif args.flow:
        with tempfile.TemporaryDirectory(prefix="pplx-core-") as tmp:
            dump_pages(args.threads, args.seed, Path(tmp) / "pages.pickle")
            times = flow_ms(Path(tmp) / "pages.pickle", 3)
        report = {"threads": args.threads, "flow_cpu_ms_per_thread": [round(t, 3) for t in times]}
    else:
        report = render_report(args.threads, args.seed)
    sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
