"""The insights page: built from the site manifest, for no thread, one, and 20,000."""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import orjson
import pytest

from pplx_archiver.core.archive.writes import UsageAnswer
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.site import insights
from pplx_archiver.site.build import MANIFEST, build_site
from pplx_archiver.site.pages import CSP, ThreadMeta, page_id
from tests.site.builders import THREADS, build, slug_of

BENCH = Path(__file__).resolve().parents[2] / "scripts" / "bench_insights.py"
CHARTS = (
    "calendar",
    "hours",
    "modes",
    "served",
    "chosen",
    "credits",
    "domains",
    "reports",
    "spaces",
)


def _data(blob: bytes) -> dict[str, Any]:
    prefix = b"window.PPLX_INSIGHTS = "
    assert blob.startswith(prefix) and blob.endswith(b";\n")
    data: dict[str, Any] = orjson.loads(blob[len(prefix) : -2])
    return data


def _check(html: str, data: dict[str, Any], pages: set[str] | None = None) -> None:
    """Every chart has its title, text alternative, axis labels and data table; every link
    of a chart names a list that exists, and every list names existing threads."""
    assert CSP in html and "<style" not in html and "style=" not in html
    assert "<script" not in html  # the charts need no script
    for cid in CHARTS:
        fig = re.search(rf'<figure class="chart" id="{cid}">(.*?)</figure>', html, re.S)
        assert fig is not None, cid
        body = fig.group(1)
        assert f'<title id="{cid}-t">' in body and f'<desc id="{cid}-d">' in body, cid
        assert 'class="axis-label"' in body and "<details" in body, cid
    for key in re.findall(r'href="insights-list\.html\?k=([^"]+)"', html):
        name = unquote(key)
        assert name in data["lists"] and data["lists"][name], name
    for numbers in data["lists"].values():
        assert all(0 <= n < len(data["threads"]) for n in numbers)
    if pages is not None:
        assert {t[0] for t in data["threads"]} <= pages


def test_an_empty_archive_has_every_chart_saying_so() -> None:
    """No thread: the page renders, each chart with its axes and a note."""
    html, blob = insights.insights_page([], {}, None)
    text = html.decode()
    _check(text, _data(blob))
    assert text.count("Nothing to show yet.") >= 4 and "Usage was not backfilled" in text


def test_an_empty_archive_builds_its_insights(tmp_path: Path) -> None:
    """`site` on an archive without a thread writes the insights pages too."""
    with Archive(tmp_path) as archive:
        build_site(archive)
    html = (tmp_path / "site" / "insights.html").read_text()
    _check(html, _data((tmp_path / "site" / "insights-data.js").read_bytes()))
    assert "0 threads, 0 turns, no threads" in html


def test_the_site_build_keeps_facts_and_links_charts_to_thread_pages(tmp_path: Path) -> None:
    """A real build: per-turn models and hours come from the raw entries, the credits from the
    usage table; each chart's links lead to lists of built thread pages."""
    build(tmp_path, THREADS[:1])
    with Archive(tmp_path) as archive:
        build_site(archive)
    site = tmp_path / "site"
    one = (site / "insights.html").read_text()
    _check(one, _data((site / "insights-data.js").read_bytes()))
    assert "1 threads, 1 turns" in one and "Usage was not backfilled" in one
    build(tmp_path)
    with Archive(tmp_path) as archive:
        archive.writer.apply(UsageAnswer(slug_of(2), "ok", "2026-07-21T00:00:00Z", 250, ()))
        build_site(archive)
    manifest = orjson.loads((site / MANIFEST).read_bytes())["threads"]
    facts = manifest[slug_of(1)]["facts"]
    assert facts["turns"] == [["2026-07", 8, "turbo", "unknown"]]  # no user_selected_model
    assert facts["domains"] == {"example.com": 2} and facts["report"] == 0
    html = (site / "insights.html").read_text()
    pages = {f"threads/{page_id(slug_of(t['key']))}.html" for t in THREADS}
    data = _data((site / "insights-data.js").read_bytes())
    _check(html, data, pages)
    assert "3 of 4 threads have no usage recorded." in html
    assert data["lists"]["credits|2026-07|deep-research"] == [1]
    assert data["titles"]["served|2026-07|turbo"].startswith("Threads with turns answered by")
    assert (site / "insights-list.html").is_file()
    assert 'href="../insights.html"' in (site / "threads" / pages.pop().split("/")[1]).read_text()


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_twenty_thousand_threads_render_quickly() -> None:
    """The benchmark's synthetic manifest of 20,000 threads (100,000 turns)."""
    spec = importlib.util.spec_from_file_location("bench_insights", BENCH)
    assert spec is not None and spec.loader is not None
    bench_insights = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_insights)
    kept = bench_insights.synth(20_000, 5)
    metas = [ThreadMeta.from_json(v["meta"]) for v in kept.values()]
    facts = {u: v["facts"] for u, v in kept.items()}
    cpu = time.process_time()
    html, blob = insights.insights_page(metas, facts, dict.fromkeys(list(kept)[::2], 3))
    spent = time.process_time() - cpu
    data = _data(blob)
    _check(html.decode(), data)
    assert len(data["threads"]) == 20_000
    assert spent < 5.0, spent  # CPU time: wall time on a busy machine varies
    assert html.count(b'class="cell h') >= 700  # two years of days


@pytest.mark.parametrize("count", [0, 1])
def test_the_calendar_and_bars_need_no_data(count: int) -> None:
    """Degenerate inputs draw without dividing by zero."""
    meta = ThreadMeta(
        "u", "threads/x.html", "t", "2026-01-01T00:00:00Z", "", "search", "", "", 1, False, 0, False
    )
    metas = [meta][:count]
    html, _ = insights.insights_page(metas, {"u": {"turns": [["", -1, "", ""]]}}, {})
    assert html.count(b"<svg") >= len(CHARTS)
