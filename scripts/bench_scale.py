"""Scale benchmark: what grows with the archive, at two account sizes compared in one run.

Usage: ``python scripts/bench_scale.py [--sizes 10000,100000] [--work DIR] [--reuse] [--quick]``
(``make bench-scale``). Prints one JSON object and writes it to ``bench/scale.json``
(``--quick``: sizes 100 and 400, written nowhere unless ``--write`` is given).

For each size N the simulator (its own process, no rate limit, no latency) serves an account
of N threads in all five modes, with assets and spaces (and a shared space). Measured:

* **harvest**: one ``batch`` of the whole account: threads/s, peak RSS of the archiver (the
  main process and the writer process it waited for, ``ru_maxrss``), CPU per thread of both
  (``wait4``), the writer's own CPU;
* **nothing to do**: ``sync`` of the unchanged account, without and with ``--include-spaces``
  (wall, CPU, requests the server counted, peak RSS); ``status``, ``alerts``, ``runs``,
  ``failed`` (best wall of 2, its CPU and peak RSS);
* **verify**: the full audit (wall, CPU of the process and its workers, per thread; at the
  smallest size unless ``--full-verify-all``: its cost is linear) and the bounded
  ``verify --sample 1`` (wall, CPU, what it covered);

then the ratios of the larger size to the smaller one and the targets. Every figure is a
child process's own ``wait4`` figure or a ratio within this run, so a busy machine shows as
longer walls in both sizes rather than as a wrong ratio.

Archives go under ``--work`` (default: a temporary folder on disk, deleted at the end);
``--reuse`` keeps them and reuses a complete one (its harvest figures are then the ones
measured when it was built, kept in ``harvest.json`` beside it). A complete archive of N
threads is marked by ``READY`` in its folder and by ``READY-N`` in ``--work`` (each holds
the archive's path).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_harness import (  # noqa: E402
    ChildRun,
    SimProbe,
    isolated_env,
    machine,
    reset_stats,
    run_archiver,
    sim_get,
    sim_pid,
)

from pplx_archiver.sim.config import SimConfig  # noqa: E402
from pplx_archiver.sim.runner import serve_subprocess  # noqa: E402

SEED = 7
SIZES = (10_000, 100_000)
QUICK_SIZES = (100, 400)
OPEN = ["--rate", "100000", "--burst", "1000", "--concurrency", "16"]
OPEN_ASSETS = ["--asset-rate", "100000", "--asset-concurrency", "16"]
SAMPLE = "1"  # verify --sample PERCENT
OFFLINE = ("status", "alerts", "runs", "failed")
TARGETS = {
    "threads_per_s": 100.0,
    "rss_ratio": 1.3,
    "cpu_per_thread_ratio": 0.10,
    "noop_sync_wall_s": 5.0,
    "noop_sync_requests": 3,
    "offline_wall_s": 1.0,
    "verify_sample_wall_s": 60.0,
}


def _config(n: int) -> SimConfig:
    # A shared space of 1 % of the threads (at least 10): the space listing is walked too.
    return SimConfig(threads=n, seed=SEED, cache_size=64, shared_space_threads=max(10, n // 100))


def _online(
    sim: Any, command: str, out: Path, work: Path, spaces: bool = True
) -> tuple[ChildRun, dict[str, Any]]:
    """``batch`` or ``sync`` against the running simulator: the run and the server's counts."""
    with isolated_env(work, sim) as env:
        reset_stats(sim.base_url)
        args = [command, "--out", str(out), "--base-url", sim.base_url, "--log-format", "json"]
        args += [*OPEN, *OPEN_ASSETS, *(["--include-spaces"] if spaces else [])]
        run = run_archiver(args, env=env, workdir=work)
        stats = sim_get(sim.base_url, "/__sim/stats")
    if run.returncode not in (0, 1):
        raise RuntimeError(f"{command} exited {run.returncode}: {run.stdout[-400:]}")
    return run, stats


