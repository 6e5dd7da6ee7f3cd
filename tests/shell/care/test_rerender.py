"""Offline re-render rebuilds derived files byte-identically from raw files, in processes too."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from structlog.testing import capture_logs
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.rerender import rerender
from tests.shell.archive_builders import build, snapshot


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6-thread archive harvested once (copied per test)."""
    out = tmp_path_factory.mktemp("pristine")
    build(out, 6)
    return out


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_rerun_on_unchanged_archive_writes_nothing(pristine: Path, tmp_path: Path) -> None:
    """Re-rendering an untouched archive rewrites no file, keeps mtimes, warns of no variant."""
    out = _copy(pristine, tmp_path / "a")
    before = snapshot(out)
    with Archive(out) as arc, capture_logs() as logs:
        summary = rerender(arc, jobs=1)
    assert summary.threads == 6 and not summary.failures
    assert summary.rewritten_files == 0 and summary.removed_files == 0
    assert summary.unchanged_files == 6 * 6  # conversation, 3 turns, sources.json/.md
    assert snapshot(out) == before
    assert not [e for e in logs if e["event"] == "ANSWER_VARIANT_DETECTED"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_rebuilds_deleted_and_edited_files_byte_identically(
    pristine: Path, tmp_path: Path, jobs: int
) -> None:
    """Deleted or edited derived files come back with the harvest's exact bytes (--jobs 1 and 2)."""
    out = _copy(pristine, tmp_path / "a")
    before = snapshot(out)
    folders = sorted({Path(k).parts[:3] for k in before if k.endswith("conversation.md")})
    first, second = (Path(out, *f) for f in folders[:2])
    (first / "conversation.md").unlink()
    (second / "turns" / "turn_0002.md").write_text("hand edit\n")
    (second / "turns" / "turn_0009.md").write_text("stale\n")
    with Archive(out) as arc:
        summary = rerender(arc, jobs=jobs)
    assert (summary.rewritten_files, summary.removed_files, summary.changed_threads) == (2, 1, 2)
    after = snapshot(out)
    assert {k: v[0] for k, v in after.items()} == {k: v[0] for k, v in before.items()}


def test_thread_json_only_with_flag_and_dry_run_writes_nothing(
    pristine: Path, tmp_path: Path
) -> None:
    """thread.json is left alone without --thread-json; --dry-run reports but never writes."""
    out = _copy(pristine, tmp_path / "a")
    tj = next(out.rglob("thread.json"))
    good = tj.read_bytes()
    tj.write_bytes(good.replace(b'"counts"', b'"counts" '))
    with Archive(out) as arc:
        assert rerender(arc, jobs=1).rewritten_files == 0
        dry = rerender(arc, jobs=1, thread_json=True, dry_run=True)
        assert dry.rewritten_files == 1 and tj.read_bytes() != good
        assert rerender(arc, jobs=1, thread_json=True).rewritten_files == 1
    assert tj.read_bytes() == good


def test_variants_reregistered_offline_only_when_new(pristine: Path, tmp_path: Path) -> None:
    """A lost registry is rebuilt offline with one warning per record; a rerun warns of none."""
    out = _copy(pristine, tmp_path / "a")
    registry = out / "index" / "answer_variants_log.jsonl"
    online = [orjson.loads(x) for x in registry.read_bytes().splitlines()]
    assert len(online) == 2  # threads 0 and 3
    registry.unlink()
    with Archive(out) as arc, capture_logs() as logs:
        assert rerender(arc, jobs=1).variant_changes == 2
    hits = [e for e in logs if e["event"] == "ANSWER_VARIANT_DETECTED"]
    assert [e["source"] for e in hits] == ["offline", "offline"]
    assert {e["entry_uuid"] for e in hits} == {r["entry_uuid"] for r in online}
    with Archive(out) as arc, capture_logs() as logs:
        assert rerender(arc, jobs=1).variant_changes == 0
    assert not [e for e in logs if e["event"] == "ANSWER_VARIANT_DETECTED"]


def test_broken_raw_file_is_a_reported_failure(pristine: Path, tmp_path: Path) -> None:
    """A truncated raw file fails that thread with a clear path; the others still render."""
    out = _copy(pristine, tmp_path / "a")
    raw = next(out.rglob("raw_entries.json"))
    raw.write_bytes(raw.read_bytes()[:50])
    with Archive(out) as arc:
        summary = rerender(arc, jobs=1)
    assert summary.threads == 6 and len(summary.failures) == 1
    assert "raw_entries.json" in summary.failures[0]["error"]


def test_cli_summary_limit_and_exit_codes(pristine: Path, tmp_path: Path) -> None:
    """`re-render` prints its summary, honours --limit, and exits 2 on a missing archive."""
    _register()
    out = _copy(pristine, tmp_path / "a")
    runner = CliRunner()
    res = runner.invoke(app, ["re-render", "--out", str(out), "--limit", "2", "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert "re-render: 2 threads, rewrote 0 files" in res.output
    assert any(p.name.startswith("re-render-") for p in (out / "index" / "logs").iterdir())
    res = runner.invoke(app, ["re-render", "--out", str(tmp_path / "none")])
    assert res.exit_code == 2
    assert not (tmp_path / "none").exists()


def test_works_when_index_lost_listing(pristine: Path, tmp_path: Path) -> None:
    """Without the stored listing row, the one rebuilt from thread.json renders the same bytes."""
    out = _copy(pristine, tmp_path / "a")
    with Archive(out) as arc:
        for row in arc.iter_threads():
            arc.index.upsert(row.uuid, row.account, listing=None)
        before = snapshot(out)
        summary = rerender(arc, jobs=1, thread_json=True)
    assert summary.rewritten_files == 0 and not summary.failures
    assert snapshot(out) == before
    assert os.cpu_count()


def test_leftover_blocks_file_is_ignored_when_render_had_none(
    pristine: Path, tmp_path: Path
) -> None:
    """A raw_blocks.json the stored render did not use (blocks_pages 0) does not change output."""
    out = _copy(pristine, tmp_path / "a")
    folder = next(out.rglob("thread.json")).parent
    (folder / "raw_blocks.json").write_bytes(b"not even json")
    before = snapshot(out)
    with Archive(out) as arc:
        summary = rerender(arc, jobs=1, thread_json=True)
    assert summary.rewritten_files == 0 and not summary.failures
    assert snapshot(out) == before
