"""The index file's own damage (issue 44): named, and a full disk named as such."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from pplx_archiver.errors import IndexCorruptError
from pplx_archiver.shell.archive import index_schema
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.index_schema import db_error, index_file_damage


def test_the_index_file_damage_is_named(tmp_path: Path) -> None:
    path = tmp_path / "archive.sqlite"
    assert index_file_damage(path) == "missing"
    path.write_bytes(b"")
    assert index_file_damage(path) == "empty (0 bytes)"
    path.write_bytes(b"garbage" * 10)
    assert index_file_damage(path) == "not an SQLite database"
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE other (x)")
    db.commit()
    db.close()
    assert index_file_damage(path) == "a foreign SQLite database (no threads table)"
    with pytest.raises(IndexCorruptError, match=r"foreign SQLite database.*reindex"):
        Index(path)
    path.unlink()
    Index(path).close()
    assert index_file_damage(path) is None


def test_an_empty_index_is_never_made_into_a_new_one(tmp_path: Path) -> None:
    path = tmp_path / "archive.sqlite"
    path.write_bytes(b"")
    with pytest.raises(IndexCorruptError, match=r"empty \(0 bytes\).*reindex"):
        Index(path)
    assert path.stat().st_size == 0


def test_a_disk_io_error_on_a_full_disk_says_the_disk_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "archive.sqlite"
    Index(path).close()
    error = sqlite3.OperationalError("disk I/O error")
    assert "disk is full" not in str(db_error(path, "cannot open the index", error))
    full = SimpleNamespace(f_bavail=0, f_frsize=4096)
    monkeypatch.setattr(index_schema.os, "statvfs", lambda _: full)
    text = str(db_error(path, "cannot open the index", error))
    assert "the disk is full: free disk space" in text
    unable = sqlite3.OperationalError("unable to open database file")
    assert "the disk is full" in str(db_error(path, "cannot open the index", unable))
