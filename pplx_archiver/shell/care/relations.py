"""``pplx-export relations``: the relation graph of an archive, offline, from its raw files.

For every thread the index marks done, the stored ``raw_entries.json`` / ``raw_blocks.json``
are decoded by the render core (the blocks file is skipped when ``thread.json`` records that
the render used no blocks pages, as ``re-render`` does) and reduced to
:class:`~pplx_archiver.core.relations.relations.ThreadFacts`; the core builds the edges. The shell
hands ``relations/edges.jsonl`` and ``relations/graph.md`` (unchanged bytes are not
rewritten) and the ``relations`` table of the index, replaced in one transaction, to the
archive's writer (``RootFiles``, ``RelationEdges``), so
search, the site and ``status`` can read the edges without re-parsing anything. No network.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson
import structlog

from pplx_archiver.core.archive.writes import RelationEdges, RootFiles
from pplx_archiver.core.relations import relations as graph
from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.model import RawPage
from pplx_archiver.core.thread.rawfile import decode_raw_pages
from pplx_archiver.errors import PayloadError, PplxError, StoreError
from pplx_archiver.shell.archive.fsutil import safe_join
from pplx_archiver.shell.archive.store import (
    RAW_BLOCKS,
    RAW_ENTRIES,
    THREAD_JSON,
    Archive,
)

log = structlog.get_logger()

RELATIONS_DIR = "relations"
EDGES_FILE = "edges.jsonl"
GRAPH_FILE = "graph.md"


@dataclasses.dataclass(slots=True)
class Summary:
    """What one ``relations`` run did."""

    threads: int = 0
    edges: int = 0
    by_kind: dict[str, int] = dataclasses.field(default_factory=dict)
    files_written: int = 0
    failures: list[dict[str, str]] = dataclasses.field(default_factory=list)

    def as_event(self) -> dict[str, Any]:
        """Fields of the ``RELATIONS_BUILT`` event."""
        return {
            "threads": self.threads,
            "edges": self.edges,
            "by_kind": dict(self.by_kind),
            "files_written": self.files_written,
            "failed": len(self.failures),
        }


def _blocks_used(folder: Path) -> bool:
    """False when ``thread.json`` says the stored render used no blocks pages."""
    try:
        record = orjson.loads((folder / THREAD_JSON).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return True
    completeness = record.get("completeness") if isinstance(record, dict) else None
    return not (isinstance(completeness, Mapping) and completeness.get("blocks_pages") == 0)


def load_facts(folder: Path, uuid: str, listing: Mapping[str, Any] | None) -> graph.ThreadFacts:
    """The relation facts of one stored thread, decoded from its raw files."""
    plain = decode_raw_pages((folder / RAW_ENTRIES).read_bytes(), name=RAW_ENTRIES)
    blocks: tuple[RawPage, ...] = ()
    blocks_path = folder / RAW_BLOCKS
    if blocks_path.exists() and _blocks_used(folder):
        blocks = decode_raw_pages(blocks_path.read_bytes(), name=RAW_BLOCKS)
    thread = decode_thread(plain, blocks)
    slug = listing.get("slug") if listing else None
    context = listing.get("context_uuid") if listing else None
    return graph.thread_facts(
        uuid,
        thread,
        slug=slug if isinstance(slug, str) else "",
        context_uuid=context if isinstance(context, str) else "",
    )


def stored_edges(db_path: Path, uuid: str | None = None) -> list[graph.Edge]:
    """Edges stored in the index (those touching ``uuid`` when given); [] before any run."""
    try:
        db = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error as exc:
        raise StoreError(f"{db_path}: cannot open the index: {exc}") from exc
    try:
        exists = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'relations'"
        ).fetchone()
        if not exists:
            return []
        sql = "SELECT src, dst, kind, evidence FROM relations"
        args: tuple[str, ...] = ()
        if uuid is not None:
            sql += " WHERE src = ? OR dst = ?"
            args = (uuid, uuid)
        rows = db.execute(sql + " ORDER BY src, dst, kind", args).fetchall()
    except sqlite3.Error as exc:
        raise StoreError(f"{db_path}: cannot read relations: {exc}") from exc
    finally:
        db.close()
    return [graph.Edge(str(a), str(b), str(c), str(d)) for a, b, c, d in rows]


def build(archive: Archive, progress: Callable[[int, int], None] | None = None) -> Summary:
    """Build the relation graph of ``archive``, write its files and store it in the index
    (``progress(done, total)`` as the threads are read)."""
    summary = Summary()
    facts: list[graph.ThreadFacts] = []  # small: ids, times and links, no texts
    total = archive.index.counts().get("done", 0)
    for n, row in enumerate(archive.iter_threads("done"), 1):  # read by pages
        if progress is not None:
            progress(n, max(total, n))
        if not row.path:
            continue
        summary.threads += 1
        try:
            folder = safe_join(archive.out, *row.path.split("/"))
            facts.append(load_facts(folder, row.uuid, row.listing))
        except FileNotFoundError as exc:
            _failed(summary, row.uuid, row.path, f"missing file: {exc.filename}")
        except PayloadError as exc:
            _failed(summary, row.uuid, row.path, str(exc))
        except (PplxError, OSError) as exc:
            _failed(summary, row.uuid, row.path, f"{type(exc).__name__}: {exc}")
    edges = graph.build_edges(facts)
    summary.edges = len(edges)
    summary.by_kind = graph.counts(edges)
    files = {
        f"{RELATIONS_DIR}/{EDGES_FILE}": graph.edges_jsonl(edges),
        f"{RELATIONS_DIR}/{GRAPH_FILE}": graph.graph_md(edges, facts),
    }
    summary.files_written += archive.writer.apply(RootFiles(files))
    archive.writer.apply(RelationEdges(tuple((e.src, e.dst, e.kind, e.evidence) for e in edges)))
    log.info("RELATIONS_BUILT", **summary.as_event())
    return summary


def _failed(summary: Summary, uuid: str, path: str, error: str) -> None:
    failure = {"thread_uuid": uuid, "path": path, "error": error}
    summary.failures.append(failure)
    log.error("RELATIONS_THREAD_FAILED", **failure)
