"""Charts as inline SVG, made when the site is built (no script draws them in the browser).

Pure: numbers and labels in, HTML text out. Every chart is a ``<figure>`` with a heading, an
SVG holding ``<title>``/``<desc>`` (its text alternative) and axis labels, and its data as a
table behind ``<details>``. Colours come from CSS classes (``s0``…``s9`` for series,
``h1``…``h4`` for heat levels) that ``site.css`` sets for light and dark themes: the pages'
Content-Security-Policy allows no inline style. Each bar, cell or row is a link.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import math
from collections.abc import Mapping, Sequence

SERIES = 10  # colour classes s0..s9
_W, _H = 720, 260  # a bar chart's drawing size
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 12, 12, 58
_CELL, _GAP = 11, 2  # calendar
_YEAR_H = 7 * (_CELL + _GAP) + 22


def e(text: object) -> str:
    """HTML-escaped text (quotes too)."""
    return html.escape(str(text), quote=True)


@dataclasses.dataclass(frozen=True, slots=True)
class Segment:
    """One value of one series in one category, and the link to what it counts."""

    series: str
    value: float
    href: str


@dataclasses.dataclass(frozen=True, slots=True)
class Chart:
    """What every chart has: its id, title, text alternative and axis labels."""

    cid: str
    title: str
    desc: str
    x_label: str
    y_label: str


def _svg_open(chart: Chart, width: int, height: int) -> str:
    return (
        f'<svg class="chart-svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-labelledby="{chart.cid}-t {chart.cid}-d" '
        f'xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{chart.cid}-t">{e(chart.title)}</title>'
        f'<desc id="{chart.cid}-d">{e(chart.desc)}</desc>'
    )


def number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() or value >= 100 else f"{value:,.2f}"


def _axes(chart: Chart, top: float, width: int = _W, height: int = _H) -> list[str]:
    """Axis lines, three y ticks (0, half, top) and both axis labels."""
    x0, y0 = _LEFT, height - _BOTTOM
    plot_h = y0 - _TOP
    out = [f'<g class="axis"><line x1="{x0}" y1="{_TOP}" x2="{x0}" y2="{y0}"/>']
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{width - _RIGHT}" y2="{y0}"/>')
    for frac in (0.0, 0.5, 1.0):
        y = y0 - frac * plot_h
        out.append(
            f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end">{number(top * frac)}</text>'
        )
    out.append(
        f'<text class="axis-label" x="{(x0 + width - _RIGHT) / 2:.0f}" y="{height - 6}" '
        f'text-anchor="middle">{e(chart.x_label)}</text>'
    )
    out.append(
        f'<text class="axis-label" transform="translate(14 {(_TOP + y0) / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{e(chart.y_label)}</text></g>'
    )
    return out


def _nice(top: float) -> float:
    if top <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(top))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= top:
            return float(step * power)
    return float(10 * power)


def stacked_bars(
    chart: Chart,
    categories: Sequence[str],
    bars: Mapping[str, Sequence[Segment]],
    series: Sequence[str],
    colours: Mapping[str, str] | None = None,
) -> str:
    """A vertical bar per category, its segments stacked in the order of ``series``;
    ``colours`` gives a series its class (``s0``…), by default its place in ``series``."""
    top = _nice(max((sum(s.value for s in bars.get(c, ())) for c in categories), default=0))
    out = [_svg_open(chart, _W, _H), *_axes(chart, top)]
    y0 = _H - _BOTTOM
    plot_w, plot_h = _W - _LEFT - _RIGHT, y0 - _TOP
    step = plot_w / max(1, len(categories))
    every = max(1, math.ceil(len(categories) / 16))
    colour = dict(colours or {name: f"s{n % SERIES}" for n, name in enumerate(series)})
    for n, cat in enumerate(categories):
        x = _LEFT + n * step + step * 0.1
        y = float(y0)
        for seg in bars.get(cat, ()):
            if seg.value <= 0:
                continue
            h = seg.value / top * plot_h
            y -= h
            tip = f"{cat} · {seg.series}: {number(seg.value)}"
            out.append(
                f'<a href="{e(seg.href)}"><rect class="bar {colour.get(seg.series, "s0")}" '
                f'x="{x:.1f}" y="{y:.1f}" width="{step * 0.8:.1f}" height="{h:.1f}">'
                f"<title>{e(tip)}</title></rect></a>"
            )
        if n % every == 0:
            out.append(
                f'<text class="tick" x="{x + step * 0.4:.1f}" y="{y0 + 14}" '
                f'text-anchor="middle">{e(cat)}</text>'
            )
    out.append("</svg>")
    if len(series) > 1:
        out.append(_legend(series, colour))
    return "".join(out)


def _legend(series: Sequence[str], colour: Mapping[str, str]) -> str:
    items = "".join(
        f'<li><svg width="10" height="10" aria-hidden="true"><rect class="{colour[s]}" '
        f'width="10" height="10"/></svg> {e(s)}</li>'
        for s in series
    )
    return f'<ul class="legend">{items}</ul>'


def hbars(chart: Chart, rows: Sequence[tuple[str, float, str]]) -> str:
    """A horizontal bar per row (label, value, href), longest first as given."""
    row_h = 20
    height = _TOP + row_h * max(1, len(rows)) + 40
    label_w = 200
    plot_w = _W - label_w - _RIGHT - 50
    top = max((r[1] for r in rows), default=0) or 1
    out = [_svg_open(chart, _W, height), '<g class="axis">']
    y_end = _TOP + row_h * len(rows)
    out.append(f'<line x1="{label_w}" y1="{_TOP}" x2="{label_w}" y2="{y_end}"/>')
    out.append(
        f'<text class="axis-label" x="{label_w + plot_w / 2:.0f}" y="{height - 8}" '
        f'text-anchor="middle">{e(chart.x_label)}</text>'
        f'<text class="axis-label" x="4" y="{height - 8}">{e(chart.y_label)}</text></g>'
    )
    for n, (label, value, href) in enumerate(rows):
        y = _TOP + n * row_h
        w = max(1.0, value / top * plot_w)
        short = label if len(label) <= 30 else label[:29] + "…"
        out.append(
            f'<a href="{e(href)}"><text class="tick" x="{label_w - 6}" y="{y + 14}" '
            f'text-anchor="end">{e(short)}</text><rect class="bar s0" x="{label_w}" '
            f'y="{y + 3}" width="{w:.1f}" height="{row_h - 6}"><title>{e(label)}: '
            f"{number(value)}</title></rect></a>"
            f'<text class="tick" x="{label_w + w + 4:.1f}" y="{y + 14}">{number(value)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def calendar(chart: Chart, days: Mapping[str, tuple[int, str]]) -> str:
    """A heatmap of counts per day (``YYYY-MM-DD`` → (count, href)), a block per year,
    weeks as columns and Monday…Sunday as rows."""
    dates = sorted(dt.date.fromisoformat(d) for d in days)
    years = list(range(dates[0].year, dates[-1].year + 1)) if dates else []
    height = _TOP + _YEAR_H * max(1, len(years)) + 24
    width = 40 + 54 * (_CELL + _GAP) + _RIGHT
    top = max((c for c, _ in days.values()), default=0)
    out = [_svg_open(chart, width, height), '<g class="axis">']
    for row, name in ((0, "Mon"), (2, "Wed"), (4, "Fri"), (6, "Sun")):
        out.append(f'<text class="tick" x="36" y="{_TOP + 18 + row * (_CELL + _GAP) + 9}" ')
        out.append(f'text-anchor="end">{name}</text>')
    out.append(
        f'<text class="axis-label" x="{width / 2:.0f}" y="{height - 6}" text-anchor="middle">'
        f"{e(chart.x_label)}</text></g>"
    )
    for block, year in enumerate(years):
        y_base = _TOP + block * _YEAR_H
        out.append(f'<text class="tick" x="40" y="{y_base + 12}">{year}</text>')
        first = dt.date(year, 1, 1)
        day = max(first, dates[0])
        last = min(dt.date(year, 12, 31), dates[-1])
        while day <= last:
            col = (day - first).days + first.weekday()
            x = 40 + (col // 7) * (_CELL + _GAP)
            y = y_base + 18 + day.weekday() * (_CELL + _GAP)
            count, href = days.get(day.isoformat(), (0, ""))
            level = 0 if not count else max(1, math.ceil(4 * count / top))
            rect = (
                f'<rect class="cell h{level}" x="{x}" y="{y}" width="{_CELL}" height="{_CELL}">'
                f"<title>{day.isoformat()}: {count}</title></rect>"
            )
            out.append(f'<a href="{e(href)}">{rect}</a>' if count else rect)
            day += dt.timedelta(days=1)
    out.append("</svg>")
    return "".join(out)


def figure(
    chart: Chart,
    svg: str,
    head: Sequence[str],
    rows: Sequence[Sequence[tuple[str, str]]],
    note: str = "",
) -> str:
    """A chart's figure: heading, note, the SVG, and its data as a table in a fold.

    ``rows`` hold (text, href) cells; a cell with an href is a link."""
    cells = []
    for row in rows:
        tds = "".join(
            f'<td><a href="{e(href)}">{e(text)}</a></td>' if href else f"<td>{e(text)}</td>"
            for text, href in row
        )
        cells.append(f"<tr>{tds}</tr>")
    ths = "".join(f'<th scope="col">{e(h)}</th>' for h in head)
    table = (
        f'<details class="chart-data"><summary>Data: {e(chart.title)}</summary>'
        f'<table class="data"><thead><tr>{ths}</tr></thead><tbody>'
        + "".join(cells)
        + "</tbody></table></details>"
    )
    note_html = f'<p class="chart-note">{e(note)}</p>' if note else ""
    return (
        f'<figure class="chart" id="{chart.cid}"><h2>{e(chart.title)}</h2>{note_html}'
        f'<div class="chart-box">{svg}</div>{table}</figure>'
    )
