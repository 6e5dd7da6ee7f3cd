"""A/B of one benchmark scenario: the package of a git revision against the working tree.

``python scripts/bench_ab.py --ref HEAD~1 --only 2 --rounds 2`` exports ``pplx_archiver`` of
``--ref`` (``git archive``) to a temp folder and runs ``scripts/bench.py --quick --only N``
alternately with that package first on ``PYTHONPATH`` (A) and with the working tree (B), so
both sides see the same machine load. Prints one JSON object: the figures of every run and
the ratios B/A of the means (client CPU per thread, wall, efficiency).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ("client_cpu_ms_per_thread", "wall_s", "efficiency", "peak_rss_mb", "http_429")


def export_ref(ref: str, dest: Path) -> None:
    """Write the ``pplx_archiver`` package of ``ref`` under ``dest``."""
    archive = subprocess.run(
        ["git", "archive", ref, "pplx_archiver"], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def run_once(scenario: str, pythonpath: str | None, results: Path) -> dict[str, Any]:
    """One ``bench.py --quick --only N`` run; its scenario's JSON figures."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    cmd = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--quick", "--only", scenario]
    subprocess.run([*cmd, "--results", str(results)], env=env, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    data = json.loads(results.read_text())
    found = [s for s in data["scenarios"] if str(s.get("scenario")) == scenario]
    return {k: found[0].get(k) for k in FIGURES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ref", default="HEAD", help="git revision of side A (default HEAD)")
    parser.add_argument("--only", default="2", help="one scenario number of scripts/bench.py")
    parser.add_argument("--rounds", type=int, default=2, help="A then B, this many times")
    args = parser.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory(prefix="pplx-ab-") as tmp:
        ref_dir = Path(tmp) / "ref"
        ref_dir.mkdir()
        export_ref(args.ref, ref_dir)
        for _ in range(args.rounds):
            runs["A"].append(run_once(args.only, str(ref_dir), Path(tmp) / "a.json"))
            runs["B"].append(run_once(args.only, None, Path(tmp) / "b.json"))
    means = {
        side: {k: statistics.fmean(float(r[k] or 0) for r in rs) for k in FIGURES[:3]}
        for side, rs in runs.items()
    }
    ratios = {k: round(means["B"][k] / means["A"][k], 3) for k in FIGURES[:3] if means["A"][k]}
    print(json.dumps({"ref": args.ref, "scenario": args.only, "runs": runs, "means": means,
                      "ratio_b_over_a": ratios, "load": os.getloadavg()}))  # fmt: skip


if __name__ == "__main__":
    main()
