"""The site's ``insights.html``: the archive at a glance, from the site's own manifest.

Pure: the listing rows (:class:`~pplx_archiver.site.pages.ThreadMeta`), each thread's
*facts* (computed by :func:`thread_facts` when its page is built and kept in the site
manifest, so an unchanged thread's raw files are never read again) and the credits the
``usage`` table holds in; three files out:

``insights.html``       the charts (inline SVG, see :mod:`pplx_archiver.site.svg`);
``insights-list.html``  the threads behind a bar, cell or row (``?k=<key>``), listed by
                        ``site.js`` from
``insights-data.js``    ``window.PPLX_INSIGHTS``: the threads and the lists of every key.

Times are UTC. A turn's models are the entry's ``display_model`` (served) and
``user_selected_model`` (chosen), "unknown" where the entry has none: never guessed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import orjson

from pplx_archiver.core.thread.render import ThreadParts
from pplx_archiver.core.thread.timeparse import iso
from pplx_archiver.core.thread.values import Thread
from pplx_archiver.site import insights_charts as charts
from pplx_archiver.site.insights_charts import LIST_PAGE, UNKNOWN, Facts, Lists
from pplx_archiver.site.pages import INSIGHTS, ThreadMeta, finish, head, nav

DATA_JS = "insights-data.js"
_US_PER_HOUR = 3_600_000_000


def _domain(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def thread_facts(thread: Thread, parts: ThreadParts) -> dict[str, Any]:
    """What the insights need of one thread: per turn ``[month, hour, served, chosen]``
    (month ``YYYY-MM`` and hour of the turn's creation, UTC; "" and -1 when unknown),
    citations per source domain, and the report's length in characters (0: none)."""
    entries = {entry.key: entry for entry in thread.entries}
    turns: list[list[Any]] = []
    domains: Counter[str] = Counter()
    for part in parts.turns:
        entry = entries.get(part.entry_uuid)
        us = entry.created_us if entry is not None else None
        month = iso(us)[:7] if us is not None else ""
        hour = (us // _US_PER_HOUR) % 24 if us is not None else -1
        served = (entry.display_model if entry is not None else "") or UNKNOWN
        chosen = (entry.user_model if entry is not None else "") or UNKNOWN
        turns.append([month, hour, served, chosen])
        for source in part.citations:
            domain = _domain(source.url) if source.url else ""
            if domain:
                domains[domain] += 1
    return {"turns": turns, "domains": dict(domains), "report": len(parts.report or "")}


def insights_page(
    metas: Sequence[ThreadMeta], facts: Facts, cents: Mapping[str, int] | None
) -> tuple[bytes, bytes]:
    """``insights.html`` and ``insights-data.js`` (the lists behind the charts)."""
    ordered = sorted(metas, key=lambda m: (m.created, m.uuid))
    lists = Lists(ordered)
    turns = sum(m.turns for m in ordered)
    span = f"{ordered[0].created[:10]} to {ordered[-1].created[:10]}" if ordered else "no threads"
    body = [head("Insights · Perplexity archive", ""), '<body class="insights">', nav("")]
    body.append("<header><h1>Insights</h1>")
    body.append(
        f"<p>{len(ordered)} threads, {turns} turns, {span}. Times are UTC; every bar, cell "
        "and row leads to its threads.</p></header>\n<main>"
    )
    body.append(charts.activity(ordered, facts, lists))
    body.append(charts.by_month(ordered, facts, lists))
    body.append(charts.credits(ordered, cents, lists))
    body.append(charts.domains(ordered, facts, lists))
    body.append(charts.reports(ordered, facts, lists))
    body.append(charts.spaces(ordered))
    body.append("</main>\n</body>\n</html>\n")
    named, titles = lists.export()
    data = {
        "threads": [[m.page, m.title, m.created[:10], m.mode] for m in ordered],
        "lists": named,
        "titles": titles,
    }
    blob = orjson.dumps(data)
    blob = blob.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return finish(body), b"window.PPLX_INSIGHTS = " + blob + b";\n"


def list_page() -> bytes:
    """``insights-list.html``: the threads of one key (``?k=``), listed by ``site.js``."""
    body = [head("Threads · Insights", ""), '<body class="insights-list">', nav("")]
    body.append('<header><h1 id="list-title">Threads</h1><p id="list-count"></p></header>')
    body.append('<main><ol id="insight-list" class="insight-list"></ol>')
    body.append(
        "<noscript><p>This list is drawn by site.js from insights-data.js.</p></noscript></main>"
    )
    body.append(f'<script src="{DATA_JS}"></script>\n<script src="site.js"></script>')
    body.append("</body>\n</html>\n")
    return finish(body)


__all__ = [
    "DATA_JS",
    "INSIGHTS",
    "LIST_PAGE",
    "UNKNOWN",
    "insights_page",
    "list_page",
    "thread_facts",
]
