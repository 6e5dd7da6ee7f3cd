"""Asking as async functions: stream one answer, then the best-effort steps and the export.

``run_ask`` sends one ask (new thread or follow-up), feeds the stream into the pure
:class:`~pplx_archiver.core.stream.AskStream`, hands the growing answer to a view, then moves
the thread into a space and marks it read when asked to (failures there are warnings, kept in
``step_errors``), and archives the thread through the ``export`` run path. It returns the
record ``pplx-ask`` prints as its JSON line. Nothing is written to the archive before the
answer is complete, so an interrupted or failed ask leaves the archive as it was.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

import anyio
import httpx
import orjson

from pplx_archiver.core.asking import (
    ASK_PATH,
    PINNED_CONFIG,
    FollowUp,
    ModelTable,
    ask_body,
    follow_up_of,
    mode_of_entry,
    parse_models_config,
    resolve_models,
)
from pplx_archiver.core.stream import AskResult, AskStream
from pplx_archiver.errors import (
    AskIncompleteError,
    AskRateLimitedError,
    AskSessionError,
    AskTimeoutError,
    FetchError,
    PayloadError,
    PplxError,
    RateLimitedError,
)
from pplx_archiver.logconfig import get_logger
from pplx_archiver.settings import Settings
from pplx_archiver.shell.archive.fsutil import write_atomic
from pplx_archiver.shell.net.auth import open_session
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.run.pipeline import thread_id_from_arg

MODELS_CACHE = Path("index") / "config" / "models_config.json"
MODELS_MAX_AGE_S = 24 * 3600
MODELS_PATHS = ("/rest/models/config/v2", "/rest/models/config")

ASK_STARTED = "ASK_STARTED"
ASK_COMPLETED = "ASK_COMPLETED"
ASK_FAILED = "ASK_FAILED"
ASK_STEP_FAILED = "ASK_STEP_FAILED"
ASK_MODELS_FALLBACK = "ASK_MODELS_FALLBACK"
THREAD_MARKED_READ = "THREAD_MARKED_READ"
SPACE_CREATED = "SPACE_CREATED"

log = get_logger()


class AnswerView(Protocol):
    """Where the growing answer is shown (a terminal, a pipe, nowhere)."""

    def update(self, answer: str) -> None: ...

    def finish(self, result: AskResult) -> None: ...


class NoView:
    """Shows nothing (``--json``)."""

    def update(self, answer: str) -> None:
        return None

    def finish(self, result: AskResult) -> None:
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class AskOptions:
    """One ``pplx-ask ask`` invocation (None = not given)."""

    prompt: str
    mode: str | None = None
    models: tuple[str, ...] = ()
    space: str | None = None
    follow_up: str | None = None
    sources: tuple[str, ...] = ("web",)
    recency: str | None = None
    incognito: bool = False
    mark_read: bool = False
    export: bool = True
    timeout: float = 900.0
    with_answer: bool = False  # --json: the answer and sources go into the JSON line


@dataclasses.dataclass(frozen=True, slots=True)
class ExportOptions:
    """What ``pplx-export export THREAD`` passes to the run: the thread, refetched."""

    thread: list[str]
    force: bool = True


def utc_now() -> dt.datetime:
    """The current time (UTC)."""
    return dt.datetime.now(dt.UTC)


# --------------------------------------------------------------------------- models


@dataclasses.dataclass(frozen=True, slots=True)
class LoadedModels:
    """A model table and where it came from."""

    table: ModelTable
    source: str  # "live", "cache" or "pinned"
    age_s: float | None = None

    def describe(self) -> str:
        """``live``, ``cached 2 h ago`` or ``pinned fallback``."""
        if self.source == "cache" and self.age_s is not None:
            return f"cached {_age(self.age_s)} ago"
        return "pinned fallback (offline)" if self.source == "pinned" else self.source


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 7200:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} d"


def read_models_cache(out_dir: Path, now: dt.datetime) -> LoadedModels | None:
    """The cached models config of the archive (None when absent or unreadable)."""
    path = out_dir / MODELS_CACHE
    try:
        data = orjson.loads(path.read_bytes())
        fetched = dt.datetime.fromisoformat(data["fetched_at"])
        table = parse_models_config(data["config"], str(path))
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, PayloadError):
        return None
    return LoadedModels(table, "cache", max(0.0, (now - fetched).total_seconds()))


async def fetch_models(client: ApiClient, out_dir: Path, now: dt.datetime) -> LoadedModels:
    """The live models config; cached in the archive's config area."""
    decoded: Any = None
    for n, path in enumerate(MODELS_PATHS):
        try:
            decoded, _raw = await client.get_json(path, kind="models")
            break
        except FetchError:
            if n == len(MODELS_PATHS) - 1:
                raise
    table = parse_models_config(decoded)
    record = {"fetched_at": now.isoformat(), "config": decoded}
    write_atomic(out_dir / MODELS_CACHE, orjson.dumps(record) + b"\n")
    return LoadedModels(table, "live", 0.0)


