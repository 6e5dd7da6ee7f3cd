"""Space pages are pure: same spaces and stored threads, same bytes; names never collide."""

from __future__ import annotations

import orjson

from pplx_archiver.core.spaces.space_pages import SpaceInfo, StoredThread, space_files
from pplx_archiver.core.thread.model import ListingRow


def test_space_files_are_deterministic_and_link_only_archived_threads() -> None:
    rows = (
        ListingRow("t1", title="One", updated_at="2026-08-01T00:00:00"),
        ListingRow("t2", title="Two", updated_at="2026-08-02T00:00:00"),
    )
    spaces = [
        SpaceInfo("u2", "team", "Team B", rows=rows),
        SpaceInfo("u1", "team", "Team A", owner="ana", members=("ana",)),
    ]
    stored = {"t1": StoredThread("done", "a/search/one"), "t2": StoredThread("failed", "a/x")}
    files = space_files(spaces, stored)
    assert files == space_files(list(reversed(spaces)), stored)
    assert list(files) == ["spaces/team.md", "spaces/team~u2.md", "spaces/spaces.json"]
    page = files["spaces/team~u2.md"].decode()
    assert "(../a/search/one/conversation.md)" in page and page.count("conversation.md") == 1
    doc = orjson.loads(files["spaces/spaces.json"])
    assert [t["uuid"] for t in doc["spaces"][1]["threads"]] == ["t2", "t1"]
