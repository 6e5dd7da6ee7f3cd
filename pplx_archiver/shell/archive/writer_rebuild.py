"""The writer's index rebuild (``pplx-export reindex``): a new database, moved over the old.

:meth:`~pplx_archiver.shell.archive.writer.ArchiveWriter.rebuild_index` applies an
:class:`~pplx_archiver.core.archive.writes.IndexRebuild` with :func:`rebuild_index`; nothing else
calls it. No :class:`~pplx_archiver.shell.archive.store.Archive` is open meanwhile (the old
database may be damaged): the new one is written beside it, the registry file repaired,
then the new database moved over the old one (a damaged one is set aside first).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pplx_archiver.core.archive.writes import IndexRebuild
from pplx_archiver.shell.archive.files import INDEX_DIR
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.registry import Registry
from pplx_archiver.shell.archive.writer_rows import USAGE_COLUMNS, USAGE_SCHEMA

REGISTRY_FILE = "answer_variants_log.jsonl"


def rebuild_index(out: Path, plan: IndexRebuild) -> int:
    """Build the plan's index and move it into place; return the variant records stored."""
    index_dir = Path(out) / INDEX_DIR
    index_dir.mkdir(parents=True, exist_ok=True)
    target = index_dir / "archive.sqlite"
    registry_path = index_dir / REGISTRY_FILE
    if plan.registry_backup is not None:
        registry_path.replace(index_dir / plan.registry_backup)
    building = index_dir / f"archive.sqlite.rebuild-{os.getpid()}"
    for leftover in (building, Path(f"{building}-wal"), Path(f"{building}-shm")):
        leftover.unlink(missing_ok=True)
    index = Index(building)
    try:
        registry = Registry(registry_path, index)
        if plan.registry_lines is not None:
            registry.rewrite(plan.registry_lines)
        for uuid, account, fields in plan.rows:
            index.upsert(uuid, account, **fields)
        records = list(registry.current().values())
        index.put_variants(records, None)
        _carry_over(index, plan.runs, plan.alerts, plan.usage)
    except BaseException:
        index.close()
        raise
    index.close(checkpoint=True)
    if plan.damaged_name is not None:
        target.replace(index_dir / plan.damaged_name)
    for sidecar in (Path(f"{target}-wal"), Path(f"{target}-shm")):
        sidecar.unlink(missing_ok=True)
    building.replace(target)
    for sidecar in (Path(f"{building}-wal"), Path(f"{building}-shm")):
        sidecar.unlink(missing_ok=True)
    return len(records)


def _carry_over(
    index: Index,
    runs: Sequence[tuple[Any, ...]],
    alerts: Sequence[tuple[Any, ...]],
    usage: Sequence[tuple[Any, ...]],
) -> None:
    """The runs, alerts and credit usage of the old index into the new one (facts no
    folder holds)."""
    with index.transaction() as db:
        if usage:
            for statement in USAGE_SCHEMA:  # the usage table, as usage-backfill makes it
                db.execute(statement)
            marks = ", ".join("?" * len(USAGE_COLUMNS))
            names = ", ".join(USAGE_COLUMNS)
            db.executemany(f"INSERT OR REPLACE INTO usage ({names}) VALUES ({marks})", usage)
        db.executemany(
            "INSERT INTO runs (id, command, started_at, finished_at, summary, "
            "exit_code, log_file) VALUES (?, ?, ?, ?, ?, ?, ?)",
            runs,
        )
        db.executemany(
            "INSERT OR IGNORE INTO alerts (id, kind, thread_uuid, fact, run_id, "
            "found_at, fields) VALUES (?, ?, ?, ?, ?, ?, ?)",
            alerts,
        )
