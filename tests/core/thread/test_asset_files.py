"""Asset names and the manifest are pure: unique names per thread, deterministic bytes."""

from __future__ import annotations

import orjson

from pplx_archiver.core.thread.asset_files import (
    MANIFEST,
    STORED,
    Resolved,
    base_entry,
    dump_manifest,
    name_files,
    status_counts,
)
from pplx_archiver.core.thread.model import AssetRef


def _ref(uuid: str, name: str, version: int, url: str | None = None) -> AssetRef:
    return AssetRef(uuid, "DOC_FILE", "2026-01-01", name, url, False, version, path="$.x")


def test_names_are_unique_and_reused_paths_are_kept() -> None:
    """Two assets with the same file name and version get the uuid8 in the second name; a
    reused version keeps its stored path and takes it from new ones; non-stored get none."""
    a, b = _ref("aaaaaaaa-1", "fig.png", 1), _ref("bbbbbbbb-2", "fig.png", 1)
    kept = _ref("cccccccc-3", "old.md", 1)
    failed = _ref("dddddddd-4", "x.md", 1)
    versions = [
        Resolved(kept, {"status": STORED, "path": "assets/fig.v1.png"}, ".png", reused=True),
        Resolved(a, {"status": STORED}, ".png"),
        Resolved(b, {"status": STORED}, ".png"),
        Resolved(failed, {"status": "failed"}),
    ]
    names = name_files(versions)
    assert names == [None, "assets/fig.aaaaaaaa.v1.png", "assets/fig.bbbbbbbb.v1.png", None]
    assert MANIFEST not in names


def test_manifest_is_sorted_without_url_query() -> None:
    """The manifest orders entries by (file name, version, uuid) whatever the input order,
    and keeps only the URL path."""
    one = base_entry(_ref("u1", "b.md", 2, "https://c/x?Signature=s"), "/x")
    two = base_entry(_ref("u2", "a.md", 1), None)
    for entry in (one, two):
        entry["status"] = STORED
    data = dump_manifest("t1", [one, two])
    assert data == dump_manifest("t1", [two, one])
    doc = orjson.loads(data)
    assert [e["file_name"] for e in doc["assets"]] == ["a.md", "b.md"]
    assert b"Signature" not in data and doc["assets"][1]["url_path"] == "/x"
    assert status_counts(doc["assets"]) == {"stored_download": 2}
