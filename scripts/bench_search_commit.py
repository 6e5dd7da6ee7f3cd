"""The search index's cost per committed thread: grams, and marking done one by one or a batch.

``python scripts/bench_search_commit.py --turns 3000`` takes the corpus of
``scripts/bench_search.py`` (simulated threads) and prints one JSON object, CPU time
(``process_time``) per row or per thread, all measured in this one run:

- ``grams_ms_per_row``: ``gram_tokens`` as it is (the ``search_grams`` tokens: the
  space-centred pieces; SQLite cuts the 1-, 2- and 3-character ones for ``search_tri``),
  memo cold and warm; a plain reference (every gram a string, then its token, no memo);
  the short column's text (``short_text``, what SQLite cuts the 1- and 2-character pieces
  from);
- ``mark_done_ms_per_thread``: an archive index marking every thread done with its search
  rows (both gram tables), one transaction per thread (``Index.mark_done``) against one per batch of
  ``--batch`` threads (``Index.mark_done_many``, what a group commit's flush does), the
  batch with each thread's rows in a savepoint of its own and without (the hook's fast
  form, what the flush tries first);
- the ratios new / old of both.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_search import corpus  # noqa: E402

from pplx_archiver.shell.archive import search_grams, search_index  # noqa: E402
from pplx_archiver.shell.archive.index import Index  # noqa: E402


def reference_tokens(values: Iterable[str]) -> str:
    """The plain extraction (same tokens): every gram a string, then its token."""
    grams: set[str] = set()
    for value in values:
        text = value.lower()
        grams |= {text[a - 3 : a + 4] for a in range(3, len(text) - 3) if text[a].isspace()}
    return " ".join(sorted("w" + "g".join(format(ord(c), "x") for c in g) for g in grams))


def cpu_ms(fn: Callable[[], object], count: int) -> float:
    """CPU milliseconds of ``fn()`` per item (``count`` items)."""
    began = time.process_time()
    fn()
    return round(1000 * (time.process_time() - began) / count, 4)


def guarded(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """The hook without its fast form: every thread's rows in their own savepoint."""
    return lambda db: hook(db)


def mark_done(threads: list[Any], batch: int, *, wrap: Callable[[Any], Any] = lambda h: h) -> float:
    """CPU ms per thread marking every thread done with its search rows (batch 1 = one by one)."""
    with tempfile.TemporaryDirectory() as tmp:
        index = Index(Path(tmp) / "archive.sqlite")

        def run() -> None:
            for first in range(0, len(threads), batch):
                items = [
                    (
                        meta.uuid,
                        "me",
                        {"path": meta.path},
                        wrap(search_index.thread_hook(meta, prose)),
                    )
                    for meta, prose in threads[first : first + batch]
                ]
                if batch == 1:
                    uuid, account, fields, hook = items[0]
                    index.mark_done(uuid, account, fields, hook=hook)
                else:
                    index.mark_done_many(items)

        try:
            return cpu_ms(run, len(threads))
        finally:
            index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=3000, help="turns in the corpus")
    parser.add_argument("--batch", type=int, default=64, help="threads per group commit")
    args = parser.parse_args()
    import structlog

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    threads = list(corpus(args.turns))
    rows = [[search_index.clean(v).lower() for v in r.values()] for _, p in threads for r in p.rows]
    search_grams._TOKENS.clear()
    search_grams._WIDE_TOKENS.clear()
    cold = cpu_ms(lambda: [search_grams.gram_tokens(r) for r in rows], len(rows))
    warm = cpu_ms(lambda: [search_grams.gram_tokens(r) for r in rows], len(rows))
    plain = cpu_ms(lambda: [reference_tokens(r) for r in rows], len(rows))
    short = cpu_ms(lambda: [search_grams.short_text(r) for r in rows], len(rows))
    for values in rows[:200]:
        found = search_grams.gram_tokens(values)
        assert (" ".join(sorted(found.split(" "))) if found else "") == reference_tokens(values)
    one = mark_done(threads, 1)
    each = mark_done(threads, args.batch, wrap=guarded)
    many = mark_done(threads, args.batch)
    out = {
        "benchmark": "search_commit",
        "threads": len(threads),
        "rows": len(rows),
        "grams_ms_per_row": {
            "cold": cold,
            "warm": warm,
            "plain_reference": plain,
            "short_text": short,
        },
        "token_memo_entries": len(search_grams._TOKENS),
        "mark_done_ms_per_thread": {
            "one_by_one": one,
            f"batch_{args.batch}_savepoint_each": each,
            f"batch_{args.batch}": many,
        },
        "mark_done_ratio_batch_to_one": round(many / one, 3),
        "mark_done_ratio_batch_to_savepoint_each": round(many / each, 3),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
