"""The static site's writer: decode stored threads, build their pages, write what changed.

Reads the archive's index and each thread's raw files, decodes them again through the render
core (the Markdown files are never parsed), and writes ``<archive>/site/`` (or another
folder): ``index.html``, ``spaces/<id>.html``, ``threads/<id>.html``, ``search-index.js``
and its shards in ``search/``, ``fold.js``, ``site.css``, ``site.js``, ``manifest.json`` and
the insights pages.

Incremental: ``manifest.json`` keeps, per thread, a hash of everything its page is built from
(raw files, ``thread.json``, the asset manifest, the index's listing row, the link prefix,
the site format and the package version), the ``stat`` of the hashed files (inode, size,
mtime: when it has not moved the files are not read again) and its listing row;
``data/<id>.json`` keeps its searchable text and each turn's search terms. A rebuild decodes
only threads whose hash moved, removes pages of threads that left the archive, and rewrites
the index pages and search index from the kept rows and terms (files whose bytes did not
change are not touched; when no page was built or removed and those files are whole, they
are not made again).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import structlog

from pplx_archiver import __version__
from pplx_archiver.core.archive.writes import SiteFiles
from pplx_archiver.core.thread import mode_table
from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.render import render_parts
from pplx_archiver.errors import ConfigError, PayloadError, PplxError, StoreError
from pplx_archiver.shell.archive.fsutil import safe_join
from pplx_archiver.shell.archive.store import (
    ASSETS_DIR,
    INDEX_DIR,
    RAW_BLOCKS,
    RAW_ENTRIES,
    THREAD_JSON,
    Archive,
)
from pplx_archiver.shell.care.rerender import (
    build_input,
    context_for,
    manifest_entries,
    mp_context,
)
from pplx_archiver.shell.care.usage import UsageStore
from pplx_archiver.site import insights, offline_search, pages
from pplx_archiver.site.markup import pygments_css

log = structlog.get_logger()

SITE_DIR = "site"
SITE_VERSION = "2"  # 2: the manifest keeps each thread's insight facts
MANIFEST = "manifest.json"
DATA_DIR = "data"
_HASHED = (RAW_ENTRIES, RAW_BLOCKS, THREAD_JSON, f"{ASSETS_DIR}/manifest.json")
_LINKED = (
    (outputs.CONVERSATION.path, outputs.CONVERSATION.path),
    (outputs.REPORT.path, outputs.REPORT.path),
    (outputs.SOURCES_MD.path, outputs.SOURCES_MD.path),
    (THREAD_JSON, THREAD_JSON),
    (RAW_ENTRIES, "raw entries"),
    (RAW_BLOCKS, "raw blocks"),
)


@dataclasses.dataclass(frozen=True, slots=True)
class Job:
    """One thread page to build (picklable: sent to a worker process)."""

    uuid: str
    account: str
    folder: str
    files_href: str
    listing: Mapping[str, Any] | None
    fallback: Mapping[str, Any]
    digest: str


@dataclasses.dataclass(frozen=True, slots=True)
class Built:
    """A worker's answer: the page, its listing row and searchable text, or an error."""

    uuid: str
    digest: str
    html: bytes
    meta: dict[str, Any]
    search: tuple[tuple[int, str], ...]
    error: str | None = None
    facts: dict[str, Any] = dataclasses.field(default_factory=dict)
    terms: tuple[tuple[str, ...], ...] = ()  # offline_search.turn_terms of each search turn


@dataclasses.dataclass(slots=True)
class SiteSummary:
    """Counts of one site build."""

    threads: int = 0
    built: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    files_written: int = 0
    site: str = ""

    def as_event(self) -> dict[str, Any]:
        """Fields of the ``RUN_SUMMARY`` event."""
        return dataclasses.asdict(self)


def default_dest(archive: Archive) -> Path:
    """``<archive>/site``."""
    return archive.out / SITE_DIR


def check_dest(archive: Archive, dest: Path) -> Path:
    """The resolved site folder; the archive root, its index or a thread folder are refused."""
    resolved = dest.resolve()
    out = archive.out.resolve()
    if resolved == out or resolved.is_relative_to(out / INDEX_DIR):
        raise ConfigError(f"--to {dest}: the site cannot be written over the archive itself")
    if (resolved / RAW_ENTRIES).exists() or (resolved / INDEX_DIR / "archive.sqlite").exists():
        raise ConfigError(f"--to {dest}: that folder holds archive data, not a site")
    return resolved


