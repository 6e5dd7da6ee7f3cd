"""What the shell records and cleans of a thread folder is the render's table of output files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.archive.files import (
    RAW_FILES,
    derived_files_on_disk,
    recorded_file_keys,
)
from pplx_archiver.shell.archive.store import Archive
from tests.core.builders import CTX, research_thread, with_report
from tests.shell.store_helpers import raw

# never derived: raw pages, assets, a user's own notes beside and among the turns
KEPT = ("raw_entries.json", "assets/manifest.json", "notes.md", "turns/notes.md", "turns/turn_7.md")


def test_the_files_found_and_recorded_are_the_tables(tmp_path: Path) -> None:
    """A folder holding every row's file and others: exactly the rows' files are derived,
    and the index records those, the raw files and the asset manifest."""
    derived = [f.at(n) if f.per_turn else f.path for f in outputs.OUTPUTS for n in (1, 12)]
    for rel in (*derived, *KEPT):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    assert derived_files_on_disk(tmp_path) == set(derived)
    recorded = {rel for rel in (*derived, *KEPT) if recorded_file_keys(rel)}
    assert recorded == {*derived, "raw_entries.json", "assets/manifest.json"}
    assert all(recorded_file_keys(rel) for rel in RAW_FILES)


def test_a_new_render_removes_exactly_the_derived_files_it_no_longer_writes(
    tmp_path: Path,
) -> None:
    """Committed with a report and three turns, then rendered without the report and with one
    turn: those derived files go; raw pages, assets and the user's files stay; the index
    records exactly the new render's files and the raw ones."""
    first = render_thread(with_report(research_thread(asset=False)), CTX)
    assert outputs.REPORT.path in first.files
    three = {**first.files, outputs.TURN.at(2): b"2\n", outputs.TURN.at(3): b"3\n"}
    with Archive(tmp_path) as arc:
        rel = arc.writer.apply(
            ThreadCommit("a", dataclasses.replace(first, files=three), raw(b"{}"), run_id=None)
        ).path
        folder = tmp_path / rel
        for name in KEPT[1:]:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(b"mine\n")
        gone = {outputs.REPORT.path, outputs.TURN.at(2), outputs.TURN.at(3)}
        fewer = {k: v for k, v in three.items() if k not in gone}
        arc.writer.apply(
            ThreadCommit("a", dataclasses.replace(first, files=fewer), raw(b"{}"), run_id=None)
        )
        assert derived_files_on_disk(folder) == set(fewer)
        for name in KEPT:
            assert (folder / name).is_file(), name
        row = arc.get(first.thread_uuid)
        assert row is not None and row.files is not None
        assert set(row.files) == {*fewer, "raw_entries.json"}
