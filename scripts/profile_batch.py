"""Profile one ``pplx-export batch`` against the simulator (cProfile, zero latency).

The simulator runs in its own process; the archiver runs as a child under ``cProfile`` and
the profile is written to ``--profile`` (read it with ``python -m pstats`` or
``--top N`` here). Used to find where the client's CPU per thread goes before optimising.
Usage: ``python scripts/profile_batch.py [--threads 600] [--concurrency 32] [--top 40]``.
"""

from __future__ import annotations

import argparse
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_harness import isolated_env  # noqa: E402

from pplx_archiver.sim.config import SimConfig  # noqa: E402
from pplx_archiver.sim.runner import serve_subprocess  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--threads", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", type=Path, default=Path("/tmp/pplx-batch.prof"))
    parser.add_argument("--top", type=int, default=40, help="print the N costliest functions")
    parser.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumtime)")
    parser.add_argument(
        "--py-spy",
        type=Path,
        default=None,
        help="sample with this py-spy binary instead (every thread; raw stacks to --profile)",
    )
    args = parser.parse_args()
    config = SimConfig(threads=args.threads, seed=args.seed, cache_size=64)
    with tempfile.TemporaryDirectory(prefix="pplx-prof-") as tmp:
        work = Path(tmp)
        with serve_subprocess(config) as sim, isolated_env(work, sim) as env:
            cmd = [sys.executable, "-c", _CHILD, str(args.profile)]
            if args.py_spy:
                cmd = [str(args.py_spy), "record", "--format", "raw", "--threads", "--rate", "200"]
                cmd += ["-o", str(args.profile), "--", sys.executable, "-c", _SPY_CHILD]
            cmd += ["batch", "--out", str(work / "archive")]
            cmd += ["--base-url", sim.base_url, "--log-format", "json"]
            cmd += ["--rate", "100000", "--burst", "1000", "--concurrency", str(args.concurrency)]
            cmd += ["--asset-rate", "100000", "--asset-concurrency", "16"]
            started = time.perf_counter()
            done = subprocess.run(
                cmd, env={**_base_env(), **env}, cwd=str(ROOT), capture_output=True, check=False
            )
            wall = time.perf_counter() - started
    print(f"exit {done.returncode}, wall {wall:.1f} s, profile in {args.profile}")
    if done.returncode not in (0, 1):
        print(done.stderr.decode(errors="replace")[-2000:])
    if args.py_spy:
        return
    stats = pstats.Stats(str(args.profile))
    print(f"total {stats.total_tt:.2f} s of profiled CPU")  # type: ignore[attr-defined]
    stats.sort_stats(args.sort).print_stats(args.top)


# The child profiles with CPU time (``time.process_time``), not wall time: on a loaded
# machine wall time would charge other processes' work to whatever function was running.
_CHILD = """
import cProfile, sys, time
from pplx_archiver.cli import main
path = sys.argv[1]
sys.argv = ["pplx-export", *sys.argv[2:]]
prof = cProfile.Profile(time.process_time)
prof.enable()
try:
    main()
finally:
    prof.disable()
    prof.dump_stats(path)
"""


_SPY_CHILD = """
import sys
from pplx_archiver.cli import main
sys.argv = ["pplx-export", *sys.argv[1:]]
main()
"""


def _base_env() -> dict[str, str]:
    import os

    return dict(os.environ)


if __name__ == "__main__":
    main()
