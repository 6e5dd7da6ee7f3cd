"""Benchmark offline re-render: threads/s with --jobs 1 and --jobs 2 on one archive; prints JSON.

Usage: ``python scripts/bench_rerender.py --out ARCHIVE`` (an existing archive, e.g. from
``pplx-export demo``) or ``python scripts/bench_rerender.py --synth 1000`` (builds a synthetic
archive of N threads with the real render core in a temp folder first). Each pass is a dry run:
every thread is rendered and compared with its stored bytes, nothing is written, and the JSON
reports whether every file came out byte-identical.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pplx_archiver.shell.archive.store import Archive  # noqa: E402
from pplx_archiver.shell.care.rerender import rerender  # noqa: E402


def _pass(out: Path, jobs: int) -> dict[str, Any]:
    with Archive(out) as archive:
        started = time.perf_counter()
        summary = rerender(archive, jobs=jobs, dry_run=True, thread_json=True)
        seconds = time.perf_counter() - started
    return {
        "jobs": jobs,
        "threads": summary.threads,
        "seconds": round(seconds, 3),
        "threads_per_s": round(summary.threads / seconds, 1) if seconds else None,
        "byte_identical": summary.rewritten_files == 0
        and summary.removed_files == 0
        and not summary.failures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="an existing archive")
    group.add_argument("--synth", type=int, help="build a synthetic archive of N threads")
    args = parser.parse_args()
    import structlog

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # keep stdout JSON-only
    tmp: tempfile.TemporaryDirectory[str] | None = None
    out: Path
    if args.synth:
        from tests.shell.archive_builders import build

        tmp = tempfile.TemporaryDirectory(prefix="bench-rerender-")
        out = Path(tmp.name)
        build(out, args.synth)
    else:
        out = args.out
    try:
        _pass(out, 1)  # warm-up: file cache and imports, not counted
        results = [_pass(out, 1), _pass(out, 2)]
    finally:
        if tmp is not None:
            tmp.cleanup()
    one, two = results
    report = {
        "benchmark": "re-render",
        "archive": str(out) if not args.synth else f"synthetic:{args.synth}",
        "runs": results,
        "speedup_jobs2": round(one["seconds"] / two["seconds"], 2) if two["seconds"] else None,
    }
    sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
