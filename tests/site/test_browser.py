"""The static site in a real browser: Debian's Chromium driven by Playwright, over file://.

One archive and one browser for the module: ``sync --site`` harvests a small simulated
account and builds its site, the site-test threads (English, Chinese, math, hostile) are
added and the site is updated. Every request that is not a ``file://`` one is aborted and
recorded; each test asserts there was none. Screenshots land in ``test-artifacts/site/``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Dialog, Page, Request, Route, sync_playwright
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.core.archive.writes import UsageAnswer
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from pplx_archiver.site import offline_search
from pplx_archiver.site.build import build_site
from pplx_archiver.site.pages import page_id
from tests.site.builders import FOLD_THREAD, THREADS, harvest, slug_of

CHROMIUM = Path(os.environ.get("PPLX_TEST_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "site"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SIM_THREADS = 10


class Site:
    """The built site, the sync run that built it, and what the browser saw."""

    def __init__(self, root: Path, sync_code: int, sync_output: str, threads: int) -> None:
        self.root = root
        self.sync_code = sync_code
        self.sync_output = sync_output
        self.threads = threads
        self.requests: list[str] = []
        self.dialogs: list[str] = []

    def url(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def thread(self, key: int) -> str:
        return self.url(f"threads/{page_id(slug_of(key))}.html")


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    """A small simulated archive plus the site-test threads, with its site built."""
    with (
        tempfile.TemporaryDirectory(prefix="pplx-site-") as tmp,
        pytest.MonkeyPatch.context() as mp,
    ):
        for name in list(os.environ):
            if name.startswith("PPLX_"):
                mp.delenv(name)
        # Shards of a few bytes and docs: every query reads terms and docs from several.
        mp.setattr(offline_search, "_SHARD_BYTES", 64)
        mp.setattr(offline_search, "DOCS_PER_SHARD", 2)
        mp.setenv("PPLX_CONFIG_DIR", str(Path(tmp) / "config"))
        out = Path(tmp) / "archive"
        _register()
        with serve_in_thread(SimConfig(threads=SIM_THREADS, seed=3)) as sim:
            args = ["sync", "--out", str(out), "--base-url", sim.base_url]
            args += ["--session-token", sim.session_token, "--log-format", "json", "--site"]
            args += ["--rate", "1000", "--burst", "200", "--asset-rate", "1000"]
            result = CliRunner().invoke(app, args, catch_exceptions=False)
        with Archive(out) as archive:
            for spec in (*THREADS, FOLD_THREAD):
                harvest(archive, spec)
            for n, row in enumerate(archive.iter_threads("done")):  # credits for the chart
                answer = UsageAnswer(row.uuid, "ok", "2026-07-21T00:00:00Z", 100 + n, ())
                archive.writer.apply(answer)
            build_site(archive)
            threads = sum(1 for _ in archive.iter_threads("done"))
        yield Site(out / "site", result.exit_code, result.output, threads)


@pytest.fixture(scope="module")
def browser(site: Site) -> Iterator[BrowserContext]:
    """Chromium with a fresh profile; non-file requests aborted and recorded."""
    assert CHROMIUM.is_file(), (
        f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)"
    )
    with tempfile.TemporaryDirectory(prefix="pplx-chromium-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=FLAGS
        )

        def route(r: Route) -> None:
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                site.requests.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: BrowserContext, site: Site) -> Iterator[Page]:
    """A fresh tab that records dialogs (and dismisses them)."""
    tab = browser.new_page()

    def on_dialog(dialog: Dialog) -> None:
        site.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    yield tab
    tab.close()


def _search(page: Page, query: str) -> None:
    """Type ``query`` into the search box and wait until its results are shown (the search
    loads its shards first)."""
    page.fill("#search", query)
    page.wait_for_function(
        "q => document.getElementById('results').dataset.done === q", arg=query.strip()
    )


def _clean(site: Site) -> None:
    assert site.requests == []
    assert site.dialogs == []


def test_sync_site_built_the_site(site: Site) -> None:
    """`sync --site` harvested the simulated account and wrote its site in the same run."""
    assert site.sync_code == 0, site.sync_output
    assert re.search(rf"site: {SIM_THREADS} threads, {SIM_THREADS} pages built", site.sync_output)


def test_index_lists_threads_and_filters_by_mode(page: Page, site: Site) -> None:
    """The index lists every thread; choosing a mode shows exactly that mode's rows."""
    page.goto(site.url("index.html"))
    rows = page.locator("#threads tbody tr")
    assert rows.count() == site.threads == SIM_THREADS + len(THREADS) + 1
    assert page.locator("#count").text_content() == f"{site.threads} shown"
    page.select_option("#mode", "study")
    modes: list[Any] = page.eval_on_selector_all(
        "#threads tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.mode)"
    )
    assert modes and set(modes) == {"study"}
    assert page.locator("#count").text_content() == f"{len(modes)} shown"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.select_option("#mode", "")
    page.screenshot(path=str(ARTIFACTS / "index.png"), full_page=False)
    _clean(site)


