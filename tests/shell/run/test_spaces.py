"""Spaces in a run: the combined listing, the per-author account folder, the index pages."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread.model import ListingRow, RenderResult
from pplx_archiver.errors import ForbiddenError
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.net.listing import Space
from pplx_archiver.shell.run.spaces import (
    SpaceAwareStore,
    SpaceCollector,
    SpacesHook,
    SpaceThreads,
    author_folder,
    render_space_page,
    space_pages_plan,
    space_record,
    write_space_pages,
)


def _item(uuid: str, author: str, updated: str = "2026-08-01T10:00:00.000001") -> dict[str, Any]:
    return {"uuid": uuid, "slug": uuid, "title": f"T {uuid}", "author_username": author,
            "last_query_datetime": updated}  # fmt: skip


def _space(slug: str, owner: str, contributors: list[str]) -> dict[str, Any]:
    return {"uuid": f"u-{slug}", "slug": slug, "title": f"Space {slug}", "description": "d",
            "instructions": "", "owner_user": {"username": owner},
            "contributor_users": [{"username": c} for c in contributors]}  # fmt: skip


class FakeApi:
    """Answers the space endpoints from tables; counts the calls."""

    def __init__(self, spaces: list[dict[str, Any]], threads: dict[str, list[dict[str, Any]]]):
        self.spaces = spaces
        self.threads = threads
        self.calls: list[str] = []

    async def get_json(
        self, path: str, params: Any = None, *, kind: str | None = None, auth_fatal: bool = False
    ) -> tuple[Any, bytes]:
        self.calls.append(path)
        if path.endswith("list_user_collections"):
            body: Any = self.spaces if params["offset"] == 0 else []
        elif path.endswith("get_collection"):
            slug = params["collection_slug"]
            if slug == "secret":
                raise ForbiddenError("not viewable", status=200, code="VIEW_COLLECTION_NOT_ALLOWED")
            body = next(s for s in self.spaces if s["slug"] == slug)
        else:
            items = self.threads.get(params["collection_slug"], [])
            body = items[params["offset"] :]
        return body, orjson.dumps(body)

    async def post_json(self, *args: Any, **kwargs: Any) -> tuple[Any, bytes]:
        raise AssertionError("no POST expected")


def _library(*ids: str) -> Any:
    async def rows() -> AsyncIterator[ListingRow]:
        for thread_id in ids:
            yield ListingRow(thread_id=thread_id)

    return rows


async def _collect(collector: SpaceCollector) -> list[str]:
    return [row.thread_id async for row in collector.rows()]


async def test_listing_puts_others_space_threads_first_and_lists_each_thread_once() -> None:
    """Others' space threads come first, own space threads only through the library, no dupes."""
    api = FakeApi(
        [_space("team", "ana", ["me"]), _space("mine", "me", [])],
        {"team": [_item("o1", "ana"), _item("m1", "me"), _item("o2", "bob")],
         "mine": [_item("m2", "me"), _item("o1", "ana")]},
    )  # fmt: skip
    collector = SpaceCollector(api, _library("m1", "m2", "m3", "o2"), own_username="me")
    assert await _collect(collector) == ["o1", "o2", "m1", "m2", "m3"]
    assert [len(s.rows) for s in collector.spaces] == [3, 2]
    assert collector.spaces[0].members == ("ana", "me")


async def test_unchanged_space_threads_are_left_out_of_an_incremental_listing() -> None:
    """The skip predicate drops space rows (they cannot trip the early stop), not library rows."""
    api = FakeApi([_space("team", "ana", [])], {"team": [_item("o1", "ana"), _item("o2", "ana")]})
    collector = SpaceCollector(
        api, _library("m1", "o1"), own_username="me", skip=lambda r: r.thread_id == "o1"
    )
    assert await _collect(collector) == ["o2", "m1"]


async def test_a_space_that_cannot_be_viewed_is_skipped() -> None:
    """A space answering VIEW_COLLECTION_NOT_ALLOWED is skipped; the others are listed."""
    api = FakeApi([_space("secret", "x", []), _space("team", "ana", [])],
                  {"team": [_item("o1", "ana")]})  # fmt: skip
    collector = SpaceCollector(api, _library(), own_username="me")
    assert await _collect(collector) == ["o1"]
    assert [s.space.slug for s in collector.spaces] == ["team"]


class RecordingStore:
    """Stands in for the archive: remembers the account each commit was made under."""

    def __init__(self) -> None:
        self.accounts: dict[str, str] = {}
        self.rows: dict[str, Any] = {}
        self.answers: list[Mapping[str, Any]] = []

    def stored_state(self, thread_uuid: str) -> Any:
        return None

    def commit(self, plan: ThreadCommit) -> Mapping[str, Any]:
        assert plan.listing is not None
        self.accounts[plan.listing.thread_id] = plan.account
        return {}

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None:
        raise AssertionError

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None:
        raise AssertionError

    def commit_then(self, plan: ThreadCommit, then: Callable[[Mapping[str, Any]], None]) -> None:
        then(self.commit(plan))

    def can_post(self) -> bool:
        return False

    def confirm_not_found(self, uuid: str, error: str, run_id: int, immediate: bool) -> bool:
        raise AssertionError

    def register_variants(self, records: Any, source: str, run_id: int | None = None) -> list[Any]:
        return []

    def kept_record(self, thread_uuid: str) -> dict[str, Any]:
        return {}

    def mode_memo(self, key: str) -> Any:
        return None

    def remember_modes(self, memos: Any, run_id: int) -> int:
        return 0

    def flush_done(self) -> int:
        return 0

    @property
    def unsynced(self) -> int:
        return 0

    def get(self, uuid: str) -> Any:
        return self.rows.get(uuid)


