"""The static site's pages as values: thread, index and space pages (the search index is
``offline_search``'s, the insights ``insights``').

Pure: decoded threads (:class:`~pplx_archiver.core.thread.render.ThreadParts`) and index rows in,
HTML/JS bytes out; no I/O. Every piece of untrusted text goes through :func:`html.escape` or
:func:`~pplx_archiver.site.markup.render_markdown`. Each page carries a strict
Content-Security-Policy: scripts and styles only from the site's own files, nothing else
loaded, no inline script or style anywhere.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from pplx_archiver.core.thread.render import ThreadParts, TurnParts
from pplx_archiver.core.thread.values import WebResult
from pplx_archiver.site.markup import render_markdown, safe_url

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "font-src 'self'; connect-src 'none'; media-src 'none'; object-src 'none'; "
    "frame-src 'none'; base-uri 'none'; form-action 'none'"
)
THREADS_DIR = "threads"
SPACES_DIR = "spaces"
SEARCH_JS = "search-index.js"
FOLD_JS = "fold.js"
INSIGHTS = "insights.html"
_SPACE = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_MARKUP = re.compile(r"[*_`#>|\\\[\]()!~]+|\$+|https?://\S+")


def e(text: object) -> str:
    """HTML-escaped text (quotes too: safe in attributes)."""
    return html.escape(str(text), quote=True)


def _finish(parts: Iterable[str]) -> bytes:
    """A page's bytes: control characters from API text shown as U+FFFD, never written."""
    return _CONTROL.sub("\ufffd", "\n".join(parts)).encode("utf-8", "replace")


def page_id(uuid: str) -> str:
    """A file-name-safe, stable id for a thread or space (its identity hashed)."""
    return hashlib.sha256(uuid.encode("utf-8", "replace")).hexdigest()[:16]


def plain_text(markdown: str) -> str:
    """Markdown reduced to searchable one-line text (markup characters and URLs dropped)."""
    return _SPACE.sub(" ", _MARKUP.sub(" ", markdown)).strip()


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadMeta:
    """One thread as listed on the index and space pages (also kept in the site manifest)."""

    uuid: str
    page: str
    title: str
    created: str
    updated: str
    mode: str
    space: str
    space_id: str
    turns: int
    interrupted: bool
    variants: int
    degraded: bool

    def as_json(self) -> dict[str, Any]:
        """A JSON object of the fields."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ThreadMeta:
        """The inverse of :meth:`as_json`."""
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True, slots=True)
class LocalFile:
    """A link from a thread page to a file of the archive (relative href, label)."""

    href: str
    label: str


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadPage:
    """A built thread page: its listing row, its HTML and its turns' searchable text."""

    meta: ThreadMeta
    html: bytes
    search: tuple[tuple[int, str], ...]


def href_of(path: str) -> str:
    """A relative path made into an href (each segment percent-encoded)."""
    return "/".join(quote(part) for part in path.split("/"))


def _head(title: str, root: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n"
        f'<link rel="stylesheet" href="{root}site.css">\n'
        "</head>\n"
    )


def _flags(meta: ThreadMeta) -> str:
    out = []
    if meta.interrupted:
        out.append('<span class="flag interrupted">interrupted</span>')
    if meta.variants:
        out.append(f'<span class="flag variants">variants {meta.variants}</span>')
    if meta.degraded:
        out.append('<span class="flag degraded">degraded</span>')
    return " ".join(out)


def _nav(root: str) -> str:
    return (
        f'<nav><a href="{root}index.html">All threads</a> · '
        f'<a href="{root}{INSIGHTS}">Insights</a></nav>\n'
    )


# The page parts other page modules (insights) share.
head = _head
nav = _nav
finish = _finish


def _sources(results: Sequence[WebResult], prefix: str) -> str:
    items = []
    for number, result in enumerate(results, 1):
        name = result.name or result.url or "?"
        if result.url and safe_url(result.url) and result.url.lower().startswith("http"):
            link = (
                f'<a href="{e(result.url)}" rel="noopener noreferrer nofollow">{e(name)}</a>'
                f' <span class="url">{e(result.url)}</span>'
            )
        else:
            link = e(name) + (f' <span class="url">{e(result.url)}</span>' if result.url else "")
        snippet = f'<div class="snippet">{e(result.snippet)}</div>' if result.snippet else ""
        items.append(f'<li id="{prefix}{number}">{link}{snippet}</li>')
    return '<ol class="sources">\n' + "\n".join(items) + "\n</ol>\n"


