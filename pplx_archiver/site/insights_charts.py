"""The charts of ``insights.html``, each from the listing rows and the threads' facts.

Pure. Every bar, cell or row links to the list of the threads behind it (:class:`Lists`),
or to the space's own page.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from pplx_archiver.core.thread import mode_table
from pplx_archiver.site import svg
from pplx_archiver.site.pages import SPACES_DIR, ThreadMeta

LIST_PAGE = "insights-list.html"
UNKNOWN = "unknown"
TOP_MODELS = 7
TOP_ROWS = 20
Facts = Mapping[str, Mapping[str, Any]]


Key = tuple[str, ...]
# The heading of a list page, by the kind of its key (the key's other parts filled in).
_TITLES = {
    "day": "Threads created on {0}",
    "hour": "Threads with a turn at {0}h (UTC)",
    "mode": "{1} threads created in {0}",
    "served": "Threads with turns answered by {1} in {0}",
    "chosen": "Threads with turns where {1} was chosen, in {0}",
    "credits": "{1} threads created in {0} with credits recorded",
    "domain": "Threads citing {0}",
    "reports": "Deep-research reports of {0}",
}


class Lists:
    """The thread lists behind the charts: key → the numbers of its threads."""

    def __init__(self, metas: Sequence[ThreadMeta]) -> None:
        self.number = {m.uuid: n for n, m in enumerate(metas)}
        self.lists: dict[Key, set[int]] = defaultdict(set)

    def add(self, key: Key, uuid: str) -> None:
        """Put a thread on the list of ``key`` (its kind, then its values)."""
        self.lists[key].add(self.number[uuid])

    @staticmethod
    def name(key: Key) -> str:
        """The key as the list page reads it (``k=``): its parts joined by ``|``."""
        return "|".join(key)

    @classmethod
    def href(cls, key: Key) -> str:
        """The list page of ``key``."""
        return f"{LIST_PAGE}?k={quote(cls.name(key), safe='')}"

    def export(self) -> tuple[dict[str, list[int]], dict[str, str]]:
        """The lists and their headings, by key name, for ``insights-data.js``."""
        lists: dict[str, list[int]] = {}
        titles: dict[str, str] = {}
        for key in sorted(self.lists):
            name = self.name(key)
            lists[name] = sorted(self.lists[key])
            titles[name] = _TITLES.get(key[0], "{0}").format(*key[1:], "", "")
        return lists, titles


def _months(values: Sequence[str]) -> list[str]:
    """Every month from the first to the last of ``values`` (``YYYY-MM``), in order."""
    present = sorted(v for v in values if len(v) == 7)
    if not present:
        return []
    year, month = int(present[0][:4]), int(present[0][5:])
    out: list[str] = []
    while True:
        out.append(f"{year:04d}-{month:02d}")
        if out[-1] >= present[-1]:
            return out
        month += 1
        if month > 12:
            year, month = year + 1, 1


def _series_chart(
    chart: svg.Chart,
    counts: Mapping[tuple[str, str], float],
    lists: Lists,
    kind: str,
    *,
    note: str = "",
    order: Sequence[str] = (),
) -> str:
    """A stacked bar chart by month of ``counts[(month, series)]``, with its table; a series
    named in ``order`` keeps its place (and colour) there, the others follow by total."""
    months = _months([m for m, _ in counts])
    totals: dict[str, float] = defaultdict(float)
    for (_, name), value in counts.items():
        totals[name] += value
    rest = sorted((n for n in totals if n not in order), key=lambda n: (-totals[n], n))
    places = [*order, *rest]
    series = [n for n in places if n in totals]
    colours = {n: f"s{places.index(n) % svg.SERIES}" for n in series}
    bars: dict[str, list[svg.Segment]] = defaultdict(list)
    rows = []
    for month in months:
        for name in series:
            value = counts.get((month, name), 0)
            if value:
                href = lists.href((kind, month, name))
                bars[month].append(svg.Segment(name, value, href))
                rows.append([(month, ""), (name, ""), (svg.number(value), href)])
    drawing = svg.stacked_bars(chart, months, bars, series, colours)
    head = [chart.x_label, "series", chart.y_label]
    note = note or ("" if counts else "Nothing to show yet.")
    return svg.figure(chart, drawing, head, rows, note)


def by_month(metas: Sequence[ThreadMeta], facts: Facts, lists: Lists) -> str:
    """Modes, models served and models chosen per month."""
    modes: Counter[tuple[str, str]] = Counter()
    served: Counter[tuple[str, str]] = Counter()
    chosen: Counter[tuple[str, str]] = Counter()
    for meta in metas:
        month = meta.created[:7]
        if len(month) == 7:
            modes[(month, meta.mode)] += 1
            lists.add(("mode", month, meta.mode), meta.uuid)
        for t_month, _hour, srv, chs in facts.get(meta.uuid, {}).get("turns", ()):
            month_of = t_month or month
            if len(month_of) != 7:
                continue
            srv, chs = srv or UNKNOWN, chs or UNKNOWN
            served[(month_of, srv)] += 1
            chosen[(month_of, chs)] += 1
            lists.add(("served", month_of, srv), meta.uuid)
            lists.add(("chosen", month_of, chs), meta.uuid)
    _fold_rare(served, lists, "served")
    _fold_rare(chosen, lists, "chosen")
    both: Counter[str] = Counter()  # one colour per model in both charts
    for (_, name), n in (*served.items(), *chosen.items()):
        both[name] += n
    models = [n for n, _ in both.most_common() if n not in ("other", UNKNOWN)]
    models += ["other", UNKNOWN]
    out = [
        _series_chart(
            svg.Chart("modes", "Modes over time", _DESC["modes"], "month", "threads"),
            modes,
            lists,
            "mode",
            order=mode_table.VIEWS.names,
        ),
        _series_chart(
            svg.Chart("served", "Models served", _DESC["served"], "month", "turns"),
            served,
            lists,
            "served",
            order=models,
        ),
        _series_chart(
            svg.Chart("chosen", "Models chosen", _DESC["chosen"], "month", "turns"),
            chosen,
            lists,
            "chosen",
            order=models,
        ),
    ]
    return "\n".join(out)


def _fold_rare(counts: Counter[tuple[str, str]], lists: Lists, kind: str) -> None:
    """Keep the :data:`TOP_MODELS` most frequent models (and "unknown"); the rest is "other"."""
    totals: Counter[str] = Counter()
    for (_, name), n in counts.items():
        totals[name] += n
    keep = {name for name, _ in totals.most_common(TOP_MODELS)} | {UNKNOWN}
    for (month, name), n in list(counts.items()):
        if name in keep:
            continue
        del counts[(month, name)]
        counts[(month, "other")] += n
        moved = lists.lists.pop((kind, month, name), set())
        lists.lists[(kind, month, "other")] |= moved


_DESC = {
    "calendar": "Threads created per day over the archive's whole span (UTC); darker is more.",
    "hours": "Turns asked per hour of the day (UTC), over all threads.",
    "modes": "Threads created per month, stacked by mode.",
    "served": "Turns per month by the model that answered (display_model); unknown where the "
    "entry does not say.",
    "chosen": "Turns per month by the model the user chose (user_selected_model); unknown "
    "where the entry does not say.",
    "credits": "Credits used (usage_cents / 100) per month of the thread's creation, stacked "
    "by mode, from the usage backfilled into the index.",
    "domains": f"The {TOP_ROWS} source domains cited most often, by citations.",
    "reports": "Deep-research reports per month, with their length in the data table.",
    "spaces": f"The {TOP_ROWS} most active spaces, by threads.",
}


def activity(metas: Sequence[ThreadMeta], facts: Facts, lists: Lists) -> str:
    """The calendar of threads per day and the bars of turns per hour of day."""
    per_day: Counter[str] = Counter()
    for meta in metas:
        day = meta.created[:10]
        if len(day) == 10 and day[4] == "-":
            per_day[day] += 1
            lists.add(("day", day), meta.uuid)
    days = {d: (n, lists.href(("day", d))) for d, n in per_day.items()}
    chart = svg.Chart("calendar", "Activity", _DESC["calendar"], "day of the year", "threads")
    rows = [[(d, ""), (str(n), lists.href(("day", d)))] for d, n in sorted(per_day.items())]
    note = "" if per_day else "Nothing to show yet."
    out = [svg.figure(chart, svg.calendar(chart, days), ["day", "threads"], rows, note)]
    per_hour: Counter[int] = Counter()
    for meta in metas:
        for _month, hour, _s, _c in facts.get(meta.uuid, {}).get("turns", ()):
            if isinstance(hour, int) and 0 <= hour < 24:
                per_hour[hour] += 1
                lists.add(("hour", f"{hour:02d}"), meta.uuid)
    hours = [f"{h:02d}" for h in range(24)]
    bars = {
        f"{h:02d}": [svg.Segment("turns", n, lists.href(("hour", f"{h:02d}")))]
        for h, n in per_hour.items()
    }
    chart = svg.Chart("hours", "Turns by hour of day", _DESC["hours"], "hour (UTC)", "turns")
    rows = [
        [(h, ""), (str(per_hour[int(h)]), lists.href(("hour", h)) if per_hour[int(h)] else "")]
        for h in hours
    ]
    drawing = svg.stacked_bars(chart, hours, bars, ["turns"])
    note = "" if per_hour else "Nothing to show yet."
    out.append(svg.figure(chart, drawing, ["hour", "turns"], rows, note))
    return "\n".join(out)


def credits(metas: Sequence[ThreadMeta], cents: Mapping[str, int] | None, lists: Lists) -> str:
    """Credits per month (of the thread's creation) and mode, where usage was backfilled
    (``usage_cents / 100``, as ``status`` shows them)."""
    counts: dict[tuple[str, str], float] = defaultdict(float)
    for meta in metas:
        value = (cents or {}).get(meta.uuid)
        month = meta.created[:7]
        if value is None or len(month) != 7:
            continue
        counts[(month, meta.mode)] += value / 100
        lists.add(("credits", month, meta.mode), meta.uuid)
    chart = svg.Chart("credits", "Credits used", _DESC["credits"], "month", "credits")
    if cents is None:
        note = "Usage was not backfilled: run `pplx-export usage-backfill`, then build again."
    elif not counts:
        note = "The backfilled usage holds no credits for these threads."
    else:
        missing = sum(1 for m in metas if m.uuid not in cents)
        note = f"{missing} of {len(metas)} threads have no usage recorded." if missing else ""
    return _series_chart(chart, counts, lists, "credits", note=note, order=mode_table.VIEWS.names)


def domains(metas: Sequence[ThreadMeta], facts: Facts, lists: Lists) -> str:
    """The most cited source domains: citations and threads citing."""
    cited: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    for meta in metas:
        for domain, n in facts.get(meta.uuid, {}).get("domains", {}).items():
            cited[domain] += int(n)
            threads[domain] += 1
    top = cited.most_common(TOP_ROWS)
    for meta in metas:
        held = facts.get(meta.uuid, {}).get("domains", {})
        for domain, _n in top:
            if domain in held:
                lists.add(("domain", domain), meta.uuid)
    chart = svg.Chart("domains", "Top source domains", _DESC["domains"], "citations", "domain")
    bars = [(d, float(n), lists.href(("domain", d))) for d, n in top]
    rows = [[(d, ""), (str(n), ""), (str(threads[d]), lists.href(("domain", d)))] for d, n in top]
    note = "" if top else "No citations yet."
    head = ["domain", "citations", "threads citing"]
    return svg.figure(chart, svg.hbars(chart, bars), head, rows, note)


def reports(metas: Sequence[ThreadMeta], facts: Facts, lists: Lists) -> str:
    """Deep-research reports per month, with their lengths in the table."""
    lengths: dict[str, list[int]] = defaultdict(list)
    for meta in metas:
        size = int(facts.get(meta.uuid, {}).get("report", 0) or 0)
        month = meta.created[:7]
        if size and len(month) == 7:
            lengths[month].append(size)
            lists.add(("reports", month), meta.uuid)
    months = _months(list(lengths))
    bars = {
        m: [svg.Segment("reports", len(v), lists.href(("reports", m)))] for m, v in lengths.items()
    }
    chart = svg.Chart("reports", "Deep-research reports", _DESC["reports"], "month", "reports")
    rows = [
        [
            (m, ""),
            (str(len(lengths[m])), lists.href(("reports", m))),
            (f"{statistics.median(lengths[m]):,.0f}", ""),
            (f"{sum(lengths[m]):,}", ""),
        ]
        for m in months
        if m in lengths
    ]
    head = ["month", "reports", "median length (characters)", "total length (characters)"]
    note = "" if lengths else "No deep-research report yet."
    return svg.figure(chart, svg.stacked_bars(chart, months, bars, ["reports"]), head, rows, note)


def spaces(metas: Sequence[ThreadMeta]) -> str:
    """Spaces by activity (threads, turns); each links to the space's page."""
    threads: Counter[str] = Counter()
    turns: Counter[str] = Counter()
    names: dict[str, str] = {}
    for meta in metas:
        if meta.space_id:
            threads[meta.space_id] += 1
            turns[meta.space_id] += meta.turns
            names.setdefault(meta.space_id, meta.space or meta.space_id)
    top = threads.most_common(TOP_ROWS)
    chart = svg.Chart("spaces", "Spaces by activity", _DESC["spaces"], "threads", "space")
    bars = [(names[s], float(n), f"{SPACES_DIR}/{s}.html") for s, n in top]
    rows = [
        [(names[s], f"{SPACES_DIR}/{s}.html"), (str(n), ""), (str(turns[s]), "")] for s, n in top
    ]
    note = "" if top else "No thread belongs to a space."
    return svg.figure(chart, svg.hbars(chart, bars), ["space", "threads", "turns"], rows, note)
