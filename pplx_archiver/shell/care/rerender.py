"""Offline re-render: rebuild every derived file of the archive from its stored raw files.

No network: this module never builds an HTTP client. For each thread marked done it reads
``raw_entries.json`` / ``raw_blocks.json``
(:func:`~pplx_archiver.core.thread.rawfile.decode_raw_pages`), rebuilds the :class:`ThreadInput`
(listing row from the index, else from ``thread.json``; report bytes from ``assets/`` through its
manifest) and a :class:`RenderContext` carrying the stored ``exported_at`` and ``remote_deleted``,
so an unchanged archive renders to the same bytes. Workers (processes, ``--jobs``) render and
compare; they return only the files whose bytes differ, and the parent writes them atomically.
``verify`` uses the same machinery with ``dry_run``.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any

import structlog

from pplx_archiver.core.archive.writes import DerivedUpdate
from pplx_archiver.core.thread.model import (
    RenderContext,
    RenderResult,
    ThreadInput,
)
from pplx_archiver.errors import PayloadError, PplxError
from pplx_archiver.shell.archive.files import THREAD_JSON, derived_files_on_disk
from pplx_archiver.shell.archive.fsutil import safe_join, same_bytes
from pplx_archiver.shell.archive.index import ThreadRow
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.archive.stored import build_input as build_input
from pplx_archiver.shell.archive.stored import context_for as context_for
from pplx_archiver.shell.archive.stored import listing_from_record as listing_from_record
from pplx_archiver.shell.archive.stored import manifest_entries as manifest_entries
from pplx_archiver.shell.archive.stored import stored_downloads as stored_downloads

log = structlog.get_logger()


@dataclasses.dataclass(frozen=True, slots=True)
class Task:
    """One thread to re-render (picklable: sent to a worker process)."""

    uuid: str
    account: str
    rel_path: str
    listing: Mapping[str, Any] | None
    lang: str | None
    include_thread_json: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Rendered:
    """A worker's answer: files whose bytes differ, stale derived files, variants, or an error."""

    uuid: str
    rel_path: str
    changed: Mapping[str, bytes] = dataclasses.field(default_factory=dict)
    unchanged: int = 0
    stale: tuple[str, ...] = ()
    variants: tuple[Mapping[str, Any], ...] = ()
    title: str = ""
    error: str | None = None
    error_path: str | None = None
    degraded_turns: int = 0

    def plan(self) -> DerivedUpdate:
        """The writer's plan of this re-render (``--dry-run``: computed, never applied)."""
        return DerivedUpdate(
            thread_uuid=self.uuid,
            rel_path=self.rel_path,
            changed=self.changed,
            stale=self.stale,
            degraded_turns=self.degraded_turns,
        )


@dataclasses.dataclass(slots=True)
class Summary:
    """Counts of one re-render (or verify) pass."""

    threads: int = 0
    rewritten_files: int = 0
    unchanged_files: int = 0
    removed_files: int = 0
    changed_threads: int = 0
    failures: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    variant_changes: int = 0
    dry_run: bool = False

    def as_event(self) -> dict[str, Any]:
        """Fields of the ``RUN_SUMMARY`` event."""
        data = dataclasses.asdict(self)
        data["failed"] = len(self.failures)
        return data


def degraded_turns(record: Mapping[str, Any]) -> int:
    """``counts.degraded_turns`` of a thread record (0 when absent)."""
    counts = record.get("counts")
    value = counts.get("degraded_turns") if isinstance(counts, Mapping) else None
    return value if isinstance(value, int) else 0


Renderer = Callable[[ThreadInput, RenderContext], RenderResult]


def core_renderer() -> Renderer:
    """The render core's entry point (imported late: workers import it themselves)."""
    from pplx_archiver.core.thread.render import render_thread

    return render_thread


def render_one(out: Path, task: Task, renderer: Renderer | None = None) -> Rendered:
    """Re-render one stored thread and compare with the files on disk (runs in a worker)."""
    render = renderer or core_renderer()
    try:
        folder = safe_join(out, *task.rel_path.split("/"))
        inp, record = build_input(folder, task.uuid, task.listing)
        result = render(inp, context_for(record, task.account, task.lang))
    except FileNotFoundError as exc:
        return Rendered(task.uuid, task.rel_path, error=f"missing file: {exc.filename}")
    except PayloadError as exc:
        return Rendered(task.uuid, task.rel_path, error=str(exc), error_path=exc.path)
    except (PplxError, OSError) as exc:
        return Rendered(task.uuid, task.rel_path, error=f"{type(exc).__name__}: {exc}")
    degraded = degraded_turns(result.record)
    # thread.json is rewritten too when the degraded-turn count changes (a newer decoder)
    with_json = task.include_thread_json or degraded != degraded_turns(record)
    files = {k: v for k, v in result.files.items() if with_json or k != THREAD_JSON}
    changed: dict[str, bytes] = {}
    for rel, data in files.items():
        if not same_bytes(safe_join(folder, *rel.split("/")), data):
            changed[rel] = data
    stale = derived_files_on_disk(folder) - set(result.files)
    return Rendered(
        uuid=task.uuid,
        rel_path=task.rel_path,
        changed=changed,
        unchanged=len(files) - len(changed),
        stale=tuple(sorted(stale)),
        variants=tuple(dict(v) for v in result.variants),
        title=result.title,
        degraded_turns=degraded,
    )