def test_search_english_and_chinese(page: Page, site: Site) -> None:
    """English words (or their beginnings) and a 2-character Chinese query find their threads;
    a hit deep-links to the turn with the query highlighted."""
    page.goto(site.url("index.html"))
    _search(page, "Photosynthesis")
    hits = page.locator("#results a.hit")
    assert hits.count() == 1
    assert hits.first.text_content() == "Photosynthesis basics — turn 1"
    _search(page, "chlorophyl photosynth")
    assert page.locator("#results a.hit").count() == 1
    _search(page, "纠缠")
    assert page.locator("#results a.hit").count() == 1
    assert page.locator("#results a.hit").first.text_content() == "量子计算入门 — turn 1"
    _search(page, "量")
    assert page.locator("#results a.hit").count() >= 1
    _search(page, "叠加")
    page.locator("#results a.hit").first.click()
    page.wait_for_url(re.compile(r".*\?q=.*#turn-1$"))
    assert page.url.split("?")[0] == site.thread(2)
    marks = page.locator("#turn-1 mark")
    assert marks.count() >= 1 and marks.first.text_content() == "叠加"
    _clean(site)


def test_search_loads_only_the_shards_a_query_needs(page: Page, site: Site) -> None:
    """The index page loads the search's head alone; a query loads its terms' shards and
    its hits' doc shards once; a shard that cannot load is said, not a silent empty list."""
    loaded: list[str] = []

    def on_request(request: Request) -> None:
        if "/search/" in request.url:
            loaded.append(request.url.rsplit("/", 1)[-1])

    page.on("request", on_request)
    page.goto(site.url("index.html"))
    assert loaded == []
    _search(page, "Photosynthesis")
    assert page.locator("#results a.hit").count() == 1
    assert sorted(name[0] for name in loaded) == ["d", "t"], loaded
    _search(page, "")
    _search(page, "photosynthesis")
    assert len(loaded) == 2  # both shards already loaded
    _search(page, "zzzqqq")
    assert page.locator("#results li").all_text_contents() == ["No match."]
    fresh = page.context.new_page()  # nothing loaded yet
    fresh.route("**/search/d*.js", lambda route: route.abort())
    fresh.goto(site.url("index.html"))
    _search(fresh, "纠缠")
    note = fresh.locator("#results li").first.inner_text()
    fresh.close()
    assert note.startswith("Part of the search data is missing"), note
    _clean(site)


FOLD_QUERIES = [
    *(text[:n] for text in ("查詢經濟", "查询经济") for n in range(1, 5)),  # trad., simpl.
    *(text[:n] for text in ("カタカナ", "ｶﾀｶﾅ", "シラトリ", "ｼﾗﾄﾘ") for n in range(1, 5)),
    "AI",
    "ＡＩ",
    "ａｂｃ",
    "ＡＢＣＤ",
]


def test_search_folds_scripts_and_widths(page: Page, site: Site) -> None:
    """Traditional and simplified, full- and half-width queries of 1–4 characters find the
    thread holding the other form; a traditional spelling finds a simplified thread."""
    page.goto(site.url("index.html"))
    target = page_id(slug_of(FOLD_THREAD["key"]))
    for query in FOLD_QUERIES:
        _search(page, query)
        hrefs: list[Any] = page.eval_on_selector_all(
            "#results a.hit", "links => links.map(a => a.getAttribute('href'))"
        )
        assert any(target in h for h in hrefs), query
    for n in range(1, 5):
        _search(page, "量子計算"[:n])  # thread 2 is written in simplified script
        hrefs = page.eval_on_selector_all(
            "#results a.hit", "links => links.map(a => a.getAttribute('href'))"
        )
        assert any(page_id(slug_of(2)) in h for h in hrefs), n
    page.fill("#filter", "VARIANT ＦＯＲＭＳ")  # the title filter folds too
    assert page.locator("#threads tbody tr:not([hidden])").count() == 1
    page.fill("#filter", "")
    _search(page, "查询经济")  # simplified: the thread is written in traditional
    page.locator(f"#results a.hit[href*='{target}']").first.click()
    page.wait_for_url(re.compile(r".*\?q=.*#turn-1$"))
    marks = page.locator("#turn-1 mark")
    assert marks.count() >= 1 and marks.first.text_content() == "查詢經濟"
    page.goto(site.thread(FOLD_THREAD["key"]) + "?q=" + "ｓｈｉｒａ ＡＩ ABCD シラトリ")
    shown = page.eval_on_selector_all("#turn-1 mark", "ms => ms.map(m => m.textContent)")
    assert {"ＡＩ", "abcd", "ｼﾗﾄﾘ"} <= set(shown), shown
    _clean(site)


