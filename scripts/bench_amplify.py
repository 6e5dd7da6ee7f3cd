"""Peak RSS of a run fed amplifying bodies (issue 44); prints JSON.

Usage: ``python scripts/bench_amplify.py [--threads 20] [--entries 250000,1000000]``.

For each count N, starts the simulator in a process of its own, makes one thread of a
fresh account answer with a body of N empty ``{}`` entries (250,000: the 750 KB body of the
issue; 1,000,000: its 3 MB body; 20,000,000: a 60 MB body, under the 64 MiB cap), runs
``pplx-export batch`` in a process of its own and reaps it with ``os.wait4`` for its peak
RSS and CPU. Reports the body size, the exit code, the threads archived and failed, the
failure's budget, the files written under the archive and the peak RSS — beside a run of
the same account with no hostile body (N = 0).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pplx_archiver.sim.config import SimConfig  # noqa: E402
from pplx_archiver.sim.runner import RunningSim, serve_subprocess  # noqa: E402

EXE = str(Path(sys.executable).with_name("pplx-export"))


def _run(sim: RunningSim, out: Path) -> dict[str, Any]:
    args = [
        EXE, "batch", "--out", str(out), "--base-url", sim.base_url,
        "--session-token", sim.session_token, "--log-format", "json",
        "--concurrency", "4", "--rate", "1000", "--burst", "100",
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    del err
    log = b"".join(p.read_bytes() for p in (out / "index" / "logs").glob("batch-*.jsonl"))
    events = [orjson.loads(x) for x in log.splitlines() if x.startswith(b"{")]
    summary = next((e for e in events if e.get("event") == "RUN_SUMMARY"), {})
    failed = [e for e in events if e.get("event") == "THREAD_FAILED"]
    files = sum(1 for p in out.rglob("*") if p.is_file())
    return {
        "exit_code": proc.returncode,
        "archived": summary.get("archived"),
        "failed": summary.get("failed"),
        "failure": failed[0]["error"].split(": ", 1)[-1] if failed else None,
        "files": files,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "wall_s": round(time.monotonic() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--entries", default="250000,1000000,20000000")
    args = parser.parse_args()
    counts = [0, *(int(n) for n in args.entries.split(","))]
    with tempfile.TemporaryDirectory(prefix="pplx-bench-") as tmp:
        for n in counts:
            with serve_subprocess(SimConfig(threads=args.threads, seed=5)) as sim:
                body = 0
                if n:
                    victim = httpx.get(sim.base_url + "/__sim/truth").json()["threads"][0]["uuid"]
                    mutation = {"amplify": [{"thread": victim, "entries": n}]}
                    httpx.post(sim.base_url + "/__sim/mutate", json=mutation, timeout=60)
                    body = 2 + len(b'"entries":[]') + 3 * n - 1
                figure = {"entries": n, "body_bytes": body, **_run(sim, Path(tmp) / str(n))}
            print(orjson.dumps(figure).decode(), flush=True)


if __name__ == "__main__":
    main()