async def load_models(
    client: ApiClient | None, out_dir: Path, *, refresh: bool, now: dt.datetime
) -> LoadedModels:
    """A fresh cache, else the live config, else any cache, else the pinned table."""
    cached = read_models_cache(out_dir, now)
    if not refresh and cached is not None and (cached.age_s or 0) < MODELS_MAX_AGE_S:
        return cached
    if client is not None:
        try:
            return await fetch_models(client, out_dir, now)
        except (FetchError, PayloadError) as exc:
            log.warning(ASK_MODELS_FALLBACK, error=str(exc), cached=cached is not None)
    if cached is not None:
        return cached
    return LoadedModels(parse_models_config(PINNED_CONFIG), "pinned")


# --------------------------------------------------------------------------- asking


async def stream_answer(
    client: ApiClient, body: dict[str, Any], view: AnswerView, limit_s: float
) -> tuple[AskResult, AskStream]:
    """Send the ask and read its stream to the end; raises the AskError family."""
    stream = AskStream()
    try:
        with anyio.fail_after(limit_s):
            async with client.stream_post(ASK_PATH, body, kind="ask") as response:
                ctype = response.headers.get("content-type", "").lower()
                try:
                    if "json" in ctype:  # a whole JSON body instead of a stream
                        payload = orjson.loads(await response.aread() or b"{}")
                        if isinstance(payload, dict):
                            stream.apply(payload)
                    else:
                        async for text in response.aiter_text():
                            if stream.feed(text):
                                view.update(stream.answer)
                    stream.close()
                except httpx.TimeoutException:
                    raise AskTimeoutError(
                        "the stream went silent for longer than the request timeout",
                        code="TIMEOUT",
                        thread_uuid=stream.meta.get("backend_uuid", ""),
                    ) from None
                except (httpx.HTTPError, orjson.JSONDecodeError) as exc:
                    raise AskIncompleteError(
                        f"the stream broke off ({type(exc).__name__}) before the answer completed",
                        code="INCOMPLETE",
                        thread_uuid=stream.meta.get("backend_uuid", ""),
                    ) from None
    except RateLimitedError as exc:  # HTTP 429 on the ask itself: the same as an in-band limit
        raise AskRateLimitedError(
            f"the service refused the ask: rate limit (HTTP {exc.status})", code="HTTP_429"
        ) from None
    except TimeoutError:
        raise AskTimeoutError(
            f"no complete answer within {limit_s:g} s (--timeout)",
            code="TIMEOUT",
            thread_uuid=stream.meta.get("backend_uuid", ""),
        ) from None
    result = stream.result()
    view.update(result.answer)
    return result, stream


async def _space_uuid(client: ApiClient, slug: str) -> str:
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


async def _best_effort(name: str, errors: list[dict[str, str]], step: Callable[[], Any]) -> bool:
    try:
        await step()
    except PplxError as exc:
        errors.append({"step": name, "error": str(exc)})
        log.warning(ASK_STEP_FAILED, step=name, error=str(exc))
        return False
    return True


async def _thread_context(client: ApiClient, thread_id: str) -> tuple[Any, str]:
    body, _ = await client.get_json(f"/rest/thread/{thread_id}", kind="thread")
    entries = body.get("entries") if isinstance(body, dict) else None
    first = entries[0] if isinstance(entries, list) and entries else {}
    context = first.get("context_uuid") if isinstance(first, dict) else None
    if not isinstance(context, str) or not context:
        raise PayloadError(f"thread {thread_id}.entries[0].context_uuid", "missing")
    return body, context


