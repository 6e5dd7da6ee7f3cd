"""Benchmark the simulator: thread-detail requests/s from one uvicorn worker at zero latency.

The server runs in its own process (``serve_subprocess``); the client side is a pool of
processes, each with one keep-alive ``http.client`` connection (httpx costs more CPU per
request than the server does, and the machine has two cores). Two figures: *cold* (each
thread fetched once, the body generated on the spot) and *warm* (repeats of threads whose
bodies sit in the server's LRU). Prints JSON.
Usage: ``python scripts/bench_sim.py [--threads 2000] [--requests 4000] [--workers 4]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import sys
import time
import urllib.parse

from pplx_archiver.sim.config import CORE_BAR_THREADS, SimConfig
from pplx_archiver.sim.runner import serve_subprocess
from pplx_archiver.sim.state import AccountState


def _fetch(job: tuple[tuple[str, int, str], list[str]]) -> tuple[int, int]:
    (host, port, cookie), paths = job
    conn = http.client.HTTPConnection(host, port, timeout=30)
    ok = size = 0
    for path in paths:
        conn.request("GET", path, headers={"Cookie": cookie})
        resp = conn.getresponse()
        body = resp.read()
        ok += resp.status == 200
        size += len(body)
    conn.close()
    return ok, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=CORE_BAR_THREADS)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--distinct", type=int, default=1000, help="threads fetched cold")
    args = parser.parse_args()
    config = SimConfig(threads=args.threads)
    state = AccountState(config)
    ids = [state.plan(i).uuid for i in range(min(args.distinct, args.threads))]
    with serve_subprocess(config) as sim:
        cookie = "; ".join(f"{k}={v}" for k, v in sim.cookies.items())
        host = urllib.parse.urlsplit(sim.base_url)
        job = (host.hostname, host.port, cookie)
        paths = [f"/rest/thread/{tid}?version=2.18&source=default" for tid in ids]
        with concurrent.futures.ProcessPoolExecutor(args.workers) as pool:
            start = time.perf_counter()
            cold = list(
                pool.map(_fetch, [(job, paths[k :: args.workers]) for k in range(args.workers)])
            )
            cold_s = time.perf_counter() - start
            warm_paths = [paths[k % min(len(paths), 200)] for k in range(args.requests)]
            start = time.perf_counter()
            results = list(
                pool.map(
                    _fetch, [(job, warm_paths[k :: args.workers]) for k in range(args.workers)]
                )
            )
            elapsed = time.perf_counter() - start
    ok = sum(r[0] for r in results)
    out = {
        "threads": args.threads,
        "distinct_threads": len(ids),
        "requests": args.requests,
        "ok": ok,
        "seconds": round(elapsed, 3),
        "requests_per_s": round(args.requests / elapsed, 1),
        "cold_requests": len(paths),
        "cold_requests_per_s": round(len(paths) / cold_s, 1),
        "cold_ok": sum(r[0] for r in cold),
        "mean_body_bytes": round(sum(r[1] for r in results) / max(1, args.requests)),
        "workers": args.workers,
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
