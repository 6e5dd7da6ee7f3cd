"""The archive audit behind ``pplx-export verify``: every check, each problem with its path.

Checks, for every thread the index marks done: the folder, the raw files and the derived files
exist; ``thread.json`` parses and agrees with the index (uuid, mode, folder); the completeness
record holds (complete, page counts match the raw files, each page asked for the cursor the
previous page gave: no cursor gap); a re-render from the raw files reproduces the stored bytes
(the re-render's plan, computed and never applied, must write nothing); the raw files have
the size and sha256 the index recorded when the writer wrote them; the
``assets/manifest.json`` files exist with their sha256. Archive-wide: no temp file of an
interrupted atomic write remains, the answer variant registry parses, holds no (thread,
entry) line repeated with identical content and every record the index holds, and the index
and its search tables are sound (:mod:`~pplx_archiver.shell.care.verify_index`). Each
problem names the command that repairs it.
Read-only: verify never writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.archive.writes import DerivedUpdate
from pplx_archiver.core.thread import mode_table, output_files
from pplx_archiver.core.thread.layout import safe_component
from pplx_archiver.core.thread.rawfile import decode_raw_pages
from pplx_archiver.errors import PayloadError, StoreError
from pplx_archiver.shell.archive.fsutil import TEMP_PATTERN, safe_join
from pplx_archiver.shell.archive.history import HISTORY_DIR
from pplx_archiver.shell.archive.history import problems as history_problems
from pplx_archiver.shell.archive.index import ThreadRow
from pplx_archiver.shell.archive.registry import read_lines, record_key, strip_meta
from pplx_archiver.shell.archive.store import (
    ASSETS_DIR,
    RAW_BLOCKS,
    RAW_ENTRIES,
    THREAD_JSON,
    Archive,
)
from pplx_archiver.shell.care.changes import incomplete_reason, incomplete_records
from pplx_archiver.shell.care.rerender import (
    Renderer,
    manifest_entries,
    render_all,
    task_of,
)
from pplx_archiver.shell.care.verify_index import REPAIRS, index_problems, registry_problems

DERIVED_REQUIRED = output_files.REQUIRED  # every thread has them


@dataclasses.dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the archive: a stable kind, the path, and what is wrong."""

    kind: str
    path: str
    message: str

    def line(self) -> str:
        """``<path>: <kind>: <message> (repair: <command>)`` for a person."""
        repair = REPAIRS.get(self.kind)
        tail = f" (repair: {repair})" if repair and "`pplx-export" not in self.message else ""
        return f"{self.path}: {self.kind}: {self.message}{tail}"


def _params(request: Mapping[str, Any]) -> dict[str, str]:
    params = request.get("params")
    out: dict[str, str] = {}
    if isinstance(params, list):
        for pair in params:
            if isinstance(pair, list | tuple) and len(pair) == 2:
                out[str(pair[0])] = str(pair[1])
    return out


def _check_thread(archive: Archive, row: ThreadRow) -> Iterator[Problem]:
    """Files, thread.json against the index, completeness, asset hashes of one done thread."""
    rel = row.path or ""
    if not rel:
        yield Problem("missing_path", row.uuid, "thread marked done without a folder")
        return
    try:
        folder = archive.folder(rel)
    except StoreError as exc:
        yield Problem("bad_path", rel, str(exc))
        return
    if not folder.is_dir():
        yield Problem("missing_folder", rel, "thread marked done but its folder is missing")
        return
    if not (folder / RAW_ENTRIES).is_file():
        yield Problem("missing_raw", f"{rel}/{RAW_ENTRIES}", "raw file missing")
    yield from _check_raw_records(rel, folder, row)
    for message in history_problems(folder):
        yield Problem("history_damaged", f"{rel}/{HISTORY_DIR}", message)
    for name in DERIVED_REQUIRED:
        if not (folder / name).is_file():
            yield Problem("missing_derived", f"{rel}/{name}", "derived file missing")
    try:
        record = orjson.loads((folder / THREAD_JSON).read_bytes())
    except FileNotFoundError:
        return
    except orjson.JSONDecodeError as exc:
        yield Problem("bad_thread_json", f"{rel}/{THREAD_JSON}", f"does not parse: {exc}")
        return
    if not isinstance(record, dict):
        yield Problem("bad_thread_json", f"{rel}/{THREAD_JSON}", "not a JSON object")
        return
    yield from _check_record(rel, folder, row, record)