async def run_ask(
    settings: Settings,
    opts: AskOptions,
    *,
    view: AnswerView | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    report_out: IO[str] | None = None,
    handle_signals: bool = True,
    new_uuid: Callable[[], str] = lambda: str(uuid.uuid4()),
    now: Callable[[], dt.datetime] = utc_now,
) -> dict[str, Any]:
    """Ask, stream, do the best-effort steps, export; returns the JSON-line record."""
    view = view or NoView()
    step_errors: list[dict[str, str]] = []
    flags: dict[str, Any] = {
        "follow_up": bool(opts.follow_up),
        "incognito": opts.incognito,
        "space": opts.space,
        "moved_to_space": False,
        "mark_read": opts.mark_read,
        "marked_read": False,
    }
    async with open_session(settings, transport=transport) as (client, _info):
        models = await load_models(client, settings.out_dir, refresh=False, now=now())
        follow: FollowUp | None = None
        mode = opts.mode
        thread_id = ""
        if opts.follow_up:
            thread_id = thread_id_from_arg(opts.follow_up)
            body, _ctx = await _thread_context(client, thread_id)
            follow = follow_up_of(body, f"thread {thread_id}")
            mode = mode or mode_of_entry(body["entries"][-1]) or "search"
        choice = resolve_models(models.table, mode or "search", opts.models)
        request = ask_body(
            opts.prompt,
            choice,
            frontend_uuid=new_uuid(),
            frontend_context_uuid=new_uuid(),
            sources=opts.sources,
            recency=opts.recency,
            incognito=opts.incognito,
            follow_up=follow,
        )
        log.info(
            ASK_STARTED,
            mode=choice.mode,
            model=choice.model_preference,
            compare_models=list(choice.compare_models) or None,
            follow_up=bool(follow),
            prompt_chars=len(opts.prompt),
            models_source=models.source,
        )
        try:
            result, _stream = await stream_answer(client, request, view, opts.timeout)
        except PplxError as exc:
            log.warning(
                ASK_FAILED,
                error=str(exc),
                error_kind=type(exc).__name__,
                code=getattr(exc, "code", None) or None,
                thread_uuid=getattr(exc, "thread_uuid", None) or None,
            )
            raise
        thread_id = thread_id or result.thread_url_slug or result.backend_uuid
        if not thread_id:
            raise AskSessionError("the stream named no thread")
        log.info(
            ASK_COMPLETED,
            thread_uuid=thread_id,
            entry_uuid=result.backend_uuid,
            frames=result.frames,
            answer_chars=len(result.answer),
            sources=len(result.sources),
            early_final=result.early_final,
        )
        view.finish(result)
        context = result.context_uuid
        if opts.space:
            space = opts.space

            async def move() -> None:
                target = await _space_uuid(client, space)
                await client.post_json(
                    "/rest/collections/batch_move_threads",
                    {"context_uuids": [context], "target_collection_uuid": target},
                    kind="spaces",
                )

            flags["moved_to_space"] = await _best_effort("move_to_space", step_errors, move)
        if opts.mark_read:

            async def read() -> None:
                await mark_read(client, context, result.backend_uuid)

            flags["marked_read"] = await _best_effort("mark_read", step_errors, read)
    exported, folder = False, None
    if opts.export:
        exported, folder = await _export(
            settings, thread_id, step_errors, transport, report_out, handle_signals
        )
    origin = settings.base_url.rstrip("/")
    record: dict[str, Any] = {
        "thread_uuid": thread_id,
        "thread_url": f"{origin}/search/{result.thread_url_slug or thread_id}",
        "entry_uuid": result.backend_uuid,
        "context_uuid": context,
        "mode": choice.mode,
        "model": choice.model_preference,
        "compare_models": list(choice.compare_models),
        "folder": folder,
        "exported": exported,
        "flags": flags,
        "step_errors": step_errors,
    }
    if opts.with_answer:
        record["answer"] = result.answer
        record["sources"] = [{"title": s.title, "url": s.url} for s in result.sources]
    return record


async def _export(
    settings: Settings,
    thread_id: str,
    step_errors: list[dict[str, str]],
    transport: httpx.AsyncBaseTransport | None,
    report_out: IO[str] | None,
    handle_signals: bool,
) -> tuple[bool, str | None]:
    """Archive the thread through the ``export`` run path; (exported, folder)."""
    from pplx_archiver.shell.archive.store import Archive
    from pplx_archiver.shell.run.runner import run_command

    opts = ExportOptions(thread=[thread_id])
    try:
        summary = await run_command(
            settings,
            "export",
            opts,
            transport=transport,
            stdout=report_out or sys.stderr,
            handle_signals=handle_signals,
        )
    except PplxError as exc:
        if exc.exit_code == 4:  # interrupted: the run left the archive consistent
            raise
        step_errors.append({"step": "export", "error": str(exc)})
        log.warning(ASK_STEP_FAILED, step="export", error=str(exc))
        return False, None
    archive = Archive(settings.out_dir, read_only=True)
    try:
        row = archive.get(thread_id)
    finally:
        archive.close()
    if summary.failed or row is None or row.status != "done" or not row.path:
        error = (row.error if row is not None else None) or "the export did not archive it"
        step_errors.append({"step": "export", "error": error})
        log.warning(ASK_STEP_FAILED, step="export", error=error)
        return False, None
    return True, str(settings.out_dir / row.path)


# --------------------------------------------------------------------------- small commands


async def run_mark_read(
    settings: Settings, thread: str, *, transport: httpx.AsyncBaseTransport | None = None
) -> dict[str, Any]:
    """Mark one thread read; returns the JSON-line record."""
    thread_id = thread_id_from_arg(thread)
    async with open_session(settings, transport=transport) as (client, _info):
        _body, context = await _thread_context(client, thread_id)
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


async def run_models(
    settings: Settings,
    *,
    refresh: bool,
    transport: httpx.AsyncBaseTransport | None = None,
    now: Callable[[], dt.datetime] = utc_now,
) -> LoadedModels:
    """The model table for ``pplx-ask models``: cache unless --refresh; offline → fallback."""
    if not refresh:
        cached = read_models_cache(settings.out_dir, now())
        if cached is not None:
            return cached
    try:
        async with open_session(settings, transport=transport) as (client, _info):
            return await load_models(client, settings.out_dir, refresh=True, now=now())
    except PplxError as exc:  # offline, or no usable session: the cached or pinned table
        log.warning(ASK_MODELS_FALLBACK, error=str(exc))
        return await load_models(None, settings.out_dir, refresh=False, now=now())
