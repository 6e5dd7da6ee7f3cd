"""Benchmark the revision history's storage over 30 syncs; prints JSON.

Usage: ``python scripts/bench_history.py [--threads 300] [--syncs 30] [--share 0.01]``.

Archives a simulated account of N threads, then runs two series of ``sync`` against the
same simulator: ``--syncs`` syncs of the unchanged account (the history must gain no byte),
and ``--syncs`` syncs each after ``share`` of the threads changed (half of them gained a
turn, half had an answer edited under the same entry id). It reports, in one run, the bytes
the history gained, the bytes of the raw files the changed threads held before each change
(what the history is expected to keep, at most), the raw files' total, and the time of
``history`` and ``diff`` of one changed thread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner  # noqa: E402

from pplx_archiver.cli import _register, app  # noqa: E402
from pplx_archiver.sim.config import SimConfig  # noqa: E402
from pplx_archiver.sim.runner import RunningSim, serve_in_thread  # noqa: E402


def _cli(args: list[str]) -> str:
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    if result.exit_code not in (0,):
        raise SystemExit(f"{args[0]} exited {result.exit_code}: {result.output[-500:]}")
    return result.output


def _sim_args(sim: RunningSim, out: Path) -> list[str]:
    return [
        "--out", str(out), "--base-url", sim.base_url, "--session-token", sim.session_token,
        "--log-format", "json", "--concurrency", "8", "--rate", "1000", "--burst", "200",
    ]  # fmt: skip


def _bytes(out: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in out.glob(pattern) if p.is_file())


def _history_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("history/**/*") if p.is_file())


def _raw_of(out: Path, uuids: set[str]) -> int:
    total = 0
    for record in out.glob("*/*/*/thread.json"):
        if orjson.loads(record.read_bytes())["uuid"] in uuids:
            total += _bytes(record.parent, "raw_*.json")
    return total


def _mutate(sim: RunningSim, body: dict[str, Any]) -> Any:
    return httpx.post(sim.base_url + "/__sim/mutate", json=body, timeout=300).json()


def _timed(args: list[str], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        _cli(args)
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--threads", type=int, default=300)
    parser.add_argument("--syncs", type=int, default=30)
    parser.add_argument("--share", type=float, default=0.01)
    args = parser.parse_args()
    import structlog

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    _register()
    tmp = Path(tempfile.mkdtemp(prefix="bench-history-"))
    try:
        out = tmp / "archive"
        with serve_in_thread(SimConfig(threads=args.threads)) as sim:
            _cli(["batch", *_sim_args(sim, out)])
            raw_total = _bytes(out, "*/*/*/raw_*.json")
            for _ in range(args.syncs):
                _cli(["sync", *_sim_args(sim, out)])
            unchanged_growth = _history_bytes(out)
            truth = httpx.get(sim.base_url + "/__sim/truth", timeout=300).json()["threads"]
            answered = [t["uuid"] for t in truth if t["era_state"] == "ok" and t["turns"] >= 1]
            per_day = max(2, round(args.threads * args.share))
            expected, changed, cursor = 0, set(), 0
            for _ in range(args.syncs):
                picked = answered[cursor : cursor + per_day]
                cursor = (cursor + per_day) % max(1, len(answered) - per_day)
                expected += _raw_of(out, set(picked))
                half = len(picked) // 2
                _mutate(
                    sim,
                    {
                        "continue": [{"thread": u, "turns": 1} for u in picked[:half]],
                        "edit": [{"thread": u} for u in picked[half:]],
                    },
                )
                changed.update(picked)
                _cli(["sync", *_sim_args(sim, out)])
            grown = _history_bytes(out)
            one = sorted(changed)[0]
            history_ms = _timed(["history", one, "--out", str(out), "--json"])
            diff_ms = _timed(["diff", one, "--out", str(out), "--json"])
        report = {
            "benchmark": "history",
            "threads": args.threads,
            "syncs": args.syncs,
            "raw_bytes_after_batch": raw_total,
            "unchanged_syncs_history_bytes": unchanged_growth,
            "changed_threads_per_sync": per_day,
            "changed_threads": len(changed),
            "history_bytes_after_changed_syncs": grown,
            "replaced_raw_bytes": expected,
            "history_to_replaced_ratio": round(grown / expected, 3) if expected else None,
            "history_to_raw_ratio": round(grown / raw_total, 4) if raw_total else None,
            "history_cmd_ms_best_of_5": history_ms,
            "diff_cmd_ms_best_of_5": diff_ms,
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