def _writer(run: ChildRun) -> dict[str, Any]:
    ended = run.named("WRITER_PROCESS_ENDED")
    if not ended:
        return {"writer_cpu_s": None, "writer_peak_rss_mb": None}
    return {
        "writer_cpu_s": ended[-1].get("cpu_s"),
        "writer_peak_rss_mb": ended[-1].get("peak_rss_mb"),
    }


def _entries(out: Path) -> int:
    return sum(len(dirs) + len(files) for _root, dirs, files in os.walk(out))


def harvest(n: int, folder: Path) -> dict[str, Any]:
    """Archive an account of ``n`` threads in one ``batch``; its figures."""
    out = folder / "archive"
    with serve_subprocess(_config(n)) as sim, SimProbe(sim_pid()) as probe:
        run, stats = _online(sim, "batch", out, folder / "work")
    summary = run.summary()
    archived = int(summary.get("archived") or 0)
    entries = _entries(out)
    return {
        "threads": n,
        "archived": archived,
        "failed": summary.get("failed"),
        "exit_code": run.returncode,
        "total_requests": int(stats.get("total_requests", 0)),
        "wall_s": round(run.wall_s, 2),
        "threads_per_s": round(archived / run.wall_s, 1) if run.wall_s else None,
        "cpu_s": round(run.cpu_s, 2),
        "cpu_ms_per_thread": round(1000 * run.cpu_s / n, 3),
        "peak_rss_mb": round(run.peak_rss_mb, 1),
        **_writer(run),
        "archive_entries": entries,
        "archive_mb": round(_du(out) / 1e6, 1),
        **probe.report(),
    }


def _du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_blocks * 512
            except FileNotFoundError:
                continue
    return total


def ensure_archive(n: int, work: Path, reuse: bool) -> tuple[Path, dict[str, Any]]:
    """The archive of ``n`` threads under ``work/N`` (built now, or a complete one reused)."""
    folder = work / str(n)
    ready = folder / "READY"
    record = folder / "harvest.json"
    if reuse and ready.exists() and record.exists():
        result: dict[str, Any] = json.loads(record.read_text())
        result["reused"] = True
        return folder / "archive", result
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    result = harvest(n, folder)
    record.write_text(json.dumps(result, indent=2) + "\n")
    ready.write_text(str(folder / "archive") + "\n")
    (work / f"READY-{n}").write_text(str(folder / "archive") + "\n")
    result["reused"] = False
    return folder / "archive", result


def _offline(args: list[str], work: Path, repeat: int = 2) -> dict[str, Any]:
    """Best wall of ``repeat`` runs of an offline command; peak RSS and CPU of the best."""
    best: ChildRun | None = None
    for _ in range(repeat):
        run = run_archiver(args, workdir=work)
        if run.returncode not in (0, 1):
            raise RuntimeError(f"{args[0]} exited {run.returncode}: {run.stdout[-400:]}")
        if best is None or run.wall_s < best.wall_s:
            best = run
    assert best is not None
    return {
        "wall_s": round(best.wall_s, 3),
        "cpu_s": round(best.cpu_s, 3),
        "peak_rss_mb": round(best.peak_rss_mb, 1),
        "exit_code": best.returncode,
    }


def noop_sync(n: int, out: Path, work: Path, spaces: bool) -> dict[str, Any]:
    """``sync`` of the unchanged account: wall, requests, peak RSS, what it archived
    (``spaces``: with ``--include-spaces``, the shared spaces' listings walked too)."""
    with serve_subprocess(_config(n)) as sim:
        run, stats = _online(sim, "sync", out, work, spaces)
    summary = run.summary()
    return {
        "wall_s": round(run.wall_s, 2),
        "cpu_s": round(run.cpu_s, 2),
        "requests": int(stats.get("total_requests", 0)),
        "requests_by_route": dict(sorted(stats.get("requests", {}).items())),
        "archived": summary.get("archived"),
        "peak_rss_mb": round(run.peak_rss_mb, 1),
        "exit_code": run.returncode,
    }


