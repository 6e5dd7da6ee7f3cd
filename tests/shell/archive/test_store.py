"""The store writes raw before derived, marks done last, moves folders and stays inside out."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread.model import ListingRow, RenderResult
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.disk import Disk
from pplx_archiver.shell.archive.fsutil import TEMP_PATTERN
from pplx_archiver.shell.archive.store import Archive
from tests.commit_door import commit_thread
from tests.shell.store_helpers import raw, result

UUID = "0a1b2c3d-0000-4000-8000-000000000001"


def _all_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_commit_writes_layout_and_marks_done(tmp_path: Path) -> None:
    """A first commit writes raw and derived files under <account>/<mode>/<dir>, marks done."""
    with Archive(tmp_path) as arc:
        run = arc.begin_run("batch")
        out = commit_thread(
            arc,
            "me@example.com",
            result(),
            raw(b'{"entries":[]}'),
            raw(b'{"entries":[1]}'),
            "2026-07-21T10:00:00.12Z",
            run_id=run,
            listing=ListingRow(thread_id=UUID, title="A thread", updated_at="x"),
        )
        assert out.path == "me@example.com/search/2026-07-20_a-thread_0a1b2c3d"
        assert (out.written, out.unchanged, out.moved_from) == (8, 0, None)
        folder = tmp_path / out.path
        assert sorted(_all_files(folder)) == [
            "conversation.md",
            "raw_blocks.json",
            "raw_entries.json",
            "sources.json",
            "sources.md",
            "thread.json",
            "turns/turn_0001.md",
            "turns/turn_0002.md",
        ]
        row = arc.get(UUID)
        assert row is not None and row.status == "done" and row.path == out.path
        assert row.last_updated_key == "2026-07-21T10:00:00.12Z"
        assert row.listing is not None and row.listing["title"] == "A thread"
        state = arc.stored_state(UUID)
        assert state is not None and state.complete and state.status == "done"


def test_recommit_unchanged_writes_nothing(tmp_path: Path) -> None:
    """Committing the same thread again rewrites no file and keeps mtimes."""
    with Archive(tmp_path) as arc:
        out = commit_thread(arc, "a", result(), raw(b"{}"), None, None)
        folder = tmp_path / out.path
        old = 1_000_000_000
        for p in folder.rglob("*"):
            os.utime(p, (old, old))
        again = commit_thread(arc, "a", result(), raw(b"{}"), None, None)
        assert (again.written, again.unchanged) == (0, 7)
        assert all(p.stat().st_mtime == old for p in folder.rglob("*") if p.is_file())


def test_stale_turn_files_removed_raw_and_assets_kept(tmp_path: Path) -> None:
    """Turn files beyond the new count go; raw files and assets/ are never removed."""
    with Archive(tmp_path) as arc:
        out = commit_thread(
            arc,
            "a",
            result(turns=3),
            raw(b"{}"),
            raw(b"[]"),
            None,
            extra_files={"assets/manifest.json": b"{}"},
        )
        folder = tmp_path / out.path
        again = commit_thread(arc, "a", result(turns=1), raw(b"{}"), None, None)
        assert again.removed == 2
        files = _all_files(folder)
        assert "turns/turn_0002.md" not in files and "turns/turn_0001.md" in files
        assert {"raw_blocks.json", "assets/manifest.json"} <= set(files)


def test_mode_or_title_change_moves_folder_by_rename(tmp_path: Path) -> None:
    """A new title or mode moves the folder with one rename: same inode, old place gone."""
    with Archive(tmp_path) as arc:
        first = commit_thread(arc, "a", result(), raw(b"{}"), None, None)
        inode = (tmp_path / first.path).stat().st_ino
        moved = commit_thread(
            arc, "a", result(title="New", mode="computer"), raw(b"{}"), None, None
        )
        assert moved.moved_from == first.path
        assert moved.path == "a/computer/2026-07-20_new_0a1b2c3d"
        assert (tmp_path / moved.path).stat().st_ino == inode
        assert not (tmp_path / first.path).exists()
        assert not (tmp_path / "a" / "search").exists()
        row = arc.get(UUID)
        assert row is not None and row.path == moved.path and row.mode == "computer"


def test_existing_folder_is_checked_and_cleaned_a_new_one_is_not_read(tmp_path: Path) -> None:
    """Committing into a folder that exists removes temp leftovers of a killed run and
    refuses a file that links out of the archive; a new folder is written as made."""
    with Archive(tmp_path) as arc:
        first = commit_thread(arc, "a", result(), raw(b"{}"), None, None)
        folder = tmp_path / first.path
        leftover = folder / ".conversation.md.tmp-0badcafe"
        leftover.write_bytes(b"half")
        commit_thread(arc, "a", result(answer="changed"), raw(b"{}"), None, None)
        assert not leftover.exists()
        (folder / "conversation.md").unlink()
        (folder / "conversation.md").symlink_to(tmp_path.parent / "outside.md")
        with pytest.raises(StoreError, match="outside"):
            commit_thread(arc, "a", result(answer="again"), raw(b"{}"), None, None)
        assert not (tmp_path.parent / "outside.md").exists()


class FailingDisk(Disk):
    """The writer's file operations, failing at one file name (a disk full mid-commit)."""

    def __init__(self, fail_at: str | None = None) -> None:
        self.fail_at = fail_at
        self.calls: list[str] = []

    def write(self, path: Path, data: bytes, *, durable: bool = True, compare: bool = True) -> bool:
        self.calls.append(path.name)
        if path.name == self.fail_at:
            raise StoreError("disk full")
        return super().write(path, data, durable=durable, compare=compare)