def _commit(row: ListingRow, account: str) -> ThreadCommit:
    res = RenderResult(row.thread_id, "search", "t", "search/x", {}, {})
    return ThreadCommit(account, res, b"[]", listing=row, run_id=1)


def test_others_threads_are_committed_under_their_sanitized_author() -> None:
    """Own threads keep the run's account folder; others' go under their author's, sanitized."""
    store = RecordingStore()
    collector = SpaceCollector(FakeApi([], {}), _library(), own_username="me")
    wrapped = SpaceAwareStore(store, collector)
    wrapped.commit(_commit(ListingRow("a", author="me"), "me"))
    wrapped.commit(_commit(ListingRow("b", author="../../etc/passwd"), "me"))
    wrapped.commit(_commit(ListingRow("c"), "me"))
    assert store.accounts == {"a": "me", "b": author_folder("../../etc/passwd"), "c": "me"}
    assert "/" not in store.accounts["b"] and ".." not in store.accounts["b"]
    wrapped.commit_then(_commit(ListingRow("d", author="ana"), "me"), store.answers.append)
    assert (store.accounts["d"], store.answers) == (author_folder("ana"), [{}])


def _entry(rows: list[ListingRow], **space: Any) -> SpaceThreads:
    values = {"uuid": "u1", "slug": "team", "title": "Team | notes", "description": "line1\nline2",
              "instructions": "be ```brief```", "owner": "ana"} | space  # fmt: skip
    return SpaceThreads(Space(**values), "ana", ("ana", "me"), tuple(rows))


@dataclasses.dataclass
class Row:
    status: str
    path: str | None


def test_page_links_archived_threads_and_keeps_the_structure() -> None:
    """The page links archived threads relatively, escapes cells and fences instructions."""
    store = RecordingStore()
    store.rows["t1"] = Row("done", "ana/search/2026-08-01_a b_t1")
    store.rows["t2"] = Row("failed", "ana/search/x")
    rows = [
        ListingRow("t1", title="Pipe | title", author="ana", updated_at="2026-08-02T00:00:00"),
        ListingRow("t2", title="Other", author="ana", updated_at="2026-08-01T00:00:00"),
        ListingRow("t3", title="New\nline", author="bob", updated_at="2026-08-03T00:00:00"),
    ]
    record = space_record(_entry(rows), store, "team.md")
    assert [t["uuid"] for t in record["threads"]] == ["t3", "t1", "t2"]  # newest first
    page = render_space_page(record)
    assert page.startswith("# Team | notes\n")
    assert "(../ana/search/2026-08-01_a%20b_t1/conversation.md)" in page
    assert "Pipe \\| title" in page and "New<br>line" in page
    assert "````\nbe ```brief```\n````\n" in page
    assert "| not archived |" in page and "| failed |" in page
    assert page.count("conversation.md") == 1


def test_pages_are_written_atomically_and_deterministically(tmp_path: Path) -> None:
    """Writing twice gives the same bytes and rewrites nothing; colliding slugs stay apart."""
    store = RecordingStore()
    spaces = [_entry([], uuid="u2", slug="a/b"), _entry([], uuid="u1", slug="a-b")]
    writer = Archive(tmp_path).writer
    plan = space_pages_plan(spaces, store)
    assert list(plan.files) == ["spaces/a-b.md", "spaces/a-b~u2.md", "spaces/spaces.json"]
    first = write_space_pages(writer, spaces, store)
    files = {p.name: p.read_bytes() for p in (tmp_path / "spaces").iterdir()}
    assert first == 3 and set(files) == {"a-b.md", "a-b~u2.md", "spaces.json"}
    assert space_pages_plan(list(reversed(spaces)), store) == plan
    assert write_space_pages(writer, list(reversed(spaces)), store) == 0
    assert {p.name: p.read_bytes() for p in (tmp_path / "spaces").iterdir()} == files
    doc = orjson.loads(files["spaces.json"])
    assert [s["slug"] for s in doc["spaces"]] == ["a-b", "a/b"]
    assert doc["spaces"][1]["page"] == "spaces/a-b~u2.md"


@pytest.mark.parametrize("incremental", [True, False])
async def test_hook_skips_unchanged_space_rows_only_when_incremental(incremental: bool) -> None:
    """The hook's listing drops space threads the archive holds unchanged on incremental runs."""

    class Archived(RecordingStore):
        def stored_state(self, thread_uuid: str) -> Any:
            from pplx_archiver.core.archive.plan import StoredState

            return (
                StoredState("done", "2026-08-01T10:00:00.000001") if thread_uuid == "o1" else None
            )

    api = FakeApi([_space("team", "ana", [])], {"team": [_item("o1", "ana"), _item("o2", "ana")]})
    hook = SpacesHook(api, Archived(), _library("m1"), own_username="me", incremental=incremental)
    listed = [row.thread_id async for row in hook.rows()]
    assert listed == (["o2", "m1"] if incremental else ["o1", "o2", "m1"])
