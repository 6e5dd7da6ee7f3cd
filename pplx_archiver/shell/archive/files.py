"""The files of a thread folder: their names, which ones the index records, and their keys.

Shared by the store (reading), the writer (applying plans) and the care commands. Nothing here
writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread import output_files
from pplx_archiver.core.thread.model import ListingRow, SpaceRef
from pplx_archiver.errors import StoreError

RAW_ENTRIES = "raw_entries.json"
RAW_BLOCKS = "raw_blocks.json"
RAW_FILES = (RAW_ENTRIES, RAW_BLOCKS)
THREAD_JSON = output_files.THREAD_JSON.path
ASSETS_DIR = "assets"
INDEX_DIR = "index"
# Top-level derived files a render may produce (core/thread/output_files.py); anything else at the
# top is left alone.
DERIVED_TOP = output_files.TOP_FILES


def dump_record(record: Mapping[str, Any]) -> bytes:
    """``thread.json`` bytes of a record, as the render core serializes it."""
    return orjson.dumps(dict(record), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def listing_to_json(row: ListingRow | None) -> dict[str, Any] | None:
    """A listing row as a JSON-able dict (stored in the index for offline re-render)."""
    if row is None:
        return None
    return dataclasses.asdict(row)


def listing_from_json(data: Mapping[str, Any] | None) -> ListingRow | None:
    """The inverse of :func:`listing_to_json`; unknown keys are ignored."""
    if not data:
        return None
    fields = {f.name for f in dataclasses.fields(ListingRow)}
    values = {k: v for k, v in data.items() if k in fields}
    space = values.get("space")
    if isinstance(space, Mapping):
        values["space"] = SpaceRef(
            uuid=str(space.get("uuid", "")),
            slug=str(space.get("slug", "")),
            title=str(space.get("title", "")),
        )
    if "thread_id" not in values:
        return None
    return ListingRow(**values)


def derived_files_on_disk(folder: Path) -> set[str]:
    """Relative paths of the derived files present in a thread folder."""
    found: set[str] = set()
    if not folder.is_dir():
        return found
    for child in folder.iterdir():
        if child.is_file() and child.name in DERIVED_TOP:
            found.add(child.name)
    for sub in output_files.SUB_DIRS:
        if (folder / sub).is_dir():
            for child in (folder / sub).iterdir():
                if child.is_file() and output_files.is_output(f"{sub}/{child.name}"):
                    found.add(f"{sub}/{child.name}")
    return found


def recorded_file_keys(rel: str) -> bool:
    """True for the files whose size and hash the index records: raw, derived, manifest."""
    return rel in RAW_FILES or output_files.is_output(rel) or rel == f"{ASSETS_DIR}/manifest.json"


def check_file_key(rel: str) -> None:
    """Refuse file keys that are raw files, assets or not plain relative paths."""
    check_relative(rel)
    if rel in RAW_FILES:
        raise StoreError(f"{rel}: raw files are written by the store, not by a render")


def check_relative(rel: str) -> None:
    """Refuse a key that is not a plain relative ``/``-separated path."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise StoreError(f"refusing file name {rel!r}")


def load_record(data: bytes, path: Path) -> dict[str, Any]:
    """A ``thread.json`` object; StoreError naming the file when it is not one."""
    try:
        record = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise StoreError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(record, dict):
        raise StoreError(f"{path}: expected a JSON object")
    return record


def with_remote_deleted(data: bytes, timestamp: str) -> bytes:
    """``thread.json`` bytes with ``remote_deleted`` set unless it already is."""
    record = load_record(data, Path(THREAD_JSON))
    if record.get("remote_deleted"):
        return data
    record["remote_deleted"] = timestamp
    return dump_record(record)


def str_or_none(value: Any) -> str | None:
    """``value`` when it is a string."""
    return value if isinstance(value, str) else None


def stored_assets_problem(folder: Path, *, deep: bool = False) -> str | None:
    """Why an asset file ``assets/manifest.json`` lists as stored is not on disk as listed
    (missing, another size, with ``deep`` another sha256), or None. A thread with one is
    fetched again by the next run that lists it (``sync --full`` lists every thread)."""
    try:
        manifest = orjson.loads((folder / ASSETS_DIR / "manifest.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # no manifest (no assets), or one the raw-file records already judge
    entries = manifest.get("assets") if isinstance(manifest, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        stored = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(stored, str) or not stored.startswith(ASSETS_DIR + "/"):
            continue
        path = folder.joinpath(*stored.split("/"))
        try:
            size = path.stat().st_size
        except OSError:
            return f"{stored} missing"
        if isinstance(entry.get("bytes"), int) and size != entry["bytes"]:
            return f"{stored} has {size} bytes, the manifest says {entry['bytes']}"
        want = entry.get("sha256") if deep else None
        if isinstance(want, str) and hashlib.sha256(path.read_bytes()).hexdigest() != want:
            return f"{stored} changed since it was stored"
    return None
