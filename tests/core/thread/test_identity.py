"""Identity of threads addressed by an older text slug: filed under the thread's own uuid.

The index key, ``thread.json`` ``uuid`` and the folder suffix come from the thread's uuid in
the payload (first entry's ``backend_uuid``, else ``uuid``, else ``context_uuid``); the slug
stays what the thread is addressed by (``thread.json`` ``slug``, the URL). The listing gives
the same uuid, so the planner finds the thread again, and a thread filed under its slug by an
older release is re-keyed when it is next committed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import anyio
import orjson

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread.model import ListingRow, RawPage, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.net.listing import row_from_graphql, row_from_rest
from pplx_archiver.shell.run.pipeline import check_identity
from pplx_archiver.shell.run.scheduler import Run, RunOptions
from tests.commit_door import commit_thread
from tests.core import builders as b

UUID = "d236db28-526f-49a1-9a21-faa33c3ad928"
SLUG = "what-is-x-Ab3dE5fG7hI9jK1lM3nO5p"
CTX = dataclasses.replace(b.CTX, account="me")


def _input(**entry_fields: Any) -> ThreadInput:
    entry = b.entry(UUID, 1, text=[b.final_step("A.")], thread_url_slug=SLUG, **entry_fields)
    entry["uuid"] = "frontend-1"
    page = RawPage({}, b.page([entry]))
    row = ListingRow(thread_id=SLUG, slug=SLUG, uuid=UUID, updated_at=b.ts(9))
    return ThreadInput(SLUG, (page,), listing=row)


def test_text_slug_thread_is_filed_under_its_uuid() -> None:
    inp = _input()
    result = render_thread(inp, CTX)
    assert result.thread_uuid == UUID  # the index key
    assert (result.record["uuid"], result.record["slug"]) == (UUID, SLUG)
    assert result.record["url"].endswith(f"/search/{SLUG}")
    assert result.dir_name.endswith("_d236db28")
    assert {f.fields["thread_uuid"] for f in result.findings} <= {UUID}
    assert inp.listing is not None and inp.listing.key == UUID
    check_identity(inp.listing, result.thread_uuid, inp.plain_pages)  # accepted


def test_context_uuid_when_no_entry_uuid_is_one() -> None:
    """Without a uuid-shaped entry id the thread's context uuid is its key."""
    ctx = "0f0e0d0c-1111-4222-8333-444455556666"
    entry = b.entry("e1", 1, text=[b.final_step("A.")], thread_url_slug=SLUG, context_uuid=ctx)
    result = render_thread(ThreadInput(SLUG, (RawPage({}, b.page([entry])),)), CTX)
    assert (result.thread_uuid, result.record["uuid"], result.record["slug"]) == (ctx, ctx, SLUG)


def test_listing_rows_carry_the_thread_uuid() -> None:
    """REST ``uuid`` / GraphQL ``entryId`` are the key of a text-slug row; a uuid slug is its
    own key."""
    rest = row_from_rest({"uuid": UUID, "slug": SLUG, "title": "x"})
    assert rest is not None and (rest.thread_id, rest.key) == (SLUG, UUID)
    graphql = row_from_graphql({"slug": SLUG, "entryId": UUID})
    assert graphql is not None and graphql.key == UUID
    today = row_from_rest({"uuid": UUID, "slug": UUID})
    assert today is not None and today.key == UUID
    assert ListingRow(thread_id=SLUG).key == SLUG  # nothing better known


def test_thread_filed_under_its_slug_is_rekeyed_on_commit(tmp_path: Path) -> None:
    """An archive of an older release filed the thread under its slug: the next commit moves
    the row (and its folder claim) to the uuid instead of making a second copy."""
    inp = _input()
    assert inp.listing is not None
    new = render_thread(inp, CTX)
    old_record = {**new.record, "uuid": SLUG}
    old = dataclasses.replace(new, thread_uuid=SLUG, record=old_record)
    raw = orjson.dumps({"pages": []})
    with Archive(tmp_path) as arc:
        first = commit_thread(arc, "me", old, raw, None, b.ts(9), listing=inp.listing)
        plan = ThreadCommit(
            account="me",
            result=new,
            raw_entries=raw,
            raw_blocks=None,
            listing=inp.listing,
            listing_updated_at=inp.listing.updated_at,
            run_id=1,
        )
        fields = arc.commit(plan)
        assert arc.get(SLUG) is None
        row = arc.get(UUID)
        assert row is not None and row.status == "done" and row.path == first.path
        assert fields["path"] == first.path
        assert [r.uuid for r in arc.iter_threads()] == [UUID]


class _Api:
    """Answers ``GET /rest/thread/<slug>`` with one page; counts the thread fetches."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.fetches = 0

    async def get_json(self, path: str, params: Any = None) -> tuple[Any, bytes]:
        assert path == f"/rest/thread/{SLUG}"
        self.fetches += 1
        return orjson.loads(self.body), self.body


def _sync(out: Path, api: _Api, updated: str) -> Any:
    row = ListingRow(thread_id=SLUG, title="Thread one", slug=SLUG, uuid=UUID, updated_at=updated)

    async def lister() -> Any:
        yield row

    async def job() -> Any:
        with Archive(out) as archive:
            run = Run(api, archive, lister, RunOptions(command="sync"), handle_signals=False)
            return await run.execute()

    return anyio.run(job)


def test_sync_finds_a_text_slug_thread_again_under_its_uuid(tmp_path: Path) -> None:
    """The second sync of an unchanged text-slug thread fetches nothing; the index holds the
    thread once, under its uuid, and its folder once."""
    entry = b.entry(UUID, 1, text=[b.final_step("A.")], thread_url_slug=SLUG)
    api = _Api(orjson.dumps(b.page([entry])))
    first = _sync(tmp_path, api, b.ts(9))
    assert (first.failed, api.fetches) == (0, 1)
    second = _sync(tmp_path, api, b.ts(9))
    assert (second.unchanged, api.fetches) == (1, 1)
    with Archive(tmp_path) as arc:
        assert [r.uuid for r in arc.iter_threads()] == [UUID]
    assert len(list(tmp_path.rglob("thread.json"))) == 1