def test_formula_renders_as_math(page: Page, site: Site) -> None:
    """The quadratic formula is a MathML element laid out as a fraction (numerator above)."""
    page.goto(site.thread(3))
    block = page.locator('math[display="block"]')
    assert block.count() == 1
    box = block.bounding_box()
    assert box is not None and box["width"] > 50 and box["height"] > 20
    over, under = page.locator("math[display=block] mfrac > mrow").all()
    top, bottom = over.bounding_box(), under.bounding_box()
    assert top is not None and bottom is not None
    assert top["y"] + top["height"] <= bottom["y"] + 1
    assert page.locator("pre.highlight span.nb").first.text_content() == "print"
    page.screenshot(path=str(ARTIFACTS / "thread-math.png"), full_page=True)
    _clean(site)


def test_hostile_payloads_stay_inert_and_visible(page: Page, site: Site) -> None:
    """No hostile payload runs, fetches or hides anything: the text is shown as typed."""
    page.goto(site.thread(4))
    page.wait_for_load_state("load")
    scripts = page.evaluate("Array.from(document.scripts).map(s => s.src.split('/').pop())")
    assert scripts == ["fold.js", "site.js"]  # the site's own files, nothing from the payload
    assert page.evaluate("document.querySelectorAll('style, iframe, svg, img, object').length") == 0
    handlers = page.evaluate(
        "Array.from(document.querySelectorAll('*')).filter(e => "
        "Array.from(e.attributes).some(a => a.name.startsWith('on'))).length"
    )
    assert handlers == 0
    hrefs: list[Any] = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
    assert all(h.startswith(("file://", "https://")) for h in hrefs)
    assert page.get_by_text("VISIBLE-AFTER-STYLE").is_visible()
    assert page.get_by_text("<script>alert('script')</script>").is_visible()
    heading = page.locator("h1").text_content()
    assert heading == "<script>alert('title')</script><b>bold title</b>"
    injected = page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
        " document.body.appendChild(s); return window.ran === 1; }"
    )
    assert injected is False  # the CSP refuses inline script, even one added at run time
    page.locator("a.cite").first.click()
    assert page.url.endswith("#turn-1-src-1")
    page.screenshot(path=str(ARTIFACTS / "thread-hostile.png"), full_page=True)
    page.goto(site.url("index.html"))
    page.fill("#filter", "bold title")
    assert page.locator("#threads tbody tr:not([hidden])").count() == 1
    _clean(site)


CHARTS = ("calendar", "hours", "modes", "served", "chosen", "credits", "domains", "reports")


def test_insights_charts_link_to_threads(page: Page, site: Site) -> None:
    """insights.html (linked from every page's header) draws every chart with marks that link
    somewhere; a calendar cell leads to its list, the list to a thread page."""
    page.goto(site.url("index.html"))
    page.click("nav >> text=Insights")
    page.wait_for_url(re.compile(r".*/insights\.html$"))
    for cid in (*CHARTS, "spaces"):
        figure = page.locator(f"figure#{cid}")
        assert figure.count() == 1, cid
        assert figure.locator("svg title").first.text_content(), cid
        assert figure.locator("svg desc").first.text_content(), cid
        marks = figure.locator("svg a rect")
        assert marks.count() >= 1, cid
        box = marks.first.bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0, cid
        assert figure.locator("details table tbody tr").count() >= 1, cid
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "insights.png"), full_page=True)
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(ARTIFACTS / "insights-dark.png"), full_page=True)
    page.emulate_media(color_scheme="light")
    page.locator("figure#calendar svg a").first.click()
    page.wait_for_url(re.compile(r".*/insights-list\.html\?k=day.*"))
    items = page.locator("#insight-list li a")
    assert items.count() >= 1
    assert (page.locator("#list-title").text_content() or "").startswith("Threads created on ")
    items.first.click()
    page.wait_for_url(re.compile(r".*/threads/[0-9a-f]{16}\.html$"))
    assert page.locator("main .turn").count() >= 1
    page.goto(site.url("insights.html"))
    page.locator("figure#served svg a").first.click()
    page.wait_for_url(re.compile(r".*/insights-list\.html\?k=served.*"))
    page.wait_for_selector("#insight-list li a")
    assert page.locator("#insight-list li a").count() >= 1
    _clean(site)
