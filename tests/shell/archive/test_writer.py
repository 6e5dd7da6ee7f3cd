"""The archive's one writer applies every kind of plan; the plans are values tests can read."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pplx_archiver.core.archive.writes import (
    AssetPlacement,
    DerivedUpdate,
    RootFiles,
    StagedFile,
    ThreadCommit,
    Tombstone,
    VariantRecords,
)
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.store import Archive
from tests.shell.store_helpers import raw, result

UUID = "0a1b2c3d-0000-4000-8000-000000000001"


def _commit(arc: Archive) -> str:
    return arc.writer.apply(ThreadCommit("a", result(turns=2), raw(b"{}"), run_id=None)).path


def test_derived_update_writes_changed_removes_stale_and_records(tmp_path: Path) -> None:
    """A re-render plan rewrites the changed files, removes the stale ones, and the index
    records the new hashes and the degraded-turn count carried by a changed thread.json."""
    with Archive(tmp_path) as arc:
        rel = _commit(arc)
        record = orjson.loads((tmp_path / rel / "thread.json").read_bytes())
        new_json = orjson.dumps({**record, "counts": {"turns": 1, "degraded_turns": 1}})
        plan = DerivedUpdate(
            UUID,
            rel,
            {"conversation.md": b"# new\n", "thread.json": new_json},
            stale=("turns/turn_0002.md",),
            degraded_turns=1,
        )
        assert arc.writer.apply(plan) == (2, 1)
        assert (tmp_path / rel / "conversation.md").read_bytes() == b"# new\n"
        assert not (tmp_path / rel / "turns" / "turn_0002.md").exists()
        row = arc.get(UUID)
        assert row is not None and row.degraded_turns == 1 and row.files is not None
        assert row.files["conversation.md"][0] == len(b"# new\n")
        assert "turns/turn_0002.md" not in row.files
        assert arc.files_problem(row, deep=True) is None
        assert arc.writer.apply(plan) == (0, 0)  # applied twice: nothing left to do


def test_asset_placement_moves_downloads_writes_manifest_and_completeness(
    tmp_path: Path,
) -> None:
    """Backfilled assets: the staged file is moved in, the manifest written and recorded, and
    incomplete assets are recorded so the next sync retries the thread."""
    with Archive(tmp_path) as arc:
        rel = _commit(arc)
        staged = tmp_path / "index" / "staging" / "0.bin"
        staged.parent.mkdir(parents=True)
        staged.write_bytes(b"\x89PNG....")
        plan = AssetPlacement(
            UUID,
            rel,
            {"assets/manifest.json": b'{"assets": []}\n'},
            (StagedFile("assets/figure.v1.png", str(staged)),),
            complete=False,
        )
        assert arc.writer.apply(plan) == 2
        assert (tmp_path / rel / "assets" / "figure.v1.png").read_bytes() == b"\x89PNG...."
        assert not staged.exists()
        row = arc.get(UUID)
        assert row is not None and row.completeness is not None
        assert row.completeness["assets_complete"] is False
        assert row.files is not None and "assets/manifest.json" in row.files
        state = arc.stored_state(UUID)
        assert state is not None and not state.complete


def test_root_files_and_their_confinement(tmp_path: Path) -> None:
    """Root files land under the archive root in the plan's order; a path leaving it is
    refused before anything is written."""
    with Archive(tmp_path) as arc:
        plan = RootFiles({"spaces/a.md": b"# a\n", "spaces/spaces.json": b"{}\n"})
        assert arc.writer.apply(plan) == 2
        assert arc.writer.apply(plan) == 0
        assert (tmp_path / "spaces" / "a.md").read_bytes() == b"# a\n"
        with pytest.raises(StoreError):
            arc.writer.apply(RootFiles({"../outside.md": b"x"}))
        assert not (tmp_path.parent / "outside.md").exists()


def test_tombstone_writes_remote_deleted_once_and_marks_terminal(tmp_path: Path) -> None:
    """A tombstone sets remote_deleted in thread.json and the index (first one kept) and the
    thread's terminal state; its recorded files still match the disk."""
    with Archive(tmp_path) as arc:
        rel = _commit(arc)
        assert arc.writer.apply(Tombstone(UUID, "deleted", "2026-09-01T00:00:00Z")) is True
        assert arc.writer.apply(Tombstone(UUID, "expired", "2027-01-01T00:00:00Z")) is False
        record = orjson.loads((tmp_path / rel / "thread.json").read_bytes())
        assert record["remote_deleted"] == "2026-09-01T00:00:00Z"
        row = arc.get(UUID)
        assert row is not None and row.status == "expired"
        assert row.remote_deleted == "2026-09-01T00:00:00Z"
        assert arc.files_problem(row, deep=True) is None
        with pytest.raises(StoreError, match="not in the archive index"):
            arc.writer.apply(Tombstone("unknown", "deleted", "2026-09-01T00:00:00Z"))


def test_variant_records_go_to_the_registry(tmp_path: Path) -> None:
    """Variant records applied through the writer are registered once."""
    rec = {"thread_uuid": UUID, "entry_uuid": "e1", "sibling_uuid": "s1", "uuid8": "0a1b2c3d"}
    with Archive(tmp_path) as arc:
        first = arc.writer.apply(VariantRecords((rec,), "online", None))
        again = arc.writer.apply(VariantRecords((rec,), "online", None))
    assert len(first) == 1 and again == []
    assert (tmp_path / "index" / "answer_variants_log.jsonl").read_bytes().count(b"\n") == 1
