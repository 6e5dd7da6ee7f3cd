"""Benchmark the offline commands at scale, each figure a same-run comparison; prints JSON.

Usage::

    python scripts/bench_scale_offline.py [--parts site,care,search,history]
        [--sizes 20000,100000] [--turns 100000,1000000] [--history-threads 2000]
        [--results bench/scale-offline.json]

Parts (each merged into ``--results`` as soon as it is measured, so a long run that is
stopped keeps what it measured):

- ``site``: archives of each ``--sizes`` threads built directly with the real render core
  (``tests/shell/archive_builders``, no HTTP), then ``site`` in one process: a full build
  (``--jobs 1``, CPU by ``getrusage`` incl. workers), a no-op rebuild, a rebuild after 1 %
  of the threads changed, and a dry re-render of the same archive as the yardstick; the
  size of the offline search data and its load time in Chromium (``/usr/bin/chromium``
  through Playwright, when both are installed).
- ``care``: ``reindex`` and ``relations`` on the same archives: CPU and wall per thread,
  peak RSS of a child process running each.
- ``search``: the search benchmark's corpus (``scripts/bench_search.py``) indexed in stages;
  at each ``--turns`` checkpoint the index size against the prose, the build's CPU per turn
  and the p50/p95 of each query kind.
- ``history``: ``scripts/bench_history.py``'s 30 unchanged and 30 changing syncs at
  ``--history-threads``.

Every ratio compares two sizes measured in the same run (the host is shared: absolute times
follow its load).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class Results:
    """The results file, rewritten after every figure."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.data: dict[str, Any] = orjson.loads(path.read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            self.data = {}
        self.data.setdefault("benchmark", "scale-offline")
        self.data["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}

    def put(self, part: str, key: str, value: Any) -> None:
        self.data.setdefault(part, {})[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(orjson.dumps(self.data, option=orjson.OPT_INDENT_2) + b"\n")
        sys.stdout.write(orjson.dumps({"part": part, key: value}).decode() + "\n")
        sys.stdout.flush()


# -- search -------------------------------------------------------------------------------


def part_search(res: Results, checkpoints: list[int], per_kind: int, root: Path) -> None:
    """Index the search corpus in stages; measure size, build cost and latency at each."""
    import bench_search as bs

    from pplx_archiver.shell.archive import search, search_index
    from pplx_archiver.shell.archive.store import Archive

    target = max(checkpoints)
    rng = random.Random(5)
    texts: list[str] = []  # a sample of indexed values to draw queries from
    prose = turns = threads = 0
    cpu_build = wall_build = 0.0
    stream = bs.corpus(target)
    pending = sorted(checkpoints)
    with Archive(root / "search-archive") as archive:
        batch: list[Any] = []
        while pending:
            meta, thread = next(stream)
            threads += 1
            turns += len(thread.rows) - 1
            for row in thread.rows:
                for value in row.values():
                    prose += len(value.encode("utf-8"))
                    if value and (len(texts) < 20_000 or rng.random() < 0.02):
                        texts.append(value)
            batch.append((meta, thread))
            due = turns >= pending[0]
            if len(batch) < bs.BATCH and not due:
                continue
            c0, w0 = _cpu(), time.perf_counter()
            with archive.index.transaction() as db:
                for m, t in batch:
                    search.index_thread(db, m, t)
            batch = []
            if not due:
                cpu_build += _cpu() - c0
                wall_build += time.perf_counter() - w0
                continue
            with archive.index.transaction() as db:
                search_index.optimize(db)
            cpu_build += _cpu() - c0
            wall_build += time.perf_counter() - w0
            pending.pop(0)
            db = archive.index._db
            tables = dict(
                db.execute(
                    "SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'search%' GROUP BY name"
                ).fetchall()
            )
            index_bytes = sum(int(v) for v in tables.values())
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            latency = bs.measure(search.open_readonly(archive.index.path), texts, per_kind)
            worst = max(v["p95_ms"] for v in latency.values())
            res.put(
                "search",
                f"turns_{turns}",
                {
                    "turns": turns,
                    "threads": threads,
                    "prose_bytes": prose,
                    "index_bytes": index_bytes,
                    "index_tables_bytes": tables,
                    "size_ratio": round(index_bytes / prose, 3),
                    "build_cpu_s_so_far": round(cpu_build, 1),
                    "build_wall_s_so_far": round(wall_build, 1),
                    "build_cpu_ms_per_turn": round(1000 * cpu_build / turns, 3),
                    "latency": latency,
                    "worst_p95_ms": worst,
                    "targets_met": index_bytes / prose <= 3.0 and worst <= 50.0,
                    "load_average": _load(),
                },
            )


# -- archives, site, reindex, relations --------------------------------------------------


def _grow(out: Path, start: int, stop: int) -> float:
    """Add threads ``start..stop-1`` to the archive at ``out`` (the render core and the
    writer, no HTTP; without fsync: building the archive is not what is measured)."""
    from pplx_archiver.shell.archive.store import Archive
    from tests.shell.archive_builders import harvest

    real_fsync = os.fsync
    os.fsync = lambda _fd: None  # type: ignore[assignment]
    began = time.perf_counter()
    try:
        with Archive(out) as archive:
            for i in range(start, stop):
                harvest(archive, i, variant=(i % 3 == 0))
    finally:
        os.fsync = real_fsync
    return time.perf_counter() - began


def _change(out: Path, size: int, share: float) -> int:
    """Re-archive ``share`` of the threads with a changed answer variant (a real change)."""
    from pplx_archiver.shell.archive.store import Archive
    from tests.shell.archive_builders import harvest

    picked = range(0, size, max(1, round(1 / share)))
    with Archive(out) as archive:
        for i in picked:
            harvest(archive, i, variant=(i % 3 != 0))
    return len(picked)


def _child(args: list[str]) -> dict[str, Any]:
    """Run ``pplx-export ARGS`` as a child: wall, its own CPU and peak RSS (``wait4``)."""
    exe = Path(sys.executable).parent / "pplx-export"
    began = time.perf_counter()
    proc = subprocess.Popen(
        [str(exe), *args, "--log-format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    stdout = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"pplx-export {args[0]} exited {proc.returncode}")
    return {
        "exit": proc.returncode,
        "wall_s": round(time.perf_counter() - began, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "stdout_tail": stdout.decode(errors="replace")[-300:],
    }


def _per_thread(run: dict[str, Any], threads: int) -> dict[str, Any]:
    run = {k: v for k, v in run.items() if k != "stdout_tail"}
    run["cpu_ms_per_thread"] = round(1000 * run["cpu_s"] / threads, 3)
    return run


def _ratios(res: Results, part: str, sizes: list[int]) -> None:
    """Per-thread CPU of the largest size against the smallest, for every measured step."""
    small, large = (res.data.get(part, {}).get(f"threads_{n}") for n in (sizes[0], sizes[-1]))
    if not small or not large or small is large:
        return
    out: dict[str, Any] = {"sizes": [sizes[0], sizes[-1]]}
    for step, fig in large.items():
        if isinstance(fig, dict) and "cpu_ms_per_thread" in fig and step in small:
            before = small[step]["cpu_ms_per_thread"]
            out[step] = round(fig["cpu_ms_per_thread"] / before, 3) if before else None
        if isinstance(fig, dict) and "peak_rss_mb" in fig and step in small:
            out[f"{step}_rss"] = round(fig["peak_rss_mb"] / small[step]["peak_rss_mb"], 3)
    res.put(part, "ratio_large_to_small", out)


_PROBE = """<!doctype html><meta charset="utf-8"><input id="search"><ul id="results" hidden></ul>
<script>window.T0 = performance.now();</script>
<script src="fold.js"></script><script src="search-index.js"></script>
<script src="site.js"></script>
<script>window.T1 = performance.now();</script>
"""
_QUERY_JS = """async (q) => {
  const box = document.getElementById("search"), list = document.getElementById("results");
  const t0 = performance.now();
  box.value = q;
  box.dispatchEvent(new Event("input"));
  while (list.dataset.done !== q) await new Promise((r) => setTimeout(r, 1));
  return [performance.now() - t0, list.querySelectorAll("a.hit").length];
}"""


def _search_mb(folder: Path) -> float:
    """Size of the offline search data: the head and every shard."""
    files = [folder / "search-index.js", *(folder / "search").glob("*.js")]
    return round(sum(p.stat().st_size for p in files if p.exists()) / 1e6, 2)


def _queries(docs: list[tuple[Any, Any]]) -> dict[str, str]:
    """Queries of each kind from the corpus: its most frequent term (the largest postings),
    a median one, a rare one, two words, a word's beginning, Chinese when there is any."""
    from pplx_archiver.site.offline_search import turn_terms

    counts: dict[str, int] = {}
    for meta, turns in docs:
        for turn in turns:
            for term in turn_terms(meta.title, turn[1]):
                counts[term] = counts.get(term, 0) + 1
    words = sorted((t for t in counts if t.isascii() and t.isalpha() and len(t) >= 4),
                   key=lambda t: (-counts[t], t))  # fmt: skip
    out = {"most_frequent": words[0], "median": words[len(words) // 2], "rare": words[-1]}
    out["two_words"] = f"{words[1]} {words[len(words) // 3]}"
    out["prefix"] = words[len(words) // 4][:4]
    cjk = sorted((t for t in counts if not t.isascii() and len(t) == 2), key=lambda t: -counts[t])
    if cjk:
        out["chinese_2"] = cjk[0]
    return out


def _browser_load(folder: Path, queries: dict[str, str]) -> dict[str, Any] | None:
    """What Chromium takes to open the search (file://, as a user opens the index page) and
    to answer each query the first time (loading the shards it needs), best of three fresh
    pages; the target is the page load plus the slowest query."""
    chromium = Path("/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not chromium.exists():
        return None
    probe = folder / "bench-load.html"
    probe.write_text(_PROBE)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=str(chromium), headless=True, args=["--no-sandbox"]
            )
            try:
                runs = []
                for _ in range(3):
                    page = browser.new_page()
                    began = time.perf_counter()
                    page.goto(probe.as_uri(), wait_until="load", timeout=120_000)
                    run: dict[str, Any] = {"load_s": round(time.perf_counter() - began, 3)}
                    run["script_s"] = round(page.evaluate("window.T1 - window.T0") / 1000, 3)
                    for kind, query in queries.items():
                        ms, hits = page.evaluate(_QUERY_JS, query)
                        run[kind] = {"query": query, "s": round(ms / 1000, 3), "hits": hits}
                    run["worst_s"] = round(
                        run["load_s"] + max((run[k]["s"] for k in queries), default=0.0), 3
                    )
                    runs.append(run)
                    page.close()
            finally:
                browser.close()
    finally:
        probe.unlink()
    best = min(runs, key=lambda r: r["worst_s"])
    return {"runs": runs, "best": best, "best_worst_s": best["worst_s"], "target_s": 2.0}


def part_site_care(res: Results, sizes: list[int], root: Path, parts: set[str]) -> None:
    """Grow one archive through ``sizes``; at each size run reindex, relations, re-render
    and site (full, no-op, after 1 % changed) as child processes."""
    out = root / "archive"
    have = 0
    for size in sorted(sizes):
        grown = _grow(out, have, size)
        have = size
        key = f"threads_{size}"
        if "care" in parts:
            care: dict[str, Any] = {"threads": size, "archive_built_s": round(grown, 1)}
            for name in ("reindex", "relations"):
                care[name] = _per_thread(_child([name, "--out", str(out), "-q"]), size)
            res.put("care", key, care)
        if "site" in parts:
            dest = root / f"site-{size}"
            site: dict[str, Any] = {"threads": size}
            site["re-render"] = _per_thread(
                _child(["re-render", "--out", str(out), "--dry-run", "--jobs", "1", "-q"]), size
            )
            site["full"] = _per_thread(
                _child(["site", "--out", str(out), "--to", str(dest), "--full", "--jobs", "1"]),
                size,
            )
            site["noop"] = _per_thread(
                _child(["site", "--out", str(out), "--to", str(dest), "--jobs", "1"]), size
            )
            changed = _change(out, size, 0.01)
            site["changed_threads"] = changed
            site["one_percent"] = _per_thread(
                _child(["site", "--out", str(out), "--to", str(dest), "--jobs", "1"]), size
            )
            full, rr = site["full"]["cpu_s"], site["re-render"]["cpu_s"]
            site["full_to_rerender"] = round(full / rr, 2) if rr else None
            inc = site["one_percent"]["cpu_s"] - site["noop"]["cpu_s"]
            site["one_percent_net_cpu_ms_per_changed_thread"] = round(1000 * inc / changed, 2)
            site["search_index_mb"] = _search_mb(dest)
            site["browser"] = _browser_load(dest, {"word": "photosynthesis", "chinese": "量子"})
            res.put("site", key, site)
    for part in ("care", "site"):
        if part in parts:
            _ratios(res, part, sorted(sizes))


# -- the offline search data in the browser -----------------------------------------------


def _site_docs(threads: int) -> list[tuple[Any, tuple[tuple[int, str, tuple[str, ...]], ...]]]:
    """The site's search input for the simulator's first ``threads`` threads (each turn's
    query and answer as ``pages.thread_page`` reduces them), from the thread plans."""
    from pplx_archiver.core.thread.timeparse import iso
    from pplx_archiver.sim.account import plan_thread
    from pplx_archiver.sim.build import answer_of
    from pplx_archiver.site import pages
    from pplx_archiver.site.offline_search import turn_terms

    docs = []
    for index in range(threads):
        plan = plan_thread(7, index, threads)
        texts = [
            (t.index + 1, pages.plain_text(t.query + " \n " + answer_of(plan, t)))
            for t in plan.turns
            if not t.stub
        ]
        turns = tuple((n, text, turn_terms(plan.title, text)) for n, text in texts)
        page = f"{pages.THREADS_DIR}/{pages.page_id(plan.uuid)}.html"
        created = iso(plan.created_us)
        meta = pages.ThreadMeta(
            plan.uuid, page, plan.title, created, created, plan.mode, "", "", len(turns),
            False, 0, False,
        )  # fmt: skip
        docs.append((meta, turns))
    return docs


def part_browser(res: Results, counts: list[int], root: Path) -> None:
    """The offline search data of simulated accounts: build CPU, size, what Chromium takes
    to open it and answer each kind of query."""
    from pplx_archiver.site import offline_search

    for threads in counts:
        docs = _site_docs(threads)
        cpu = _cpu()
        files = offline_search.search_files(docs)
        built = _cpu() - cpu
        folder = root / f"browser-{threads}"
        shutil.rmtree(folder, ignore_errors=True)
        (folder / offline_search.SEARCH_DIR).mkdir(parents=True)
        for rel, data in files.items():
            (folder / rel).write_bytes(data)
        (folder / "fold.js").write_bytes(offline_search.fold_script())
        static = ROOT / "pplx_archiver" / "site" / "static" / "site.js"
        shutil.copyfile(static, folder / "site.js")
        res.put(
            "browser",
            f"threads_{threads}",
            {
                "threads": threads,
                "turns": sum(len(t) for _m, t in docs),
                "search_index_mb": _search_mb(folder),
                "files": len(files),
                "largest_file_mb": round(max(len(d) for d in files.values()) / 1e6, 2),
                "build_cpu_s": round(built, 2),
                "build_cpu_ms_per_thread": round(1000 * built / threads, 3),
                "chromium": _browser_load(folder, _queries(docs)),
                "load_average": _load(),
            },
        )
        del docs, files


# -- main ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--parts", default="site,care,search,history")
    parser.add_argument("--sizes", default="20000,100000", help="archive sizes (threads)")
    parser.add_argument("--turns", default="100000,1000000", help="search checkpoints")
    parser.add_argument("--queries", type=int, default=40, help="search queries per kind")
    parser.add_argument("--browser", default="20000,100000", help="threads (search data)")
    parser.add_argument("--history-threads", type=int, default=2000)
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "scale-offline.json")
    parser.add_argument("--tmp", type=Path, help="temp root (default: the system's)")
    args = parser.parse_args()
    import structlog

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # stdout stays JSON
    res = Results(args.results)
    parts = args.parts.split(",")
    root = Path(tempfile.mkdtemp(prefix="bench-scale-offline-", dir=args.tmp))
    sizes = [int(x) for x in args.sizes.split(",")]
    offline = {p for p in parts if p in ("site", "care")}
    runs: dict[str, Callable[[], None]] = {
        "site": lambda: part_site_care(res, sizes, root, offline),
        "care": lambda: None,
        "browser": lambda: part_browser(res, [int(x) for x in args.browser.split(",")], root),
        "search": lambda: part_search(
            res, [int(x) for x in args.turns.split(",")], args.queries, root
        ),
    }
    try:
        for part in dict.fromkeys("site" if p == "care" else p for p in parts):
            runs[part]()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
