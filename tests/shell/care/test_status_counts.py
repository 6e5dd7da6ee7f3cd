"""status counts by SQL aggregates and reads only the rows it names: the same figures as a
count over every row."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care.status import collect
from tests.shell.archive_builders import build


def test_aggregates_agree_with_every_row(tmp_path: Path) -> None:
    """States, modes (an empty mode counts as unknown), tombstones, degraded and interrupted
    threads: the report agrees with a count over every index row."""
    build(tmp_path, 6)
    with Archive(tmp_path) as archive:
        uuids = [row.uuid for row in archive.iter_threads("done")]
        archive.index.upsert(uuids[0], "me", mode="")
        archive.index.upsert(uuids[1], "me", mode="research", degraded_turns=2)
        archive.index.upsert(uuids[2], "me", remote_deleted="2026-01-02T00:00:00Z")
        archive.index.upsert(uuids[3], "me", interruptions=[{"location": "t", "kind": "cut"}])
        archive.index.upsert(uuids[4], "me", interruptions=[])
        archive.mark_failed("gone-1", "TransientError: 502", None, title="Broken")
        archive.mark_terminal("gone-2", "expired")
        report = collect(archive)
        rows = list(archive.iter_threads())
    assert report["by_state"] == dict(Counter(r.status for r in rows))
    done = [r for r in rows if r.status == "done"]
    assert report["by_mode"] == dict(Counter(r.mode or "unknown" for r in done))
    assert report["by_mode"]["unknown"] == 1 and report["by_mode"]["research"] == 1
    assert report["remote_deleted"] == sum(1 for r in rows if r.remote_deleted) == 1
    assert report["degraded_turns"] == 2 and report["degraded_threads"] == 1
    assert report["interruptions"] == 1
    assert report["interrupted_threads"][0]["thread_uuid"] == uuids[3]
    assert [f["thread_uuid"] for f in report["failures"]] == ["gone-1"]
    assert report["tombstones_count"] == 1 and report["pending_retry"] == 1