def test_crash_mid_commit_leaves_no_done_and_no_partial(tmp_path: Path) -> None:
    """A write failing half-way leaves the thread not done and no partial or temp file."""
    disk = FailingDisk()
    with Archive(tmp_path, disk=disk) as arc:
        commit_thread(arc, "a", result(), raw(b"{}"), None, None)
        disk.fail_at, disk.calls = "conversation.md", []
        with pytest.raises(StoreError, match="disk full"):
            commit_thread(arc, "a", result(answer="changed"), raw(b"{}"), None, None)
        # Only the files whose bytes change are written (raw_entries.json is the same).
        assert "raw_entries.json" not in disk.calls and disk.calls == ["conversation.md"]
        row = arc.get(UUID)
        assert row is not None and row.status == "pending"
        state = arc.stored_state(UUID)
        assert state is not None and state.status == "pending"
        assert not any(TEMP_PATTERN.match(p.name) for p in tmp_path.rglob("*"))
        disk.fail_at = None
        commit_thread(arc, "a", result(answer="changed"), raw(b"{}"), None, None)
        row = arc.get(UUID)
        assert row is not None and row.status == "done"


def test_new_thread_crash_is_not_marked_done(tmp_path: Path) -> None:
    """A first commit that fails before the end leaves no done row for the thread."""
    with Archive(tmp_path, disk=FailingDisk("thread.json")) as arc:
        with pytest.raises(StoreError):
            commit_thread(arc, "a", result(), raw(b"{}"), None, None)
        assert arc.get(UUID) is None


def _plan(res: RenderResult, blocks: bytes | None = None) -> ThreadCommit:
    return ThreadCommit("a", res, raw(b"{}"), raw(blocks) if blocks is not None else None)


def test_thread_json_is_written_after_every_other_file(tmp_path: Path) -> None:
    """The plan's write order: raw files first, thread.json last, so it marks a complete
    folder; the writer follows that order."""
    disk = FailingDisk()
    with Archive(tmp_path, disk=disk) as arc:
        prepared = arc.writer.prepare(_plan(result(), b"[]"))
        assert prepared.order[:2] == ("raw_entries.json", "raw_blocks.json")
        assert prepared.order[-1] == "thread.json"
        assert set(prepared.changed) == set(prepared.order) and prepared.stale == ()
        arc.writer.apply(_plan(result(), b"[]"))
    assert disk.calls == [key.rsplit("/", 1)[-1] for key in prepared.order]


def test_prepared_commit_sees_changes_stale_files_and_moves(tmp_path: Path) -> None:
    """Preparing a commit reads only: unchanged files are not in ``changed``, turns the new
    render drops are ``stale``, a new title moves the folder; nothing is written."""
    with Archive(tmp_path) as arc:
        first = arc.writer.apply(_plan(result(turns=3)))
        folder = tmp_path / first.path
        before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        again = arc.writer.prepare(_plan(result(turns=3)))
        assert again.changed == () and again.stale == () and again.moving_from is None
        fewer = arc.writer.prepare(_plan(result(turns=1, title="Other")))
        assert fewer.stale == ("turns/turn_0002.md", "turns/turn_0003.md")
        assert fewer.moving_from == first.path and fewer.rel != first.path
        assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_uuid8_collision_gets_its_own_folder(tmp_path: Path) -> None:
    """Two threads sharing date, title and uuid8 never share a folder."""
    with Archive(tmp_path) as arc:
        a = commit_thread(arc, "a", result("0a1b2c3d-aaaa"), raw(b"{}"), None, None)
        b = commit_thread(arc, "a", result("0a1b2c3d-bbbb"), raw(b"{}"), None, None)
        assert a.path != b.path
        assert (tmp_path / a.path / "thread.json").exists()
        assert (tmp_path / b.path / "thread.json").exists()