def _check_raw_records(rel: str, folder: Path, row: ThreadRow) -> Iterator[Problem]:
    """Raw files against the size and sha256 the index recorded at their last write."""
    recorded = row.files if isinstance(row.files, Mapping) else {}
    for name in (RAW_ENTRIES, RAW_BLOCKS):
        expected = recorded.get(name)
        if not isinstance(expected, list | tuple) or len(expected) != 2:
            continue
        try:
            data = (folder / name).read_bytes()
        except OSError:
            continue  # a missing raw file is reported as such
        if len(data) != expected[0] or hashlib.sha256(data).hexdigest() != expected[1]:
            yield Problem("raw_changed", f"{rel}/{name}", "not the bytes the archive wrote")


def _check_record(
    rel: str, folder: Path, row: ThreadRow, record: Mapping[str, Any]
) -> Iterator[Problem]:
    where = f"{rel}/{THREAD_JSON}"
    if record.get("uuid") != row.uuid:
        yield Problem("index_mismatch", where, f"uuid {record.get('uuid')!r} != index {row.uuid!r}")
    mode = record.get("mode")
    if row.mode is not None and mode != row.mode:
        yield Problem("index_mismatch", where, f"mode {mode!r} != index {row.mode!r}")
    parts = rel.split("/")
    if len(parts) != 3 or parts[1] != safe_component(str(mode), fallback=mode_table.VIEWS.default):
        yield Problem("index_mismatch", where, f"folder {rel!r} is not under mode {mode!r}")
    counts = record.get("counts")
    turns = counts.get("turns") if isinstance(counts, Mapping) else None
    if isinstance(turns, int):
        for i in range(1, turns + 1):
            name = output_files.TURN.at(i)
            if not (folder / name).is_file():
                yield Problem("missing_derived", f"{rel}/{name}", "turn file missing")
    yield from _check_completeness(rel, folder, record.get("completeness"))
    yield from _check_assets(rel, folder)


def _check_completeness(rel: str, folder: Path, comp: Any) -> Iterator[Problem]:
    where = f"{rel}/{THREAD_JSON}"
    if not isinstance(comp, Mapping):
        yield Problem("incomplete", where, "no completeness record")
        return
    if comp.get("complete") is not True:
        yield Problem("incomplete", where, "completeness record says not complete")
    for name, key in ((RAW_ENTRIES, "plain_pages"), (RAW_BLOCKS, "blocks_pages")):
        expected = comp.get(key)
        path = folder / name
        if name == RAW_BLOCKS and expected == 0:
            continue  # a blocks file kept from an earlier harvest, unused by this render
        if not path.is_file():
            if name == RAW_BLOCKS and expected:
                yield Problem("missing_raw", f"{rel}/{name}", f"{expected} blocks pages recorded")
            continue
        try:
            pages = decode_raw_pages(path.read_bytes(), name=name)
        except PayloadError as exc:
            yield Problem("bad_raw", f"{rel}/{name}", str(exc))
            continue
        if isinstance(expected, int) and expected != len(pages):
            yield Problem(
                "incomplete", f"{rel}/{name}", f"{len(pages)} pages stored, {expected} recorded"
            )
        if name == RAW_ENTRIES:
            chain = comp.get("cursor_chain")
            if isinstance(chain, list):
                yield from _check_cursor_chain(f"{rel}/{name}", pages, chain)


def _check_cursor_chain(where: str, pages: Any, chain: list[Any]) -> Iterator[Problem]:
    """Page i+1 must have asked for the cursor page i returned."""
    for i in range(1, len(pages)):
        asked = _params(pages[i].request).get("cursor")
        given = chain[i - 1] if i - 1 < len(chain) else None
        if asked != given:
            yield Problem(
                "cursor_gap", where, f"page {i} asked cursor {asked!r}, page {i - 1} gave {given!r}"
            )


def _check_assets(rel: str, folder: Path) -> Iterator[Problem]:
    path = folder / ASSETS_DIR / "manifest.json"
    if not path.exists():
        return
    where = f"{rel}/{ASSETS_DIR}/manifest.json"
    try:
        manifest = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        yield Problem("bad_manifest", where, f"does not parse: {exc}")
        return
    for entry in manifest_entries(manifest):
        stored = entry.get("path")
        if not isinstance(stored, str) or not stored:
            continue
        parts = stored.split("/")
        if parts[0] != ASSETS_DIR:
            parts = [ASSETS_DIR, *parts]
        try:
            file = safe_join(folder, *parts)
        except StoreError as exc:
            yield Problem("bad_manifest", where, str(exc))
            continue
        shown = f"{rel}/{'/'.join(parts)}"
        if not file.is_file():
            yield Problem("missing_asset", shown, "listed in the manifest but missing")
            continue
        want = entry.get("sha256")
        if isinstance(want, str) and hashlib.sha256(file.read_bytes()).hexdigest() != want:
            yield Problem("asset_hash", shown, "sha256 does not match the manifest")


