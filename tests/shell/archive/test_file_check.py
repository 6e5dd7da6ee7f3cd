"""The per-run check of stored files: every folder each run, files in full or by shares."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pplx_archiver.shell.archive import file_check
from pplx_archiver.shell.archive.file_check import Coverage, invalid_threads
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.status import collect, render_text
from pplx_archiver.shell.run.coverage import listing_gap_reason
from tests.shell.archive_builders import build


def _large(monkeypatch: pytest.MonkeyPatch, shares: int) -> None:
    """Treat the test archive as a large one: folders each run, files by ``shares``."""
    monkeypatch.setattr(file_check, "FULL_CHECK_UP_TO", 0)
    monkeypatch.setattr(file_check, "SHARE_RUNS", shares)


def _finished_sync(archive: Archive) -> None:
    run = archive.begin_run("sync")
    archive.finish_run(run, {"listing_complete": True})


def test_a_deleted_folder_is_found_on_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However large the archive, a thread folder deleted by hand is found by the next run
    (and turns the early stop off), while the files of one thread in 1000 at most are read."""
    _large(monkeypatch, 1000)
    build(tmp_path, 6)
    with Archive(tmp_path) as archive:
        _finished_sync(archive)
        assert listing_gap_reason(archive) is None
        gone = next(archive.iter_threads("done"))
        assert gone.path
        shutil.rmtree(archive.folder(gone.path))
        coverage = Coverage()
        found = list(invalid_threads(archive, coverage))
        assert [(i.uuid, i.problem) for i in found] == [(gone.uuid, "folder missing")]
        assert (coverage.threads, coverage.folders, coverage.full) == (6, 6, False)
        assert coverage.files <= 1
        assert "missing or changed" in (listing_gap_reason(archive) or "")


def test_a_truncated_file_is_found_within_the_share_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file truncated inside a folder that still exists is found by one of the next
    ``SHARE_RUNS`` runs; those runs read the files of every thread exactly once."""
    _large(monkeypatch, 3)
    build(tmp_path, 6)
    with Archive(tmp_path) as archive:
        victim = list(archive.iter_threads("done"))[4]
        assert victim.path
        (archive.folder(victim.path) / "conversation.md").write_text("cut\n")
        found, read = [], 0
        for _ in range(3):
            _finished_sync(archive)
            coverage = Coverage()
            found += [i.uuid for i in invalid_threads(archive, coverage)]
            read += coverage.files
        assert found == [victim.uuid]
        assert read == 6


def test_small_archives_are_checked_in_full_and_status_says_so(tmp_path: Path) -> None:
    """Up to FULL_CHECK_UP_TO threads every file is read each run, and status reports it."""
    build(tmp_path, 3)
    with Archive(tmp_path) as archive:
        victim = next(archive.iter_threads("done"))
        assert victim.path
        (archive.folder(victim.path) / "conversation.md").write_text("cut\n")
        report = collect(archive)
    assert report["invalid_files_count"] == 1
    assert report["files_checked"]["full"] is True
    assert "stored files checked: all, of 3 threads" in render_text(report)


def test_status_names_the_share_it_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a large archive status says how many folders and whose files it checked."""
    _large(monkeypatch, 2)
    build(tmp_path, 4)
    with Archive(tmp_path) as archive:
        report = collect(archive)
    checked = report["files_checked"]
    assert (checked["threads"], checked["folders"], checked["full"]) == (4, 4, False)
    assert checked["files_of"] == 2
    assert "stored files checked: 4 folders, the files of 2 of 4 threads" in render_text(report)
