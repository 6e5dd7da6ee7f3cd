"""Client CPU per API request and per CDN download against the simulator, A/B between trees.

``python scripts/bench_http.py --ref /path/to/other/tree [--requests 600] [--rounds 3]``
serves the simulator in a child process (``serve_subprocess``, zero latency) and runs, in
fresh interpreters alternating between the other tree (A) and this one (B), ``--requests``
API GETs of thread details (``ApiClient.get_json``) and as many CDN downloads
(``CdnDownloader.download``), ``--concurrency`` at a time. Each run measures its own CPU
(``time.process_time``) around the requests only (start-up, imports and the first request of
each kind excluded). Prints JSON: CPU µs per request of each kind, each run, ratios B/A of
the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


async def _measure(
    info: dict[str, Any], n: int, concurrency: int, n_cdn: int | None = None
) -> dict[str, float]:
    from pplx_archiver.settings import Settings
    from pplx_archiver.shell.net.download import CdnDownloader
    from pplx_archiver.shell.net.http import ApiClient

    n_cdn = n if n_cdn is None else n_cdn
    settings = Settings(
        base_url=info["base_url"], concurrency=concurrency, rate=100_000.0, burst=1000
    )
    async with ApiClient(
        settings, cookies=info["cookies"], account_id=info["account_id"]
    ) as client:
        rows, _ = await client.post_json(
            "/rest/thread/list_ask_threads", {"limit": 100, "offset": 0}
        )
        slugs = [row["slug"] for row in rows]
        bodies = [await client.get_json(f"/rest/thread/{slug}") for slug in slugs[:40]]
        urls = sorted(
            {
                u.replace("\\u0026", "&")
                for _, raw in bodies
                for u in re.findall(rb'"(http[^"]*/__cdn/[^"]*)"', raw)
                for u in [u.decode()]
            }
        )
        gate = asyncio.Semaphore(concurrency)

        async def api(i: int) -> None:
            async with gate:
                await client.get_json(f"/rest/thread/{slugs[i % len(slugs)]}")

        start = time.process_time()
        await asyncio.gather(*(api(i) for i in range(n)))
        api_cpu = time.process_time() - start
    # tmpfs when there is one: fsync on a loaded disk would be most of the variance
    shm = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        async with CdnDownloader(concurrency=concurrency, rate=1e6) as cdn:
            await cdn.download(urls[0], Path(tmp) / "warm")

            async def get(i: int) -> None:
                await cdn.download(urls[i % len(urls)], Path(tmp) / f"f{i}")

            start = time.process_time()
            await asyncio.gather(*(get(i) for i in range(n_cdn)))
            cdn_cpu = time.process_time() - start
    return {
        "api_us": api_cpu / max(n, 1) * 1e6,
        "cdn_us": cdn_cpu / max(n_cdn, 1) * 1e6,
        "cdn_urls": len(urls),
    }


def _child(args: argparse.Namespace) -> None:
    info = json.loads(os.environ["BENCH_HTTP_SIM"])
    if args.profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)
        out = profiler.runcall(asyncio.run, _measure(info, args.requests, args.concurrency))
        profiler.dump_stats(args.profile)
    else:
        out = asyncio.run(_measure(info, args.requests, args.concurrency, args.downloads))
    print(json.dumps(out))


def _run(tree: Path, info: dict[str, Any], args: argparse.Namespace) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree), BENCH_HTTP_SIM=json.dumps(info))
    cmd = [sys.executable, __file__, "--child", "--requests", str(args.requests)]
    cmd += ["--concurrency", str(args.concurrency)]
    if args.profile:
        cmd += ["--profile", str(args.profile)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=tree)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _instructions(tree: Path, info: dict[str, Any], n_api: int, n_cdn: int) -> int:
    env = dict(os.environ, PYTHONPATH=str(tree), BENCH_HTTP_SIM=json.dumps(info))
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += [__file__, "--child", "--requests", str(n_api), "--downloads", str(n_cdn)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=tree)
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found[1])


def _callgrind(args: argparse.Namespace) -> None:
    """Instructions per API request and per download: runs of LOW and HIGH, differenced (the
    start-up and the warm-up requests cancel out)."""
    from pplx_archiver.sim.config import SimConfig
    from pplx_archiver.sim.runner import serve_subprocess

    low, high = args.callgrind
    out: dict[str, dict[str, float]] = {}
    with serve_subprocess(SimConfig(threads=args.threads)) as sim:
        info = {"base_url": sim.base_url, "cookies": sim.cookies, "account_id": sim.account_id}
        for name, tree in (("A", args.ref or ROOT), ("B", ROOT)):
            base = _instructions(tree, info, low, low)
            api = _instructions(tree, info, high, low)
            cdn = _instructions(tree, info, low, high)
            out[name] = {
                "api_instr": (api - base) / (high - low),
                "cdn_instr": (cdn - base) / (high - low),
            }
    ratios = {k: out["B"][k] / out["A"][k] for k in ("api_instr", "cdn_instr")}
    print(json.dumps({"per_request": out, "ratio": ratios}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ref", type=Path, help="the other tree (A)")
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--downloads", type=int, help="CDN downloads (default: --requests)")
    parser.add_argument(
        "--callgrind",
        nargs=2,
        type=int,
        metavar=("LOW", "HIGH"),
        help="count instructions instead (valgrind): runs of LOW and HIGH requests, per kind",
    )
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--profile", type=Path, help="cProfile dump of one run of this tree")
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    sys.path.insert(0, str(ROOT))
    from pplx_archiver.sim.config import SimConfig
    from pplx_archiver.sim.runner import serve_subprocess

    if args.callgrind:
        _callgrind(args)
        return
    trees = {"A": args.ref or ROOT, "B": ROOT}
    if args.profile:
        args.rounds, trees["A"] = 1, ROOT
    runs: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
    with serve_subprocess(SimConfig(threads=args.threads)) as sim:
        info = {"base_url": sim.base_url, "cookies": sim.cookies, "account_id": sim.account_id}
        for _ in range(args.rounds):
            for name in ("A", "B"):
                runs[name].append(_run(trees[name], info, args))
    med = {
        name: {k: statistics.median(r[k] for r in rs) for k in ("api_us", "cdn_us")}
        for name, rs in runs.items()
    }
    print(
        json.dumps(
            {
                "runs": runs,
                "median": med,
                "ratio_api": med["B"]["api_us"] / med["A"]["api_us"],
                "ratio_cdn": med["B"]["cdn_us"] / med["A"]["cdn_us"],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
