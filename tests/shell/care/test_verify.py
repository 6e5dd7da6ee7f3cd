"""verify passes a good archive and names each kind of damage with its path."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.verify import verify
from tests.shell.archive_builders import build


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-thread archive harvested once (copied per test)."""
    out = tmp_path_factory.mktemp("pristine")
    build(out, 4)
    return out


@pytest.fixture
def out(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the pristine archive."""
    return Path(shutil.copytree(pristine, tmp_path / "a"))


def _kinds(out: Path) -> list[tuple[str, str]]:
    with Archive(out, read_only=True) as arc:
        return [(p.kind, p.path) for p in verify(arc, jobs=1)]


def _folder(out: Path) -> Path:
    return sorted(out.rglob("thread.json"))[0].parent


def _files(out: Path) -> list[tuple[Path, int]]:
    """Every file with its mtime, SQLite's shared-memory/WAL sidecars aside (not data)."""
    return sorted(
        (p, p.stat().st_mtime_ns)
        for p in out.rglob("*")
        if p.is_file() and not p.name.endswith(("-shm", "-wal"))
    )


def test_good_archive_passes(out: Path) -> None:
    """A freshly harvested archive has no problem and verify writes nothing."""
    before = _files(out)
    assert _kinds(out) == []
    assert _files(out) == before


def test_deleted_raw_file(out: Path) -> None:
    """A missing raw_entries.json is reported at its path."""
    folder = _folder(out)
    (folder / "raw_entries.json").unlink()
    rel = str(folder.relative_to(out))
    assert ("missing_raw", f"{rel}/raw_entries.json") in _kinds(out)


def test_truncated_thread_json(out: Path) -> None:
    """A truncated thread.json is reported as not parsing."""
    tj = _folder(out) / "thread.json"
    tj.write_bytes(tj.read_bytes()[:40])
    assert _kinds(out) == [("bad_thread_json", str(tj.relative_to(out)))]


def test_hand_edited_turn_file(out: Path) -> None:
    """An edited turn file differs from its re-render and is named."""
    turn = _folder(out) / "turns" / "turn_0002.md"
    turn.write_text(turn.read_text() + "my note\n")
    assert _kinds(out) == [("rerender_mismatch", str(turn.relative_to(out)))]


def test_leftover_temp_file(out: Path) -> None:
    """A temp file of an interrupted atomic write is reported."""
    tmp = _folder(out) / ".conversation.md.tmp-0123abcd"
    tmp.write_bytes(b"partial")
    assert _kinds(out) == [("temp_file", str(tmp.relative_to(out)))]


def test_duplicated_registry_line(out: Path) -> None:
    """A registry line repeated with identical content is reported with its line number."""
    reg = out / "index" / "answer_variants_log.jsonl"
    first = reg.read_bytes().splitlines(keepends=True)[0]
    reg.write_bytes(reg.read_bytes() + first)
    assert _kinds(out) == [("duplicate_variant", "index/answer_variants_log.jsonl:3")]


def test_missing_turn_folder_and_index_mismatch(out: Path) -> None:
    """A missing turn file and a thread.json naming another mode are each reported."""
    folder = _folder(out)
    (folder / "turns" / "turn_0003.md").unlink()
    tj = folder / "thread.json"
    tj.write_bytes(tj.read_bytes().replace(b'"mode": "search"', b'"mode": "study"'))
    kinds = {k for k, _ in _kinds(out)}
    assert {"missing_derived", "index_mismatch"} <= kinds


def test_cursor_gap(out: Path) -> None:
    """A second page that did not ask for the first page's cursor is a cursor gap."""
    raw = _folder(out) / "raw_entries.json"
    raw.write_bytes(raw.read_bytes().replace(b'["cursor","cur-', b'["cursor","zzz-'))
    assert ("cursor_gap", str(raw.relative_to(out))) in _kinds(out)


def test_asset_manifest_hashes(out: Path) -> None:
    """Manifest files must exist and match their sha256."""
    assets = _folder(out) / "assets"
    assets.mkdir()
    (assets / "a.bin").write_bytes(b"hello")
    good = hashlib.sha256(b"hello").hexdigest()
    manifest = {"assets": [{"path": "assets/a.bin", "sha256": good}, {"path": "b.bin"}]}
    manifest["assets"][1]["sha256"] = "00"
    (assets / "manifest.json").write_bytes(orjson.dumps(manifest))
    assert _kinds(out) == [("missing_asset", f"{assets.relative_to(out)}/b.bin")]
    (assets / "a.bin").write_bytes(b"tampered")
    assert ("asset_hash", f"{assets.relative_to(out)}/a.bin") in _kinds(out)


def test_cli_exit_codes_and_output(out: Path, tmp_path: Path) -> None:
    """`verify` exits 0 on a good archive and 1 listing each problem with its path."""
    _register()
    runner = CliRunner()
    res = runner.invoke(app, ["verify", "--out", str(out), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    assert "verify: ok (4 threads)" in res.output
    (_folder(out) / "raw_entries.json").unlink()
    res = runner.invoke(app, ["verify", "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 1
    assert "raw_entries.json: missing_raw" in res.output
    assert runner.invoke(app, ["verify", "--out", str(tmp_path / "nope")]).exit_code == 2


def test_tombstoned_thread_still_verifies_and_rerenders(out: Path) -> None:
    """remote_deleted written by the store is what a re-render with kept fields reproduces."""
    from pplx_archiver.shell.care.rerender import rerender

    with Archive(out) as arc:
        row = next(arc.iter_threads("done"))
        assert arc.set_remote_deleted(row.uuid, "2026-10-01T00:00:00Z")
        summary = rerender(arc, jobs=1, thread_json=True)
    assert summary.rewritten_files == 0
    assert _kinds(out) == []


def test_unused_leftover_blocks_file_is_not_a_problem(out: Path) -> None:
    """A raw_blocks.json kept from an earlier harvest but unused by the render passes verify."""
    (_folder(out) / "raw_blocks.json").write_bytes(b'{"format":1,"pages":[\n\n]}\n')
    assert _kinds(out) == []


def test_raw_file_changed_since_written(out: Path) -> None:
    """A raw file whose bytes are not those the writer recorded in the index is named, even
    when it still parses (here: one byte of trailing whitespace added)."""
    raw = _folder(out) / "raw_entries.json"
    raw.write_bytes(raw.read_bytes() + b" ")
    assert ("raw_changed", str(raw.relative_to(out))) in _kinds(out)
