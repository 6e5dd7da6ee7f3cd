"""A thread folder's derived files are one table: the render writes exactly its rows."""

from __future__ import annotations

from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.core.thread.render import render_thread
from tests.core.builders import CTX, research_thread, with_report
from tests.core.scenarios import SCENARIOS


def _rendered() -> dict[str, set[str]]:
    """The files each scenario renders, and a research thread's with its report downloaded."""
    found = {name: set(render_thread(make(), CTX).files) for name, make in SCENARIOS.items()}
    report = with_report(research_thread(asset=False))
    found["report"] = set(render_thread(report, CTX).files)
    return found


def test_every_file_a_render_writes_is_a_row_and_every_row_is_written() -> None:
    """Across the scenarios (all five modes, a report), each file written matches one row,
    each row is written by some render, and the rows every thread has are in every render."""
    rendered = _rendered()
    for name, files in rendered.items():
        strays = sorted(f for f in files if not outputs.is_output(f))
        assert not strays, f"{name}: written but not in core/thread/output_files.py: {strays}"
        assert set(outputs.REQUIRED) <= files, name
        assert outputs.TURN.at(1) in files, name
    every = set().union(*rendered.values())
    unwritten = [f.path for f in outputs.OUTPUTS if not any(f.pattern().match(w) for w in every)]
    assert not unwritten, f"rows no render writes: {unwritten}"


def test_each_file_matches_exactly_one_row() -> None:
    for files in _rendered().values():
        for name in files:
            rows = [f.path for f in outputs.OUTPUTS if f.pattern().match(name)]
            assert len(rows) == 1, (name, rows)


def test_the_views_of_the_table() -> None:
    assert {
        "conversation.md",
        "sources.json",
        "sources.md",
        "report.md",
        "thread.json",
    } == outputs.TOP_FILES
    assert {"turns"} == outputs.SUB_DIRS
    assert outputs.REQUIRED == ("conversation.md", "sources.json", "sources.md", "thread.json")
    assert outputs.TURN.at(7) == "turns/turn_0007.md" and outputs.is_output("turns/turn_12345.md")
    for other in ("turns/turn_7.md", "turns/notes.md", "notes.md", "raw_entries.json", "x/y.md"):
        assert not outputs.is_output(other), other