def _turn(
    part: TurnParts,
    interruptions: Sequence[Mapping[str, Any]],
    variants: Sequence[Mapping[str, Any]],
) -> str:
    n = part.number
    prefix = f"turn-{n}-src-"
    out = [f'<section class="turn" id="turn-{n}">', f'<h2><a href="#turn-{n}">Turn {n}</a></h2>']
    for rec in interruptions:
        headline = rec.get("headline") or ""
        out.append(
            f'<p class="notice interrupted">⏸ {e(rec.get("kind", ""))} at '
            f"{e(rec.get('location', ''))}"
            + (f": {e(headline)}" if headline else "")
            + (f" <code>{e(rec.get('status', ''))}</code>" if rec.get("status") else "")
            + "</p>"
        )
    for var in variants:
        out.append(
            '<p class="notice variant">⚠ answer variant: sibling '
            f"<code>{e(var.get('sibling_uuid', ''))}</code>, selection "
            f"<code>{e(var.get('selection_status', ''))}</code>, role "
            f"<code>{e(var.get('experiment_role', ''))}</code></p>"
        )
    out.append('<div class="query"><h3>Query</h3>')
    out.append(render_markdown(part.query))
    out.append("</div>")
    if part.work:
        out.append(f'<div class="work"><h3>Work process{e(part.work_note)}</h3>')
        out.extend(render_markdown(block) for block in part.work)
        out.append("</div>")
    if part.subagents:
        out.append('<div class="subagents"><h3>Sub-agent work</h3>')
        out.extend(render_markdown(block) for block in part.subagents)
        out.append("</div>")
    out.append('<div class="answer"><h3>Answer</h3>')
    out.append(render_markdown(part.answer, cite_prefix=prefix, cite_count=len(part.citations)))
    out.append("</div>")
    if part.citations:
        out.append(f'<div class="citations"><h3>Sources ({len(part.citations)})</h3>')
        out.append(_sources(part.citations, prefix))
        out.append("</div>")
    out.append("</section>\n")
    return "\n".join(out)


def thread_meta(parts: ThreadParts, page: str, *, degraded: bool = False) -> ThreadMeta:
    """The listing row of one decoded thread."""
    rec = parts.result.record
    space = rec.get("space") if isinstance(rec.get("space"), Mapping) else None
    space_title = str(space.get("title") or space.get("slug") or "") if space else ""
    space_key = str(space.get("uuid") or space.get("slug") or "") if space else ""
    completeness = rec.get("completeness")
    incomplete = isinstance(completeness, Mapping) and completeness.get("complete") is False
    return ThreadMeta(
        uuid=parts.result.thread_uuid,
        page=page,
        title=parts.result.title,
        created=str(rec.get("created") or ""),
        updated=str(rec.get("last_updated") or ""),
        mode=parts.result.mode,
        space=space_title,
        space_id=page_id(space_key) if space_key else "",
        turns=len(parts.turns),
        interrupted=bool(rec.get("interruptions")),
        variants=len(rec.get("answer_variants") or ()),
        degraded=degraded or incomplete or bool(rec.get("degraded")),
    )


def thread_page(parts: ThreadParts, *, page: str, files: Sequence[LocalFile]) -> ThreadPage:
    """The page of one thread: header, local files, every turn, appendix and report."""
    meta = thread_meta(parts, page)
    rec = parts.result.record
    root = "../"
    interruptions: dict[str, list[Mapping[str, Any]]] = {}
    for item in rec.get("interruptions") or ():
        if isinstance(item, Mapping):
            turn = str(item.get("location", "")).split("/", 1)[0]
            interruptions.setdefault(turn, []).append(item)
    variants: dict[str, list[Mapping[str, Any]]] = {}
    for item in rec.get("answer_variants") or ():
        if isinstance(item, Mapping):
            variants.setdefault(str(item.get("entry_uuid", "")), []).append(item)
    body = [_head(meta.title or "(untitled)", root), '<body class="thread">', _nav(root)]
    body.append(f"<header><h1>{e(meta.title or '(untitled)')}</h1>")
    facts = [
        f'<span class="mode">{e(meta.mode)}</span>',
        f"created {e(meta.created)}",
        f"updated {e(meta.updated)}",
        f"{meta.turns} turns",
    ]
    if meta.space:
        facts.append(f'space <a href="{root}{SPACES_DIR}/{meta.space_id}.html">{e(meta.space)}</a>')
    body.append('<p class="facts">' + " · ".join(facts) + " " + _flags(meta) + "</p>")
    url = str(rec.get("url") or "")
    if url.startswith("https://"):
        body.append(
            f'<p class="origin"><a href="{e(url)}" rel="noopener noreferrer nofollow">'
            f"{e(url)}</a></p>"
        )
    if files:
        links = " · ".join(f'<a href="{e(f.href)}">{e(f.label)}</a>' for f in files)
        body.append(f'<p class="files">Files: {links}</p>')
    body.append("</header>\n<main>")
    search: list[tuple[int, str]] = []
    for part in parts.turns:
        where = f"turn_{part.number:04d}"
        body.append(_turn(part, interruptions.get(where, ()), variants.get(part.entry_uuid, ())))
        search.append((part.number, plain_text(part.query + " \n " + part.answer)))
    if parts.appendix:
        body.append('<section class="appendix" id="background"><h2>Background tasks</h2>')
        body.extend(render_markdown(block) for block in parts.appendix)
        body.append("</section>")
    if parts.report:
        body.append('<section class="report" id="report"><details><summary>Report</summary>')
        body.append(render_markdown(parts.report))
        body.append("</details></section>")
    body.append("</main>")
    body.append(f'<script src="{root}{FOLD_JS}"></script>')
    body.append(f'<script src="{root}site.js"></script>\n</body>\n</html>\n')
    return ThreadPage(meta=meta, html=_finish(body), search=tuple(search))