def _stat_key(folder: Path, job_fields: bytes) -> str:
    """What the hashed files' ``stat`` says (inode, size, mtime) plus the job's fields: when
    it equals the one recorded with the thread's hash, the files were not rewritten (the
    writer replaces a file by renaming a new one over it) and the hash is taken as is."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{SITE_VERSION}/{__version__}".encode() + b"\0" + job_fields)
    for name in _HASHED:
        try:
            st = (folder / name).stat()
        except FileNotFoundError:
            h.update(b"\0-")
            continue
        h.update(f"\0{name}\0{st.st_ino}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def _digest(folder: Path, job_fields: bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{SITE_VERSION}/{__version__}".encode() + b"\0" + job_fields)
    for name in _HASHED:
        h.update(b"\0" + name.encode() + b"\0")
        try:
            h.update((folder / name).read_bytes())
        except FileNotFoundError:
            h.update(b"-")
    return h.hexdigest()


def _local_files(folder: Path, href: str) -> list[pages.LocalFile]:
    files = [
        pages.LocalFile(href + pages.href_of(name), label)
        for name, label in _LINKED
        if (folder / name).is_file()
    ]
    manifest = folder / ASSETS_DIR / "manifest.json"
    if manifest.is_file():
        try:
            entries = manifest_entries(orjson.loads(manifest.read_bytes()))
        except orjson.JSONDecodeError:
            entries = []
        for entry in entries:
            rel = entry.get("path")
            if not isinstance(rel, str) or not rel:
                continue
            parts = rel.split("/")
            if parts[0] != ASSETS_DIR:
                parts = [ASSETS_DIR, *parts]
            try:
                path = safe_join(folder, *parts)
            except StoreError:
                continue
            if path.is_file():
                name = str(entry.get("file_name") or path.name)
                version = entry.get("version")
                label = f"{name} (v{version})" if version else name
                files.append(pages.LocalFile(href + pages.href_of("/".join(parts)), label))
    return files


def build_one(job: Job) -> Built:
    """Decode one stored thread and build its page (runs in a worker)."""
    page = f"{pages.THREADS_DIR}/{pages.page_id(job.uuid)}.html"
    folder = Path(job.folder)
    try:
        inp, record = build_input(folder, job.uuid, job.listing)
        thread = decode_thread(inp.plain_pages, inp.blocks_pages)
        parts = render_parts(inp, context_for(record, job.account, None), thread=thread)
        built = pages.thread_page(parts, page=page, files=_local_files(folder, job.files_href))
        facts = insights.thread_facts(thread, parts)
    except FileNotFoundError as exc:
        return _failed(job, page, f"missing file: {exc.filename}")
    except (PplxError, OSError) as exc:
        return _failed(job, page, str(exc) if isinstance(exc, PayloadError) else f"{exc}")
    title = built.meta.title
    terms = tuple(offline_search.turn_terms(title, text) for _n, text in built.search)
    meta = built.meta.as_json()
    return Built(job.uuid, job.digest, built.html, meta, built.search, None, facts, terms)


def _failed(job: Job, page: str, error: str) -> Built:
    fb = job.fallback
    meta = pages.ThreadMeta(
        uuid=job.uuid,
        page=page,
        title=str(fb.get("title") or ""),
        created=str(fb.get("created") or ""),
        updated=str(fb.get("updated") or ""),
        mode=str(fb.get("mode") or mode_table.VIEWS.default),
        space="",
        space_id="",
        turns=0,
        interrupted=False,
        variants=0,
        degraded=True,
    )
    return Built(job.uuid, job.digest, pages.error_page(meta, error), meta.as_json(), (), error)


def _build_chunk(jobs: Sequence[Job]) -> list[Built]:
    return [build_one(j) for j in jobs]


def build_all(jobs: Sequence[Job], workers: int) -> Iterator[Built]:
    """Build every job, in processes when ``workers`` > 1; results in job order."""
    if workers <= 1 or len(jobs) < 8:
        for job in jobs:
            yield build_one(job)
        return
    size = max(1, min(32, len(jobs) // (workers * 4) or 1))
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp_context()) as pool:
        for batch in pool.map(_build_chunk, chunks):
            yield from batch


def _load_manifest(dest: Path) -> dict[str, Any]:
    try:
        data = orjson.loads((dest / MANIFEST).read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("version") != SITE_VERSION:
        return {}
    threads = data.get("threads")
    return threads if isinstance(threads, dict) else {}


def _static(name: str) -> bytes:
    return resources.files("pplx_archiver.site").joinpath("static", name).read_bytes()


def _put(
    archive: Archive, target: Path, files: Mapping[str, bytes], stale: Sequence[str] = ()
) -> tuple[int, int]:
    """Site files written and removed through the archive's writer (files written, removed)."""
    return archive.writer.apply(SiteFiles(str(target), files, tuple(stale)))


