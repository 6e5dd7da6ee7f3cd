"""The archive writer's CPU per thread: commits of simulated threads into a fresh archive.

Builds every thread's plan once per process (``core/thread/flow.py: thread_flow`` over the
simulator's pages, assets off; not timed), then commits them all into a new archive with
group commit, as a run's writer does (``Archive.commit``, then ``flush_done`` every 64
threads), and prints JSON: user and system CPU milliseconds per thread (``os.times``).
The archive goes under ``--dir`` (default: the temp folder; ``/dev/shm`` keeps the file
system's own cost small and steady).

    .venv/bin/python scripts/bench_writer.py [--threads 1000] [--dir /dev/shm]

``--ref REV --rounds N`` runs the package of git revision ``REV`` (A) and the working
tree's (B) in alternating child processes over the same pages and prints the ratio B/A of
CPU per thread (medians).
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if "--package" in sys.argv:  # a child of --ref: that revision's package comes first
    sys.path.insert(0, sys.argv[sys.argv.index("--package") + 1])
sys.path.insert(1 if "--package" in sys.argv else 0, str(ROOT))

import orjson  # noqa: E402

GROUP = 64  # threads per group commit, as a run's writer


def _plans(pages: Path) -> list[Any]:
    """Every thread's ThreadCommit, built with the package on the path (not timed)."""
    from pplx_archiver.core.archive.writes import ThreadCommit
    from pplx_archiver.core.thread.flow import PageNeed, thread_flow
    from pplx_archiver.core.thread.model import ListingRow, RenderContext, SpaceRef

    ctx = RenderContext(exported_at="2026-09-01T00:00:00Z")
    plans = []
    for listing, plain, blocks in pickle.loads(pages.read_bytes()):
        space = listing.pop("space")
        row = ListingRow(**listing, space=SpaceRef(*space) if space else None)
        queues = {"plain": list(plain), "blocks": list(blocks)}
        gen, answer = thread_flow(row, ctx, page_limit=100, assets=False), None
        try:
            while True:
                need = gen.send(answer)
                assert isinstance(need, PageNeed)
                body = queues[need.flavour].pop(0)
                answer = (orjson.loads(body), body)
        except StopIteration as stop:
            plan = stop.value
        plans.append(
            ThreadCommit(
                account="bench",
                result=plan.result,
                raw_entries=plan.plain.raw_file,
                raw_blocks=plan.blocks.raw_file if plan.blocks else None,
                listing=row,
                run_id=1,
            )
        )
    return plans


def write_ms(pages: Path, where: Path) -> dict[str, float]:
    """Commit every plan into a fresh archive under ``where``; CPU ms per thread."""
    from pplx_archiver.shell.archive.store import Archive

    plans = _plans(pages)
    gc.collect()
    gc.freeze()
    with tempfile.TemporaryDirectory(prefix="pplx-writer-", dir=where) as tmp:
        archive = Archive(Path(tmp) / "a", group_commit=True)
        start = os.times()
        for index, plan in enumerate(plans, 1):
            archive.commit(plan)
            if index % GROUP == 0:
                archive.flush_done()
        archive.close()
        end = os.times()
    n = len(plans)
    user, system = (end.user - start.user) / n * 1000, (end.system - start.system) / n * 1000
    return {"user_ms": round(user, 3), "sys_ms": round(system, 3), "ms": round(user + system, 3)}


def writer_ab(ref: str, rounds: int, threads: int, seed: int, where: Path) -> dict[str, Any]:
    """The package of ``ref`` (A) and the working tree (B), alternating child processes."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_core import dump_pages, export_ref

    runs: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory(prefix="pplx-writer-ab-") as tmp:
        pages, ref_dir = Path(tmp) / "pages.pickle", export_ref(ref, Path(tmp) / "ref")
        dump_pages(threads, seed, pages)
        for index in range(rounds):
            for side in ("A", "B") if index % 2 == 0 else ("B", "A"):
                package = ["--package", str(ref_dir)] if side == "A" else []
                cmd = [sys.executable, __file__, "--pages", str(pages), "--dir", str(where),
                       *package]  # fmt: skip
                done = subprocess.run(cmd, capture_output=True, text=True, check=True)
                runs[side].append(json.loads(done.stdout))
    med = {s: statistics.median(r["ms"] for r in runs[s]) for s in runs}
    return {"ref": ref, "threads": threads, "dir": str(where), "runs": runs,
            "median_a_ms": round(med["A"], 3), "median_b_ms": round(med["B"], 3),
            "ratio_b_over_a": round(med["B"] / med["A"], 3),
            "load": os.getloadavg()}  # fmt: skip


def main() -> None:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--ref", help="A/B against this git revision")
    parser.add_argument("--rounds", type=int, default=6, help="with --ref: A and B, alternating")
    parser.add_argument("--pages", type=Path, help=argparse.SUPPRESS)  # a child of --ref
    parser.add_argument("--package", help=argparse.SUPPRESS)  # read before the imports
    args = parser.parse_args()
    if args.ref:
        report: dict[str, Any] = writer_ab(args.ref, args.rounds, args.threads, args.seed, args.dir)
    elif args.pages:
        report = write_ms(args.pages, args.dir)
    else:
        sys.path.insert(0, str(ROOT / "scripts"))
        from bench_core import dump_pages

        with tempfile.TemporaryDirectory(prefix="pplx-writer-") as tmp:
            dump_pages(args.threads, args.seed, Path(tmp) / "pages.pickle")
            report = {"threads": args.threads, **write_ms(Path(tmp) / "pages.pickle", args.dir)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