def _render_chunk(args: tuple[Path, Sequence[Task], Renderer | None]) -> list[Rendered]:
    out, tasks, renderer = args
    return [render_one(out, t, renderer) for t in tasks]


def tasks_for(
    archive: Archive, *, lang: str | None, include_thread_json: bool, limit: int | None
) -> list[Task]:
    """One task per thread marked done, in uuid order, at most ``limit``."""
    tasks: list[Task] = []
    for row in archive.iter_threads("done"):
        if limit is not None and len(tasks) >= limit:
            break
        if row.path:
            tasks.append(task_of(row, lang=lang, include_thread_json=include_thread_json))
    return tasks


def task_of(row: ThreadRow, *, lang: str | None, include_thread_json: bool) -> Task:
    """The re-render task of one done thread with a folder."""
    return Task(
        uuid=row.uuid,
        account=row.account,
        rel_path=row.path or "",
        listing=row.listing,
        lang=lang,
        include_thread_json=include_thread_json,
    )


def render_all(
    out: Path, tasks: Sequence[Task], jobs: int, renderer: Renderer | None = None
) -> Iterator[Rendered]:
    """Render every task, in processes when ``jobs`` > 1; results come back in task order.

    ``renderer`` must be a module-level function (it is pickled by name for the workers).
    """
    if jobs <= 1 or len(tasks) < 2:
        render = renderer or core_renderer()
        for task in tasks:
            yield render_one(out, task, render)
        return
    size = max(1, min(32, len(tasks) // (jobs * 4) or 1))
    chunks = [(out, tasks[i : i + size], renderer) for i in range(0, len(tasks), size)]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp_context()) as pool:
        for batch in pool.map(_render_chunk, chunks):
            yield from batch


def mp_context() -> BaseContext:
    """``fork`` where it is safe (POSIX, no other thread running): workers start instantly
    with the core already imported; ``spawn`` otherwise."""
    if "fork" in get_all_start_methods() and threading.active_count() == 1:
        return get_context("fork")
    return get_context("spawn")


def apply(archive: Archive, rendered: Rendered) -> tuple[int, int]:
    """Hand a thread's re-render plan to the archive's writer; return (written, removed)."""
    return archive.writer.apply(rendered.plan())


def rerender(
    archive: Archive,
    *,
    lang: str | None = None,
    thread_json: bool = False,
    dry_run: bool = False,
    limit: int | None = None,
    jobs: int | None = None,
    on_thread: Callable[[Rendered], None] | None = None,
    renderer: Renderer | None = None,
) -> Summary:
    """Re-render the archive (see module docstring); return the counts."""
    summary = Summary(dry_run=dry_run)
    tasks = tasks_for(archive, lang=lang, include_thread_json=thread_json, limit=limit)
    workers = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    run_id = None if dry_run else archive.begin_run("re-render")
    for rendered in render_all(archive.out, tasks, workers, renderer):
        summary.threads += 1
        if on_thread is not None:
            on_thread(rendered)
        if rendered.error is not None:
            failure = {"thread_uuid": rendered.uuid, "path": rendered.rel_path}
            failure["error"] = rendered.error
            if rendered.error_path:
                failure["json_path"] = rendered.error_path
            summary.failures.append(failure)
            log.error("RERENDER_FAILED", **failure)
            continue
        summary.unchanged_files += rendered.unchanged
        if rendered.changed or rendered.stale:
            summary.changed_threads += 1
        if dry_run:
            summary.rewritten_files += len(rendered.changed)
            summary.removed_files += len(rendered.stale)
            continue
        written, removed = apply(archive, rendered)
        summary.rewritten_files += written
        summary.unchanged_files += len(rendered.changed) - written
        summary.removed_files += removed
        if rendered.changed or rendered.stale:
            log.info(
                "THREAD_RERENDERED",
                thread_uuid=rendered.uuid,
                path=rendered.rel_path,
                files=sorted(rendered.changed),
                removed=list(rendered.stale),
            )
        for record, change in archive.register_variants(rendered.variants, "offline", run_id):
            summary.variant_changes += 1
            log.warning("ANSWER_VARIANT_DETECTED", source="offline", change=change, **record)
    if run_id is not None:
        archive.finish_run(run_id, summary.as_event())
    log.info("RUN_SUMMARY", command="re-render", **summary.as_event())
    return summary
