"""What one ``pplx-export batch`` keeps in memory (tracemalloc, zero latency, JSON out).

The simulator runs in its own process; the archiver runs as a child with ``tracemalloc``
on. A sampler thread in the child records, every ``--every`` seconds, the process's RSS,
the Python heap tracemalloc sees, glibc's heap (in use and free but kept, ``mallinfo2``) and
SQLite's own allocator, and keeps the last
heap snapshot taken before the run ended. The child prints one JSON object: the samples and
the ``--top`` source lines holding the most memory in that snapshot. Run it at two sizes and
compare what grows with the account (``--threads 1000`` then ``--threads 4000``).
Usage: ``python scripts/profile_memory.py [--threads 1000] [--concurrency 16] [--frames 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_harness import isolated_env  # noqa: E402

from pplx_archiver.sim.config import SimConfig  # noqa: E402
from pplx_archiver.sim.runner import serve_subprocess  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--frames", type=int, default=1, help="traceback depth to group by")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--no-trace", action="store_true", help="RSS and gc only (fast)")
    args = parser.parse_args()
    config = SimConfig(threads=args.threads, seed=args.seed, cache_size=64)
    with tempfile.TemporaryDirectory(prefix="pplx-mem-") as tmp:
        work = Path(tmp)
        with serve_subprocess(config) as sim, isolated_env(work, sim) as env:
            child_args = [str(args.every), str(0 if args.no_trace else args.frames), str(args.top)]
            cmd = [sys.executable, "-c", _CHILD, *child_args]
            cmd += ["batch", "--out", str(work / "archive")]
            cmd += ["--base-url", sim.base_url, "--log-format", "json"]
            cmd += ["--rate", "100000", "--burst", "1000", "--concurrency", str(args.concurrency)]
            cmd += ["--asset-rate", "100000", "--asset-concurrency", "16"]
            report = work / "memory.json"
            done = subprocess.run(
                cmd,
                env={**os.environ, **env, "PPLX_MEMORY_REPORT": str(report)},
                cwd=str(ROOT),
                capture_output=True,
                check=False,
            )
            if not report.exists():
                print(done.stderr.decode(errors="replace")[-2000:], file=sys.stderr)
                raise SystemExit(f"exit {done.returncode}: no memory report")
            data = json.loads(report.read_text())
    data |= {"threads": args.threads, "exit": done.returncode}
    if done.returncode:
        data["stderr_tail"] = done.stderr.decode(errors="replace")[-1500:]
    print(json.dumps(data, indent=1))


_CHILD = r"""
import gc, json, os, sys, threading, time, tracemalloc
every, frames, top = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sys.argv = ["pplx-export", *sys.argv[4:]]
if frames:
    tracemalloc.start(frames)
samples, last = [], {}
stop = threading.Event()
start = time.monotonic()

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                last[line.split(":")[0]] = int(line.split()[1]) / 1024
    return last

def native():
    # glibc's heap (every arena) and SQLite's own allocator, which tracemalloc cannot see
    import ctypes, _sqlite3
    out = {}
    FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    FIELDS.split()]
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        m = libc.mallinfo2()
        out |= {"malloc_in_use_mb": round((m.uordblks + m.hblkhd) / 2**20, 1),
                "malloc_free_mb": round(m.fordblks / 2**20, 1),
                "malloc_arena_mb": round(m.arena / 2**20, 1)}
    except (OSError, AttributeError):
        pass
    try:
        lib = ctypes.CDLL(_sqlite3.__file__)
        lib.sqlite3_memory_used.restype = ctypes.c_int64
        out["sqlite_mb"] = round(lib.sqlite3_memory_used() / 2**20, 1)
    except (OSError, AttributeError):
        pass
    return out

def sample():
    rss_mb()
    row = {"t": round(time.monotonic() - start, 1), "rss_mb": round(last["VmRSS"], 1),
           "hwm_mb": round(last["VmHWM"], 1), "gc_counts": gc.get_count(), **native()}
    if frames:
        row["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
        last["snapshot"] = tracemalloc.take_snapshot()
    samples.append(row)

def loop():
    while not stop.wait(every):
        sample()

threading.Thread(target=loop, daemon=True).start()
from pplx_archiver.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
finally:
    stop.set()
    sample()
    out = {"samples": samples, "code": code}
    snap = last.get("snapshot")
    if snap is not None:
        snap = snap.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        stats = snap.statistics("traceback" if frames > 1 else "lineno")
        out["top"] = [{"kb": round(s.size / 1024, 1), "count": s.count,
                       "where": [f"{f.filename.split('site-packages/')[-1]}:{f.lineno}"
                                 for f in s.traceback]} for s in stats[:top]]
    with open(os.environ["PPLX_MEMORY_REPORT"], "w") as f:
        json.dump(out, f)
"""


if __name__ == "__main__":
    main()