def _verify(out: Path, work: Path, extra: list[str]) -> dict[str, Any]:
    run = run_archiver(["verify", "--out", str(out), "--json", "--jobs", "2", *extra], workdir=work)
    if run.returncode not in (0, 1):
        raise RuntimeError(f"verify {extra} exited {run.returncode}: {run.stdout[-400:]}")
    report = json.loads(run.stdout.strip().splitlines()[-1]) if run.stdout.strip() else {}
    return {
        "wall_s": round(run.wall_s, 2),
        "cpu_s": round(run.cpu_s, 2),
        "peak_rss_mb": round(run.peak_rss_mb, 1),
        "exit_code": run.returncode,
        "problems": len(report.get("problems", [])),
        "sample": report.get("sample"),
    }


def measure(n: int, out: Path, work: Path, full_verify: bool) -> dict[str, Any]:
    """Every figure of one size but the harvest's."""
    result: dict[str, Any] = {
        "noop_sync": noop_sync(n, out, work, spaces=False),
        "noop_sync_include_spaces": noop_sync(n, out, work, spaces=True),
    }
    for command in OFFLINE:
        result[command] = _offline([command, "--out", str(out), "--json"], work)
    result["verify_sample"] = _verify(out, work, ["--sample", SAMPLE])
    if full_verify:
        full = _verify(out, work, [])
        full["cpu_ms_per_thread"] = round(1000 * full["cpu_s"] / n, 2)
        full["wall_ms_per_thread"] = round(1000 * full["wall_s"] / n, 2)
        result["verify_full"] = full
    return result


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(b / a, 3) if a and b is not None else None


def compare(small: dict[str, Any], large: dict[str, Any]) -> dict[str, Any]:
    """Ratios of the larger size to the smaller, and the targets met."""
    hs, hl = small["harvest"], large["harvest"]
    rss = _ratio(hs["peak_rss_mb"], hl["peak_rss_mb"])
    cpu = _ratio(hs["cpu_ms_per_thread"], hl["cpu_ms_per_thread"])
    sync = large["noop_sync"]
    offline = {c: large[c]["wall_s"] for c in OFFLINE}
    t = TARGETS
    targets = {
        "harvest threads/s >= 100 (both sizes)": min(hs["threads_per_s"], hl["threads_per_s"])
        >= t["threads_per_s"],
        "harvest threads/s >= 100 if CPU-bound on 2 free cores": min(_bound(hs), _bound(hl))
        >= t["threads_per_s"],
        "harvest peak RSS ratio <= 1.3": rss is not None and rss <= t["rss_ratio"],
        "harvest CPU/thread within 10 %": cpu is not None
        and abs(cpu - 1) <= t["cpu_per_thread_ratio"],
        "no-op sync <= 5 s": sync["wall_s"] <= t["noop_sync_wall_s"],
        "no-op sync <= 3 requests": sync["requests"] <= t["noop_sync_requests"],
        **{f"{c} <= 1 s": w <= t["offline_wall_s"] for c, w in offline.items()},
        "verify --sample <= 60 s": large["verify_sample"]["wall_s"] <= t["verify_sample_wall_s"],
    }
    # On a loaded machine a command's wall is mostly time spent waiting for a core; its CPU
    # seconds are what its wall would be on an idle one (each of these runs in one process).
    cpu_targets = {
        "no-op sync CPU <= 5 s": sync["cpu_s"] <= t["noop_sync_wall_s"],
        **{f"{c} CPU <= 1 s": large[c]["cpu_s"] <= t["offline_wall_s"] for c in OFFLINE},
        "verify --sample CPU <= 60 s": large["verify_sample"]["cpu_s"] <= t["verify_sample_wall_s"],
    }
    return {
        "harvest_rss_ratio": rss,
        "harvest_cpu_per_thread_ratio": cpu,
        "harvest_writer_cpu_per_thread_ratio": _ratio(
            _per(hs, "writer_cpu_s"), _per(hl, "writer_cpu_s")
        ),
        "noop_sync_wall_ratio": _ratio(small["noop_sync"]["wall_s"], sync["wall_s"]),
        "noop_sync_cpu_ratio": _ratio(small["noop_sync"]["cpu_s"], sync["cpu_s"]),
        **{f"{c}_wall_ratio": _ratio(small[c]["wall_s"], large[c]["wall_s"]) for c in OFFLINE},
        **{f"{c}_cpu_ratio": _ratio(small[c]["cpu_s"], large[c]["cpu_s"]) for c in OFFLINE},
        "harvest_threads_per_s_cpu_bound": [_bound(hs), _bound(hl)],
        "targets": targets,
        "targets_by_cpu_seconds": cpu_targets,
    }


