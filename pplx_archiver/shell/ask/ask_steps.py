"""The steps around an ask: follow-up context, moving into a space, marking read, spaces.

Best-effort steps (``--space``, ``--mark-read``, the export) never fail the ask: a failure is
a warning and an entry of ``step_errors`` in the ask's JSON line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from pplx_archiver.core.ask.stream import AskResult
from pplx_archiver.errors import FetchError, PayloadError, PplxError
from pplx_archiver.logconfig import get_logger
from pplx_archiver.settings import Settings
from pplx_archiver.shell.net.auth import open_session
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.run.pipeline import thread_id_from_arg

ASK_STEP_FAILED = "ASK_STEP_FAILED"
THREAD_MARKED_READ = "THREAD_MARKED_READ"
SPACE_CREATED = "SPACE_CREATED"

log = get_logger()


def step_failed(errors: list[dict[str, str]], name: str, error: str) -> None:
    """Record a failed best-effort step and warn about it."""
    errors.append({"step": name, "error": error})
    log.warning(ASK_STEP_FAILED, step=name, error=error)


async def space_uuid(client: ApiClient, slug: str) -> str:
    """The uuid of the space with ``slug``."""
    decoded, _ = await client.get_json(
        "/rest/collections/get_collection", {"collection_slug": slug}, kind="spaces"
    )
    found = decoded.get("uuid") if isinstance(decoded, dict) else None
    if not isinstance(found, str) or not found:
        raise FetchError(f"space {slug!r} not found or not accessible")
    return found


async def mark_read(client: ApiClient, context_uuid: str, entry_uuid: str = "") -> None:
    """``POST /rest/thread/mark_viewed`` for one thread."""
    body = {"context_uuid": context_uuid}
    if entry_uuid:
        body["entry_uuid"] = entry_uuid
    await client.post_json("/rest/thread/mark_viewed", body, kind="mark_viewed")


async def best_effort(name: str, errors: list[dict[str, str]], step: Callable[[], Any]) -> bool:
    """Run one best-effort step; False (and a recorded error) when it fails."""
    try:
        await step()
    except PplxError as exc:
        step_failed(errors, name, str(exc))
        return False
    return True


async def thread_context(client: ApiClient, thread_id: str) -> tuple[Any, str]:
    """The first page of a thread and its context uuid."""
    body, _ = await client.get_json(f"/rest/thread/{thread_id}", kind="thread")
    entries = body.get("entries") if isinstance(body, dict) else None
    first = entries[0] if isinstance(entries, list) and entries else {}
    context = first.get("context_uuid") if isinstance(first, dict) else None
    if not isinstance(context, str) or not context:
        raise PayloadError(f"thread {thread_id}.entries[0].context_uuid", "missing")
    return body, context


async def after_answer(
    client: ApiClient,
    space: str | None,
    read: bool,
    result: AskResult,
    flags: dict[str, Any],
    step_errors: list[dict[str, str]],
) -> None:
    """The best-effort steps: move the thread into the space, mark it read."""
    context = result.context_uuid
    if space:
        slug = space

        async def move() -> None:
            target = await space_uuid(client, slug)
            await client.post_json(
                "/rest/collections/batch_move_threads",
                {"context_uuids": [context], "target_collection_uuid": target},
                kind="spaces",
            )

        flags["moved_to_space"] = await best_effort("move_to_space", step_errors, move)
    if read:

        async def mark() -> None:
            await mark_read(client, context, result.backend_uuid)

        flags["marked_read"] = await best_effort("mark_read", step_errors, mark)


async def run_mark_read(
    settings: Settings, thread: str, *, transport: httpx.AsyncBaseTransport | None = None
) -> dict[str, Any]:
    """Mark one thread read; returns the JSON-line record."""
    thread_id = thread_id_from_arg(thread)
    async with open_session(settings, transport=transport) as (client, _info):
        _body, context = await thread_context(client, thread_id)
        await mark_read(client, context)
    log.info(THREAD_MARKED_READ, thread_uuid=thread_id)
    return {"thread_uuid": thread_id, "context_uuid": context, "marked_read": True}


async def run_space_create(
    settings: Settings,
    title: str,
    *,
    description: str = "",
    transport: httpx.AsyncBaseTransport | None = None,
) -> dict[str, Any]:
    """Create a space; returns its uuid, slug and title."""
    body = {
        "title": title,
        "description": description,
        "emoji": "",
        "instructions": "",
        "access": 1,
    }
    async with open_session(settings, transport=transport) as (client, _info):
        decoded, _ = await client.post_json(
            "/rest/collections/create_collection", body, kind="spaces"
        )
    uuid_ = decoded.get("uuid") if isinstance(decoded, dict) else None
    if not isinstance(uuid_, str) or not uuid_:
        raise PayloadError("create_collection.uuid", "the answer names no space")
    slug = decoded.get("slug")
    log.info(SPACE_CREATED, space_uuid=uuid_, slug=slug)
    return {"uuid": uuid_, "slug": slug, "title": decoded.get("title", title)}
