"""A stored thread read back: its raw files, listing row, record and report assets.

What re-render, verify, assets-backfill and the search rebuild need to render a thread
offline exactly as it was rendered online. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.core.thread.model import (
    AssetFile,
    ListingRow,
    RawPage,
    RenderContext,
    SpaceRef,
    ThreadInput,
)
from pplx_archiver.core.thread.rawfile import decode_raw_pages
from pplx_archiver.errors import PayloadError, StoreError
from pplx_archiver.shell.archive.files import (
    ASSETS_DIR,
    RAW_BLOCKS,
    RAW_ENTRIES,
    THREAD_JSON,
    listing_from_json,
)
from pplx_archiver.shell.archive.fsutil import safe_join


def _load_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise StoreError(f"{path}: missing") from None
    except orjson.JSONDecodeError as exc:
        raise PayloadError(str(path), f"not valid JSON: {exc}") from None


def listing_from_record(uuid: str, record: Mapping[str, Any]) -> ListingRow:
    """A listing row rebuilt from a stored ``thread.json`` (when the index has none)."""
    space = record.get("space")
    space_ref = None
    if isinstance(space, Mapping):
        space_ref = SpaceRef(
            uuid=str(space.get("uuid") or ""),
            slug=str(space.get("slug") or ""),
            title=str(space.get("title") or ""),
        )

    def text(key: str) -> str | None:
        value = record.get(key)
        return value if isinstance(value, str) else None

    signals = record.get("mode_signals")
    listing_mode = signals.get("listing_mode") if isinstance(signals, Mapping) else None
    by_url = isinstance(signals, Mapping) and signals.get("computer_url") is True
    url = (text("url") or "") if by_url else ""
    return ListingRow(
        thread_id=text("slug") or uuid,
        title=text("title") or "",
        slug=text("slug") or "",
        context_uuid=text("context_uuid"),
        mode=listing_mode if isinstance(listing_mode, str) else None,
        updated_at=text("last_updated"),
        space=space_ref,
        author=text("author"),
        url=url,
    )


def stored_downloads(folder: Path) -> tuple[AssetFile, ...]:
    """Report bytes listed in ``assets/manifest.json`` whose stored file exists."""
    manifest_path = folder / ASSETS_DIR / "manifest.json"
    if not manifest_path.exists():
        return ()
    manifest = _load_json(manifest_path)
    entries = manifest_entries(manifest)
    out: list[AssetFile] = []
    for entry in entries:
        rel = entry.get("path")
        if not isinstance(rel, str) or not rel:
            continue
        # Issue 8: only report versions feed report.md, as in the online render (an entry
        # without asset_type, from an older manifest, still counts).
        if entry.get("asset_type", "RESEARCH_REPORT") != "RESEARCH_REPORT":
            continue
        path = _asset_path(folder, rel)
        if not path.is_file():
            continue
        out.append(
            AssetFile(
                asset_uuid=str(entry.get("asset_uuid") or entry.get("uuid") or ""),
                version=int(entry.get("version") or 0),
                file_name=str(entry.get("file_name") or path.name),
                data=path.read_bytes(),
            )
        )
    return tuple(out)


def manifest_entries(manifest: Any) -> list[Mapping[str, Any]]:
    """The entry list of an asset manifest (a list, or under ``assets``/``files``)."""
    if isinstance(manifest, Mapping):
        for key in ("assets", "files", "entries"):
            if isinstance(manifest.get(key), list):
                manifest = manifest[key]
                break
    if not isinstance(manifest, list):
        return []
    return [e for e in manifest if isinstance(e, Mapping)]


def _asset_path(folder: Path, rel: str) -> Path:
    """A manifest path: relative to the thread folder, or to ``assets/`` when not prefixed."""
    parts = rel.split("/")
    if parts[0] != ASSETS_DIR:
        parts = [ASSETS_DIR, *parts]
    return safe_join(folder, *parts)


def build_input(
    folder: Path, uuid: str, listing: Mapping[str, Any] | None
) -> tuple[ThreadInput, dict[str, Any]]:
    """The ThreadInput of a stored thread and its stored record (``thread.json``)."""
    record = _load_json(folder / THREAD_JSON)
    if not isinstance(record, dict):
        raise PayloadError(str(folder / THREAD_JSON), "expected a JSON object")
    plain = decode_raw_pages((folder / RAW_ENTRIES).read_bytes(), name=RAW_ENTRIES)
    # A raw_blocks.json kept from an earlier harvest is not used when the stored render
    # says it had no blocks pages (raw files are never deleted, so it may outlive its use).
    completeness = record.get("completeness")
    used_blocks = not (isinstance(completeness, Mapping) and completeness.get("blocks_pages") == 0)
    blocks_path = folder / RAW_BLOCKS
    blocks: tuple[RawPage, ...] = ()
    if used_blocks and blocks_path.exists():
        blocks = decode_raw_pages(blocks_path.read_bytes(), name=RAW_BLOCKS)
    row = listing_from_json(listing) or listing_from_record(uuid, record)
    inp = ThreadInput(
        thread_id=row.thread_id,
        plain_pages=plain,
        blocks_pages=blocks,
        listing=row,
        downloads=stored_downloads(folder),
    )
    return inp, record


def context_for(record: Mapping[str, Any], account: str, lang: str | None) -> RenderContext:
    """The RenderContext that reproduces the stored render: same exported_at, language, kept
    fields. ``lang`` given explicitly overrides the language recorded in ``thread.json``."""
    kept: dict[str, Any] = {}
    if record.get("remote_deleted"):
        kept["remote_deleted"] = record["remote_deleted"]
    exported = record.get("exported_at")
    stored_lang = record.get("lang")
    return RenderContext(
        exported_at=exported if isinstance(exported, str) else "",
        lang=lang or (stored_lang if stored_lang in ("en", "zh") else "en"),
        account=account,
        kept_record=kept,
    )
