"""What ``reindex`` carries over from the index it replaces: runs, known threads, alerts,
the credit usage fetched by ``usage-backfill``, and the answer-variant records the registry
file lost.

These are facts no thread folder holds (the run history, the findings recorded once); a
readable old index gives them to the new one, a damaged or missing one gives nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.registry import Key, record_key
from pplx_archiver.shell.archive.writer_rows import USAGE_COLUMNS


def old_index(path: Path) -> tuple[list[tuple[Any, ...]], set[str], str]:
    """The runs and thread uuids of the previous index, and whether it was readable."""
    if not path.is_file():
        return [], set(), "missing"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            db.execute("PRAGMA quick_check").fetchall()
            columns = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
            extra = ("exit_code", "log_file") if {"exit_code", "log_file"} <= columns else ()
            picked = ", ".join(("id", "command", "started_at", "finished_at", "summary", *extra))
            rows = [
                (*r, *([None, None] if not extra else []))
                for r in db.execute(f"SELECT {picked} FROM runs ORDER BY id")
            ]
            known = {r[0] for r in db.execute("SELECT uuid FROM threads")}
        finally:
            db.close()
    except sqlite3.Error:
        return [], set(), "damaged"
    return list(rows), {str(k) for k in known}, "readable"


def old_alerts(path: Path) -> list[tuple[Any, ...]]:
    """The alerts of a readable previous index (facts no folder holds: kept as they were)."""
    if not path.is_file():
        return []
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return list(
                db.execute(
                    "SELECT id, kind, thread_uuid, fact, run_id, found_at, fields FROM alerts"
                )
            )
        finally:
            db.close()
    except sqlite3.Error:
        return []


def old_variants(path: Path) -> list[dict[str, Any]]:
    """The variant records of a readable previous index (kept when the registry lost them)."""
    if not path.is_file():
        return []
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = [r[0] for r in db.execute("SELECT record FROM variants")]
        finally:
            db.close()
    except sqlite3.Error:
        return []
    out: list[dict[str, Any]] = []
    for raw in rows:
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def old_usage(path: Path) -> list[tuple[Any, ...]]:
    """The credit usage rows of a readable previous index (fetched from the service by
    ``usage-backfill``, which may not answer for them again): kept as they were."""
    if not path.is_file():
        return []
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return list(db.execute(f"SELECT {', '.join(USAGE_COLUMNS)} FROM usage"))
        finally:
            db.close()
    except sqlite3.Error:  # no usage table (never backfilled) or a damaged index
        return []


def lost_variants(variants: list[dict[str, Any]], held: Mapping[Key, Any]) -> list[dict[str, Any]]:
    """The old index's variant records the registry file (``held``: its records by key) no
    longer holds."""
    lost = []
    for record in variants:
        try:
            key = record_key(record)
        except StoreError:
            continue
        if key not in held:
            lost.append(record)
    return lost