def _bound(h: dict[str, Any]) -> float:
    """Threads/s the harvest would reach on two otherwise idle cores, bound by CPU: the
    archiver's and the simulator's CPU per thread spread over both cores."""
    per_thread = (h["cpu_s"] + (h.get("sim_cpu_s") or 0.0)) / h["threads"]
    return round(2 / per_thread, 1) if per_thread else 0.0


def _per(h: dict[str, Any], key: str) -> float | None:
    value = h.get(key)
    return value / h["threads"] if value is not None else None


def largest_rss(sizes: dict[str, Any]) -> dict[str, float]:
    """The largest peak RSS of each command at the largest size (memory bounds)."""
    last = sizes[max(sizes, key=int)]
    out = {
        "batch": last["harvest"]["peak_rss_mb"],
        "sync": max(
            last["noop_sync"]["peak_rss_mb"], last["noop_sync_include_spaces"]["peak_rss_mb"]
        ),
    }
    for command in (*OFFLINE, "verify_sample", "verify_full"):
        if command in last:
            out[command] = last[command]["peak_rss_mb"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--quick", action="store_true", help="sizes 100 and 400")
    parser.add_argument("--work", type=Path, default=None, help="folder for the archives")
    parser.add_argument("--reuse", action="store_true", help="keep and reuse complete archives")
    parser.add_argument("--build-only", action="store_true", help="build the archives, stop")
    parser.add_argument(
        "--full-verify-all",
        action="store_true",
        help="full verify at every size (default: the smallest)",
    )
    parser.add_argument("--write", type=Path, default=None, help="JSON file to write")
    args = parser.parse_args()
    sizes = QUICK_SIZES if args.quick else tuple(int(s) for s in args.sizes.split(","))
    write = args.write or (None if args.quick else ROOT / "bench" / "scale.json")
    temporary = args.work is None
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-scale-", dir=_disk_tmp()))
    work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    report: dict[str, Any] = {"benchmark": "scale", "machine": machine(), "sizes": {}}
    try:
        archives = {n: ensure_archive(n, work, args.reuse) for n in sizes}
        for n, (out, harvested) in archives.items():
            entry: dict[str, Any] = {"harvest": harvested}
            if not args.build_only:
                full = args.full_verify_all or n == min(sizes)
                entry |= measure(n, out, work / str(n) / "work", full)
            report["sizes"][str(n)] = entry
    finally:
        if temporary and not args.reuse:
            shutil.rmtree(work, ignore_errors=True)
    if not args.build_only and len(sizes) >= 2:
        small, large = report["sizes"][str(sizes[0])], report["sizes"][str(sizes[-1])]
        report["comparison"] = compare(small, large)
        report["largest_rss_mb"] = largest_rss(report["sizes"])
    report["elapsed_s"] = round(time.time() - started, 1)
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if write is not None:
        write.write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")


def _disk_tmp() -> str:
    """A temporary folder on disk (``/var/tmp``), never a RAM-backed ``/tmp`` or ``/dev/shm``."""
    return "/var/tmp" if Path("/var/tmp").is_dir() else tempfile.gettempdir()


if __name__ == "__main__":
    main()
