"""Time the render core's block scanner against markdown-it-py on the golden files; print JSON.

Usage: ``python scripts/bench_scan.py [--repeat N] [--baseline PATH]``. Each figure is the best
of N rounds of CPU time over every ``tests/core/golden/*.md`` file. ``--baseline`` names
another checkout's ``core/thread/markdown.py`` whose ``_scan`` (the former single-function scanner)
is timed in the same run; its classification must equal ``scan_blocks``'s line for line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from markdown_it import MarkdownIt  # noqa: E402

from pplx_archiver.core.thread.markdown_blocks import scan_blocks  # noqa: E402


def _best(call: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("baseline_markdown", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _shape(scan: Any) -> tuple[Any, ...]:
    return (scan.kinds, scan.paras, scan.tables, scan.open_fence, scan.open_html)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--baseline", type=Path, default=None)
    args = parser.parse_args(argv)
    texts = [p.read_text() for p in sorted((ROOT / "tests/core/golden").glob("*.md"))]
    lines = [text.split("\n") for text in texts]
    parser_md = MarkdownIt("commonmark").enable("table")
    scan_s = _best(lambda: [scan_blocks(part) for part in lines], args.repeat)
    parse_s = _best(lambda: [parser_md.parse(text) for text in texts], args.repeat)
    result: dict[str, Any] = {
        "chars": sum(map(len, texts)),
        "scan_blocks_ms": round(scan_s * 1000, 2),
        "markdown_it_parse_ms": round(parse_s * 1000, 2),
        "parse_over_scan": round(parse_s / scan_s, 2),
    }
    if args.baseline is not None:
        old = _load(args.baseline)
        assert all(_shape(old._scan(part)) == _shape(scan_blocks(part)) for part in lines)
        old_s = _best(lambda: [old._scan(part) for part in lines], args.repeat)
        result["baseline_scan_ms"] = round(old_s * 1000, 2)
        result["scan_over_baseline"] = round(scan_s / old_s, 3)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
