"""Benchmark the static site build: full build, no-op rebuild, 1 % rebuild; prints JSON.

Usage: ``python scripts/bench_site.py --out ARCHIVE`` (an existing archive, e.g. from
``pplx-export demo --threads 2000``; its site is written to a temp folder, the archive is
not touched) or ``python scripts/bench_site.py --sim 2000`` (archives a simulated account of
N threads into a temp folder first, as ``pplx-export demo`` does). ``--jobs`` sets the worker
processes of the full build (default: the CPU count). The 1 % pass marks 1 % of the threads
changed (their input hash moves) and rebuilds: only those pages and the indexes are written.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pplx_archiver.shell.archive.store import Archive  # noqa: E402
from pplx_archiver.site import build as site_build  # noqa: E402


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _pass(archive: Archive, dest: Path, name: str, *, full: bool, jobs: int) -> dict[str, Any]:
    cpu, started = _cpu(), time.perf_counter()
    summary = site_build.build_site(archive, dest, full=full, jobs=jobs)
    seconds = time.perf_counter() - started
    return {
        "pass": name,
        "jobs": jobs,
        "threads": summary.threads,
        "pages_built": summary.built,
        "failed": summary.failed,
        "files_written": summary.files_written,
        "wall_s": round(seconds, 2),
        "threads_per_s": round(summary.threads / seconds, 1) if seconds else None,
        "cpu_s_incl_workers": round(_cpu() - cpu, 2),
    }


def _mark_changed(dest: Path, share: float) -> int:
    """Forget the input hash of ``share`` of the threads (as if a sync had changed them)."""
    path = dest / site_build.MANIFEST
    manifest = orjson.loads(path.read_bytes())
    uuids = sorted(manifest["threads"])
    picked = uuids[:: max(1, round(1 / share))]
    for uuid in picked:
        manifest["threads"][uuid]["hash"] = "changed"
    path.write_bytes(orjson.dumps(manifest))
    return len(picked)


def _size_mb(dest: Path) -> float:
    return round(sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) / 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="an existing archive")
    group.add_argument("--sim", type=int, help="archive a simulated account of N threads first")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    import structlog

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # keep stdout JSON-only
    tmp = Path(tempfile.mkdtemp(prefix="bench-site-"))
    try:
        out = args.out
        if args.sim:
            out = tmp / "archive"
            exe = Path(sys.executable).parent / "pplx-export"
            cmd = [str(exe), "demo", "--out", str(out), "--threads", str(args.sim)]
            subprocess.run([*cmd, "--log-format", "json"], check=True, capture_output=True)
        dest = tmp / "site"
        with Archive(out) as archive:
            runs = [_pass(archive, dest, "full", full=True, jobs=args.jobs)]
            runs.append(_pass(archive, dest, "no-op rebuild", full=False, jobs=args.jobs))
            changed = _mark_changed(dest, 0.01)
            runs.append(_pass(archive, dest, f"rebuild {changed} changed", full=False, jobs=1))
        report = {
            "benchmark": "site",
            "archive": str(args.out) if args.out else f"simulated:{args.sim}",
            "runs": runs,
            "site_mb": _size_mb(dest),
            "search_index_mb": round(
                sum(p.stat().st_size for p in [dest / "search-index.js", *dest.glob("search/*.js")])
                / 1e6,
                2,
            ),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
