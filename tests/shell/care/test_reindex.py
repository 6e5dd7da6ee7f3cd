"""``reindex`` reads each folder as the writer stores its row, keeps the newer of two folders
of one thread, and reports what it could not read."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from structlog.testing import capture_logs

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care import reindex as R
from tests.shell.archive_builders import build


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 5-thread archive harvested once (copied per test)."""
    out = tmp_path_factory.mktemp("pristine")
    build(out, 5)
    return out


def _folders(out: Path) -> list[Path]:
    return list(R.thread_folders(out))


def test_each_folder_is_read_when_its_row_is_stored(
    pristine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a folder and storing its row alternate: no list of every row is built first."""
    out = shutil.copytree(pristine, tmp_path / "a")
    steps: list[str] = []
    read, upsert = R.read_folder, Index.upsert

    def reading(root: Path, folder: Path) -> Any:
        steps.append("read")
        return read(root, folder)

    def storing(self: Index, uuid: str, account: str, **fields: Any) -> None:
        steps.append("store")
        upsert(self, uuid, account, **fields)

    monkeypatch.setattr(R, "read_folder", reading)
    monkeypatch.setattr(Index, "upsert", storing)
    summary = R.reindex(out)
    assert summary.threads == 5
    assert steps == ["read", "store"] * 5


def test_the_newer_of_two_folders_is_kept_and_the_other_reported(
    pristine: Path, tmp_path: Path
) -> None:
    out = shutil.copytree(pristine, tmp_path / "a")
    first = _folders(out)[0]
    copy = first.with_name(first.name + "-copy")
    shutil.copytree(first, copy)
    record = orjson.loads((copy / R.THREAD_JSON).read_bytes())
    record["exported_at"] = "2999-01-01T00:00:00Z"
    (copy / R.THREAD_JSON).write_bytes(orjson.dumps(record))
    with capture_logs() as logs:
        summary = R.reindex(out)
    rel = first.relative_to(out).as_posix()
    assert summary.threads == 5 and summary.duplicates == [rel]
    assert [e["duplicate"] for e in logs if e["event"] == "REINDEX_DUPLICATE"] == [rel]
    with Archive(out) as archive:
        row = archive.index.get(record["uuid"])
    assert row is not None and row.path == copy.relative_to(out).as_posix()


def test_an_unreadable_folder_is_reported_and_the_rest_indexed(
    pristine: Path, tmp_path: Path
) -> None:
    out = shutil.copytree(pristine, tmp_path / "a")
    broken = _folders(out)[1]
    (broken / R.THREAD_JSON).write_bytes(b"{not json")
    with capture_logs() as logs:
        summary = R.reindex(out)
    rel = broken.relative_to(out).as_posix()
    assert summary.threads == 4
    assert [u["path"] for u in summary.unreadable] == [rel]
    assert summary.unreadable[0]["error"].startswith(f"{rel}/{R.THREAD_JSON}: unreadable")
    assert [e["path"] for e in logs if e["event"] == "REINDEX_UNREADABLE"] == [rel]
