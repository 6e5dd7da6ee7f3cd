"""The stored assets of a thread folder, read: its manifest and the files it lists.

Nothing here writes; the asset session reuses what these find and the writer moves new
files in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread.asset_files import ASSETS_DIR, HEAD_BYTES, MANIFEST, STORED

Locate = Callable[[str], Path | None]


def read_manifest(folder: Path | None) -> list[dict[str, Any]]:
    """The entries of a thread folder's manifest ([] when absent or unreadable)."""
    if folder is None:
        return []
    try:
        data = orjson.loads((folder / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    entries = data.get("assets") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return []
    return [dict(e) for e in entries if isinstance(e, dict)]


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def head(path: Path, size: int = HEAD_BYTES) -> bytes:
    with path.open("rb") as fh:
        return fh.read(size)


def _confined(folder: Path, rel: str) -> Path | None:
    """``folder/rel`` when ``rel`` is a plain relative path inside ``assets/``."""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] != ASSETS_DIR or any(p in ("", ".", "..") for p in parts):
        return None
    path = folder.joinpath(*parts)
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None
    return path


def reusable(folder: Path | None, entry: Mapping[str, Any]) -> Path | None:
    """The stored file of a manifest entry when it exists with the recorded size and sha256."""
    if folder is None or entry.get("status") != STORED:
        return None
    rel, want, size = entry.get("path"), entry.get("sha256"), entry.get("bytes")
    if not isinstance(rel, str) or not isinstance(want, str) or not isinstance(size, int):
        return None
    path = _confined(folder, rel)
    if path is None or not path.is_file() or path.stat().st_size != size:
        return None
    return path if _sha256_file(path) == want else None


def archive_locator(archive: Any) -> Locate:
    """``thread uuid → stored folder`` from an archive's index (:class:`Archive`)."""

    def locate(thread_uuid: str) -> Path | None:
        row = archive.get(thread_uuid)
        if row is None or not row.path:
            return None
        folder: Path = archive.folder(row.path)
        return folder if folder.is_dir() else None

    return locate