def error_page(meta: ThreadMeta, error: str) -> bytes:
    """A thread page for a thread that could not be decoded: what failed, nothing more."""
    root = "../"
    body = [
        _head(meta.title or meta.uuid, root),
        '<body class="thread">',
        _nav(root),
        f"<header><h1>{e(meta.title or meta.uuid)}</h1></header>",
        f'<main><p class="notice degraded">This thread could not be decoded: {e(error)}</p></main>',
        f'<script src="{root}site.js"></script>\n</body>\n</html>\n',
    ]
    return _finish(body)


def _rows(metas: Iterable[ThreadMeta], root: str) -> str:
    rows = []
    for m in metas:
        flags = " ".join(
            f
            for f, on in (
                ("interrupted", m.interrupted),
                ("variants", m.variants),
                ("degraded", m.degraded),
            )
            if on
        )
        space = (
            f'<a href="{root}{SPACES_DIR}/{m.space_id}.html">{e(m.space)}</a>' if m.space else ""
        )
        rows.append(
            f'<tr data-mode="{e(m.mode)}" data-flags="{e(flags)}">'
            f'<td><a href="{root}{m.page}">{e(m.title or "(untitled)")}</a></td>'
            f'<td data-sort="{e(m.created)}">{e(m.created[:10])}</td>'
            f"<td>{e(m.mode)}</td><td>{space}</td>"
            f'<td data-sort="{m.turns:06d}">{m.turns}</td><td>{_flags(m)}</td></tr>'
        )
    return "\n".join(rows)


def _table(metas: Sequence[ThreadMeta], root: str) -> str:
    return (
        '<table id="threads" class="threads">\n<thead><tr>'
        '<th data-col="0">Title</th><th data-col="1">Date</th><th data-col="2">Mode</th>'
        '<th data-col="3">Space</th><th data-col="4">Turns</th><th data-col="5">Flags</th>'
        f"</tr></thead>\n<tbody>\n{_rows(metas, root)}\n</tbody>\n</table>\n"
    )


def _controls(modes: Sequence[str], search: bool) -> str:
    options = "".join(f'<option value="{e(m)}">{e(m)}</option>' for m in modes)
    parts = ['<div class="controls">']
    if search:
        parts.append(
            '<label>Search <input id="search" type="search" placeholder="words or 中文" '
            'autocomplete="off"></label>'
        )
    parts.append(
        '<label>Filter <input id="filter" type="search" placeholder="title or space"></label>'
        f'<label>Mode <select id="mode"><option value="">all</option>{options}</select></label>'
        '<label>Flag <select id="flag"><option value="">any</option>'
        '<option value="interrupted">interrupted</option><option value="variants">variants</option>'
        '<option value="degraded">degraded</option></select></label>'
        '<span id="count"></span></div>\n'
    )
    if search:
        parts.append('<ol id="results" class="results" hidden></ol>\n')
    return "".join(parts)


def _sorted(metas: Iterable[ThreadMeta]) -> list[ThreadMeta]:
    return sorted(metas, key=lambda m: (m.created, m.uuid), reverse=True)


def index_page(metas: Sequence[ThreadMeta], spaces: Mapping[str, str]) -> bytes:
    """The page listing every thread, with search, filters and sortable columns."""
    ordered = _sorted(metas)
    modes = sorted({m.mode for m in ordered})
    body = [
        _head("Perplexity archive", ""),
        '<body class="index">',
        _nav(""),
        "<header><h1>Perplexity archive</h1>",
    ]
    body.append(f"<p>{len(ordered)} threads</p>")
    if spaces:
        links = " · ".join(
            f'<a href="{SPACES_DIR}/{sid}.html">{e(title)}</a>'
            for sid, title in sorted(spaces.items(), key=lambda kv: kv[1])
        )
        body.append(f'<p class="spaces">Spaces: {links}</p>')
    body.append("</header>\n<main>")
    body.append(_controls(modes, search=True))
    body.append(_table(ordered, ""))
    body.append("</main>")
    body.append(f'<script src="{FOLD_JS}"></script>\n<script src="{SEARCH_JS}"></script>')
    body.append('<script src="site.js"></script>')
    body.append("</body>\n</html>\n")
    return _finish(body)


def space_page(title: str, metas: Sequence[ThreadMeta]) -> bytes:
    """The page listing the threads of one space."""
    root = "../"
    ordered = _sorted(metas)
    modes = sorted({m.mode for m in ordered})
    body = [_head(f"Space: {title}", root), '<body class="space">', _nav(root)]
    body.append(f"<header><h1>Space: {e(title)}</h1><p>{len(ordered)} threads</p></header>")
    body.append("<main>" + _controls(modes, search=False) + _table(ordered, root) + "</main>")
    body.append(f'<script src="{root}{FOLD_JS}"></script>')
    body.append(f'<script src="{root}site.js"></script>\n</body>\n</html>\n')
    return _finish(body)
