"""Render ``bench/results.json`` as the Markdown table of the README's benchmark section.

Usage: ``python scripts/bench_table.py [bench/results.json]`` prints the machine line and one
row per scenario (threads, requests, wall, ideal, efficiency, 429s, CPU per thread, peak RSS,
server CPU share, targets).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _targets(result: dict[str, Any]) -> str:
    targets = result.get("targets") or {}
    if not targets:
        return "–"
    return "<br>".join(f"{name}: {'met' if ok else '**missed**'}" for name, ok in targets.items())


def _row(r: dict[str, Any]) -> str:
    cells = [
        f"{r['scenario']} {r['name']}",
        _fmt(r.get("threads")),
        _fmt(r.get("total_requests")),
        _fmt(r.get("wall_s")),
        _fmt(r.get("ideal_s")),
        _fmt(r.get("efficiency"), 3),
        f"{_fmt(r.get('http_429'))} ({_fmt(100 * r.get('share_429', 0.0), 1)} %)",
        _fmt(r.get("client_cpu_ms_per_thread"), 1),
        _fmt(r.get("peak_rss_mb"), 1),
        _fmt(r.get("sim_core_share"), 2),
        _targets(r),
    ]
    return "| " + " | ".join(cells) + " |"


def table(report: dict[str, Any]) -> str:
    """The machine line and the scenario table as Markdown."""
    m = report["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, Python {m['python']}; "
        f"load average {m['load_average_at_start']} at start, "
        f"{report.get('load_average_at_end')} at end (shared with other jobs); "
        f"run mode {report['mode']}, {report['total_seconds']} s in all.",
        "",
        "| scenario | threads | requests | wall s | ideal s | efficiency | 429s | "
        "client CPU ms/thread | peak RSS MB | server core share | targets |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["scenarios"]:
        if "error" in r:
            lines.append(f"| {r['scenario']} {r['name']} | error: {r['error'][:120]} |")
        elif r["scenario"] == 6:
            for run in r["runs"]:
                lines.append(
                    f"| 6 re-render --jobs {run['jobs']} | {_fmt(run['threads'])} | – | "
                    f"{_fmt(run['wall_s'])} | – | – | – | – | {_fmt(run['peak_rss_mb'], 1)} | "
                    f"– | {_fmt(run['threads_per_s'], 1)} threads/s |"
                )
        elif r["scenario"] == 7:
            for run in r["runs"]:
                lines.append(_row(run | {"targets": {}}))
            lines.append(
                f"| 7 scale ratios | {r['threads']} | – | – | – | – | – | "
                f"ratio {r['cpu_per_thread_ratio']} (net {r['net_cpu_per_thread_ratio']}) | "
                f"ratio {r['rss_ratio']} | – | {_targets(r)} |"
            )
        else:
            lines.append(_row(r))
    return "\n".join(lines)


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "bench" / "results.json"
    sys.stdout.write(table(json.loads(path.read_text())) + "\n")


if __name__ == "__main__":
    main()
