"""status reports counts, the last run, failures, variants and interruptions, read-only."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.status import collect, render_text
from tests.shell.archive_builders import build


def test_status_json_and_text(tmp_path: Path) -> None:
    """The JSON report counts states, modes, failures, variants; the text names the same."""
    build(tmp_path, 4)
    with Archive(tmp_path) as arc:
        run = arc.begin_run("batch")
        arc.mark_failed("gone-1", "TransientError: 502", "entries[2]", title="Broken")
        arc.mark_terminal("gone-2", "deleted")
        arc.index.upsert(
            "00000001-1111-4000-8000-000000000001",
            "me",
            interruptions=[{"location": "turn_0002", "kind": "canceled"}],
        )
        arc.finish_run(run, {"archived": 4, "failed": 1, "total": 6})
    _register()
    res = CliRunner().invoke(app, ["status", "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    report = orjson.loads(res.output)
    assert report["threads"] == 6
    assert report["by_state"] == {"deleted": 1, "done": 4, "failed": 1}
    assert report["by_mode"] == {"search": 4}
    assert report["last_run"]["command"] == "batch"
    assert report["last_run"]["summary"]["archived"] == 4
    assert report["failures"] == [
        {
            "thread_uuid": "gone-1",
            "title": "Broken",
            "error": "TransientError: 502",
            "json_path": "entries[2]",
            "attempts": 1,
        }
    ]
    assert report["pending_retry"] == 1
    assert report["variant_hits"] == 2
    assert report["interruptions"] == 1 and report["interruption_kinds"] == {"canceled": 1}
    text = CliRunner().invoke(app, ["status", "--out", str(tmp_path)]).output
    assert "by state: 1 deleted, 4 done, 1 failed" in text
    assert "failed gone-1 (Broken), 1 attempts: TransientError: 502 at entries[2]" in text
    assert "⚠ answer variants: 2 in 2 threads" in text


def test_status_is_read_only_and_needs_an_archive(tmp_path: Path) -> None:
    """status on a missing archive exits 2 and creates nothing; on an empty one it says so."""
    _register()
    res = CliRunner().invoke(app, ["status", "--out", str(tmp_path / "none")])
    assert res.exit_code == 2 and "no archive" in res.output + (res.stderr or "")
    assert not (tmp_path / "none").exists()
    Archive(tmp_path / "empty").close()
    with Archive(tmp_path / "empty", read_only=True) as arc:
        report = collect(arc)
    assert report["threads"] == 0 and report["last_run"] is None
    assert "last run: none" in render_text(report)