def _check_temp_files(out: Path, rel: str | None = None) -> Iterator[Problem]:
    """Leftover temp files of interrupted writes, in the archive or one thread folder."""
    root = out if rel is None else out / rel
    if not root.is_dir():
        return
    for path in sorted(root.rglob(".*.tmp-*")):
        if TEMP_PATTERN.match(path.name):
            yield Problem("temp_file", str(path.relative_to(out)), "leftover temp file")


def _check_registry(archive: Archive) -> Iterator[Problem]:
    where = str(archive.registry.path.relative_to(archive.out))
    bad: list[tuple[int, str]] = []
    lines, torn = read_lines(archive.registry.path, bad)
    for number, detail in bad:
        yield Problem(
            "bad_registry",
            f"{where}:{number}",
            f"{detail} (`pplx-export reindex` rewrites the registry without it)",
        )
    if torn is not None:
        yield Problem("bad_registry", where, "torn last line")
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for number, line in enumerate(lines, start=1):
        try:
            key = record_key(line)
        except StoreError as exc:
            yield Problem("bad_registry", f"{where}:{number}", str(exc))
            continue
        record = strip_meta(line)
        if seen.get(key) == record:
            yield Problem(
                "duplicate_variant",
                f"{where}:{number}",
                f"thread {key[0]} entry {key[1]} repeated with identical content "
                "(`pplx-export reindex` rewrites the registry without it)",
            )
        seen[key] = record


def plan_problems(plan: DerivedUpdate) -> Iterator[Problem]:
    """A re-render plan compared with the disk: a sound thread's plan writes nothing."""
    for rel in sorted(plan.changed):
        where = f"{plan.rel_path}/{rel}"
        yield Problem(
            "rerender_mismatch", where, "re-rendering the raw files gives different bytes"
        )
    for rel in plan.stale:
        where = f"{plan.rel_path}/{rel}"
        yield Problem("stale_derived", where, "a re-render does not produce it")


def degraded_summary(archive: Archive) -> tuple[int, int]:
    """(degraded turns, threads with any) over the done threads, from the index."""
    rows = archive.index.select(
        "SELECT COALESCE(SUM(degraded_turns), 0), COUNT(*) FROM threads "
        "WHERE status = 'done' AND degraded_turns > 0"
    )
    return int(rows[0][0]), int(rows[0][1])


CHUNK = 4000  # threads checked (and re-rendered in one pool) at a time: bounded memory


def verify(
    archive: Archive,
    *,
    lang: str | None = None,
    jobs: int = 1,
    renderer: Renderer | None = None,
    progress: Callable[[int, int], None] | None = None,
    rows: Sequence[ThreadRow] | None = None,
) -> list[Problem]:
    """Every problem found in the archive (empty when it is sound).

    Threads with missing or unreadable files are not re-rendered (their problems are
    already reported); the others are re-rendered in ``jobs`` processes and compared, a chunk
    of threads at a time. ``progress(done, total)`` counts both checks of every thread.
    ``rows``: only these threads (``verify --sample``); the temp-file check then looks in
    their folders only, the archive-wide checks of the registry and the index still run.
    """
    tick = progress or (lambda _done, _total: None)
    problems: list[Problem] = []
    total = len(rows) if rows is not None else archive.index.counts().get("done", 0)
    source = iter(rows) if rows is not None else archive.iter_threads("done")
    done = 0
    while chunk := list(islice(source, CHUNK)):
        problems.extend(_check_chunk(archive, chunk, lang, jobs, renderer))
        done += len(chunk)
        tick(2 * done, 2 * total)
    if rows is None:
        problems.extend(_check_temp_files(archive.out))
    else:
        for row in rows:
            problems.extend(_check_temp_files(archive.out, row.path))
    problems.extend(_check_registry(archive))
    problems.extend(Problem(*found) for found in registry_problems(archive))
    problems.extend(Problem(*found) for found in index_problems(archive))
    for item in incomplete_records(archive):
        problems.append(Problem("incomplete", item["path"] or "", incomplete_reason(item)))
    return problems


def _check_chunk(
    archive: Archive,
    rows: Sequence[ThreadRow],
    lang: str | None,
    jobs: int,
    renderer: Renderer | None,
) -> Iterator[Problem]:
    """The file checks of these threads, then the re-render of the sound ones."""
    tasks = []
    for row in rows:
        found = list(_check_thread(archive, row))
        yield from found
        if not found and row.path:
            tasks.append(task_of(row, lang=lang, include_thread_json=True))
    for rendered in render_all(archive.out, tasks, jobs, renderer):
        if rendered.error is not None:
            yield Problem("rerender_failed", rendered.rel_path, rendered.error)
            continue
        yield from plan_problems(rendered.plan())