def build_site(
    archive: Archive,
    dest: Path | None = None,
    *,
    full: bool = False,
    jobs: int = 1,
    on_thread: Callable[[Built], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SiteSummary:
    """Build or update the site of ``archive`` in ``dest`` (see module docstring);
    ``progress(built, to build)`` after each page."""
    target = check_dest(archive, dest or default_dest(archive))
    summary = SiteSummary(site=str(target))
    threads_dir = target / pages.THREADS_DIR
    old = {} if full else _load_manifest(target)
    kept: dict[str, dict[str, Any]] = {}
    stats: dict[str, str] = {}
    todo: list[Job] = []
    for row in archive.iter_threads("done"):
        if not row.path:
            continue
        summary.threads += 1
        folder = archive.folder(row.path)
        href = Path(os.path.relpath(folder, threads_dir)).as_posix() + "/"
        href = pages.href_of(href)
        listing = dict(row.listing) if row.listing else None
        fields = orjson.dumps([href, row.account, listing], option=orjson.OPT_SORT_KEYS)
        prev = old.get(row.uuid)
        stats[row.uuid] = _stat_key(folder, fields)
        if isinstance(prev, dict) and prev.get("hash") and prev.get("stat") == stats[row.uuid]:
            digest = str(prev["hash"])
        else:
            digest = _digest(folder, fields)
        page_id = pages.page_id(row.uuid)
        if (
            isinstance(prev, dict)
            and prev.get("hash") == digest
            and (threads_dir / f"{page_id}.html").is_file()
            and (target / DATA_DIR / f"{page_id}.json").is_file()
        ):
            kept[row.uuid] = prev | {"stat": stats[row.uuid]}
            summary.unchanged += 1
            continue
        fallback = {"title": row.title, "created": row.created, "mode": row.mode}
        fallback["updated"] = row.last_updated
        todo.append(Job(row.uuid, row.account, str(folder), href, listing, fallback, digest))
    for n, built in enumerate(build_all(todo, jobs), 1):
        if progress is not None:
            progress(n, len(todo))
        page_id = pages.page_id(built.uuid)
        data = orjson.dumps({"search": built.search, "terms": built.terms})
        page = {f"{pages.THREADS_DIR}/{page_id}.html": built.html}
        summary.files_written += _put(
            archive, target, {**page, f"{DATA_DIR}/{page_id}.json": data}
        )[0]
        kept[built.uuid] = {"hash": built.digest, "meta": built.meta, "facts": built.facts}
        kept[built.uuid]["stat"] = stats[built.uuid]
        if built.error is not None:
            summary.failed += 1
            kept[built.uuid]["hash"] = ""  # retried on the next build
            log.error("SITE_THREAD_FAILED", thread_uuid=built.uuid, error=built.error)
        else:
            summary.built += 1
        if on_thread is not None:
            on_thread(built)
    for uuid in sorted(set(old) - set(kept)):
        page_id = pages.page_id(uuid)
        stale = (f"{pages.THREADS_DIR}/{page_id}.html", f"{DATA_DIR}/{page_id}.json")
        summary.removed += bool(_put(archive, target, {}, stale)[1])
    same = not todo and set(old) == set(kept) and _indexes_whole(target, kept)
    summary.files_written += _write_indexes(archive, target, kept, same=same)
    summary.files_written += _write_insights(archive, target, kept, _usage_cents(archive))
    log.info("RUN_SUMMARY", command="site", **summary.as_event())
    return summary


def _indexes_whole(target: Path, kept: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when the index page, every space page of the kept threads, the search head and
    every shard it counts are in the site folder."""
    metas = [entry.get("meta") for entry in kept.values()]
    spaces = {str(m.get("space_id") or "") for m in metas if isinstance(m, dict)} - {""}
    if not (target / "index.html").is_file() or not all(
        (target / pages.SPACES_DIR / f"{sid}.html").is_file() for sid in spaces
    ):
        return False
    try:
        head = offline_search.read_head((target / pages.SEARCH_JS).read_bytes())
    except (OSError, ValueError):
        return False
    folder = target / offline_search.SEARCH_DIR
    return all((folder / name).is_file() for name in offline_search.shard_names(head))


def _write_indexes(
    archive: Archive, target: Path, kept: Mapping[str, Mapping[str, Any]], *, same: bool
) -> int:
    """Index, space pages, search index, static files and the manifest; files written.

    ``same``: no page was built or removed and the search files are whole, so the index,
    space and search files (made from the kept rows and data files only) would come out as
    they are: they are not made again (at 100,000 threads that is reading every data file).
    """
    if same:
        return _write_static(archive, target, kept)
    metas = [pages.ThreadMeta.from_json(kept[uuid]["meta"]) for uuid in sorted(kept)]
    spaces: dict[str, str] = {}
    members: dict[str, list[pages.ThreadMeta]] = {}
    for meta in metas:
        if meta.space_id:
            spaces.setdefault(meta.space_id, meta.space)
            members.setdefault(meta.space_id, []).append(meta)
    space_dir = target / pages.SPACES_DIR
    space_pages = {
        f"{pages.SPACES_DIR}/{sid}.html": pages.space_page(title, members[sid])
        for sid, title in spaces.items()
    }
    stale = [
        f"{pages.SPACES_DIR}/{p.name}"
        for p in (sorted(space_dir.glob("*.html")) if space_dir.is_dir() else [])
        if p.stem not in spaces
    ]
    written = _put(archive, target, space_pages, stale)[0]
    search = offline_search.search_files(_search_docs(target, metas))
    shards = target / offline_search.SEARCH_DIR
    old_shards = sorted(shards.glob("*.js")) if shards.is_dir() else []
    gone = [f"{offline_search.SEARCH_DIR}/{p.name}" for p in old_shards]
    files = {"index.html": pages.index_page(metas, spaces), **search}
    written += _put(archive, target, files, [rel for rel in gone if rel not in search])[0]
    return written + _write_static(archive, target, kept)


def _write_static(archive: Archive, target: Path, kept: Mapping[str, Mapping[str, Any]]) -> int:
    """The static files, then the manifest (last: it records what the folder holds)."""
    css = _static("site.css") + b"\n/* code highlighting (Pygments) */\n" + pygments_css().encode()
    files = {pages.FOLD_JS: offline_search.fold_script(), "site.css": css}
    files["site.js"] = _static("site.js")
    manifest = {"version": SITE_VERSION, "threads": {u: kept[u] for u in sorted(kept)}}
    files[MANIFEST] = orjson.dumps(manifest, option=orjson.OPT_SORT_KEYS)
    return _put(archive, target, files)[0]


def _search_docs(
    target: Path, metas: Sequence[pages.ThreadMeta]
) -> Iterator[tuple[pages.ThreadMeta, tuple[tuple[int, str, Sequence[str]], ...]]]:
    """Each thread's search turns, read from its data file as the search index takes them
    (one file at a time: the texts of the archive are never all held)."""
    for meta in metas:
        try:
            data = orjson.loads(
                (target / DATA_DIR / f"{pages.page_id(meta.uuid)}.json").read_bytes()
            )
            turns = _turns_of(meta.title, data)
        except (FileNotFoundError, orjson.JSONDecodeError, TypeError, ValueError):
            turns = ()
        yield meta, turns


def _turns_of(title: str, data: Mapping[str, Any]) -> tuple[tuple[int, str, Sequence[str]], ...]:
    """A page's search turns with their terms (tokenized again when the data file has none,
    as one written before the terms were kept)."""
    pairs = [(int(n), str(t)) for n, t in data.get("search", ())]
    terms = data.get("terms")
    if not isinstance(terms, list) or len(terms) != len(pairs):
        return tuple((n, t, offline_search.turn_terms(title, t)) for n, t in pairs)
    return tuple((n, t, found) for (n, t), found in zip(pairs, terms, strict=True))


def _usage_cents(archive: Archive) -> dict[str, int] | None:
    """Credits (the API's ``usage_cents``) per thread from the index; None when usage was
    never backfilled."""
    try:
        store = UsageStore(archive.out / INDEX_DIR / "archive.sqlite")
    except StoreError:
        return None
    try:
        return store.cents_by_thread()
    finally:
        store.close()


def _write_insights(
    archive: Archive,
    target: Path,
    kept: Mapping[str, Mapping[str, Any]],
    cents: Mapping[str, int] | None,
) -> int:
    """``insights.html``, its list page and its data; files written."""
    metas = [pages.ThreadMeta.from_json(kept[uuid]["meta"]) for uuid in sorted(kept)]
    facts = {uuid: kept[uuid].get("facts") or {} for uuid in kept}
    page, data = insights.insights_page(metas, facts, cents)
    files = {insights.INSIGHTS: page, insights.LIST_PAGE: insights.list_page()}
    files[insights.DATA_JS] = data
    return _put(archive, target, files)[0]