def test_set_remote_deleted_is_written_once(tmp_path: Path) -> None:
    """remote_deleted lands in thread.json and the index once and survives later commits."""
    with Archive(tmp_path) as arc:
        out = commit_thread(arc, "a", result(), raw(b"{}"), None, None)
        assert arc.set_remote_deleted(UUID, "2026-09-01T00:00:00Z") is True
        assert arc.set_remote_deleted(UUID, "2027-01-01T00:00:00Z") is False
        path = tmp_path / out.path / "thread.json"
        assert orjson.loads(path.read_bytes())["remote_deleted"] == "2026-09-01T00:00:00Z"
        assert arc.kept_record(UUID) == {"remote_deleted": "2026-09-01T00:00:00Z"}
        commit_thread(arc, "a", result(answer="new"), raw(b"{}"), None, None)
        assert orjson.loads(path.read_bytes())["remote_deleted"] == "2026-09-01T00:00:00Z"
        row = arc.get(UUID)
        assert row is not None and row.remote_deleted == "2026-09-01T00:00:00Z"


def test_failed_and_terminal_states(tmp_path: Path) -> None:
    """mark_failed counts attempts; mark_terminal records deleted/expired and refuses others."""
    with Archive(tmp_path) as arc:
        arc.mark_failed("u", "TransientError: 502", "entries[1]", account="a")
        arc.mark_failed("u", "TransientError: 502", None)
        row = arc.get("u")
        assert row is not None and (row.status, row.attempts, row.account) == ("failed", 2, "a")
        arc.mark_terminal("u", "expired")
        state = arc.stored_state("u")
        assert state is not None and state.status == "expired"
        with pytest.raises(StoreError):
            arc.mark_terminal("u", "gone")


def test_render_may_not_write_raw_or_escaping_files(tmp_path: Path) -> None:
    """A render result naming a raw file or a path with .. is refused before any write."""
    bad = result()
    with Archive(tmp_path) as arc:
        for key in ("raw_entries.json", "../x.md", "turns/../../y"):
            hostile = dataclasses.replace(bad, files={**bad.files, key: b"x"})
            with pytest.raises(StoreError):
                commit_thread(arc, "a", hostile, raw(b"{}"), None, None)
        assert arc.get(UUID) is None


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(account=st.text(max_size=40), title=st.text(max_size=60), mode=st.text(max_size=20))
def test_hostile_names_stay_inside_out(tmp_path: Path, account: str, title: str, mode: str) -> None:
    """Any account, title or mode string gives a folder strictly inside the archive root."""
    arc = Archive(tmp_path)
    try:
        res = result(title=title, mode=mode)
        rel = arc.thread_rel_path(account, res.dir_name)
        folder = arc.folder(rel)
        assert folder.resolve().is_relative_to(tmp_path.resolve())
        assert len(Path(rel).parts) == 3 and ".." not in Path(rel).parts
    finally:
        arc.close()


def test_group_commit_marks_done_only_after_flush(tmp_path: Path) -> None:
    """With group commit, written threads stay pending until flush_done syncs and marks them."""
    arc = Archive(tmp_path, group_commit=True)
    commit_thread(arc, "a", result(), raw(b"{}"), None, None)
    row = arc.get(result().thread_uuid)
    assert row is not None and row.status == "pending" and row.path
    assert arc.unsynced == 1
    assert arc.flush_done() == 1
    row = arc.get(result().thread_uuid)
    assert row is not None and row.status == "done"
    assert arc.unsynced == 0 and arc.flush_done() == 0
    # Unchanged bytes need no sync: the thread is marked done at once.
    commit_thread(arc, "a", result(), raw(b"{}"), None, None)
    assert arc.unsynced == 0
    arc.close()


def test_group_commit_crash_before_flush_leaves_pending(tmp_path: Path) -> None:
    """A process that dies before the group sync leaves the thread pending, so it is refetched."""
    arc = Archive(tmp_path, group_commit=True)
    commit_thread(arc, "a", result(), raw(b"{}"), None, None)
    arc.writer.drop_unsynced()  # the process died before its group commit
    arc.index.close()
    reopened = Archive(tmp_path)
    state = reopened.stored_state(result().thread_uuid)
    assert state is not None and state.status == "pending"
    reopened.close()
