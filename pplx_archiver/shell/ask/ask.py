"""Asking as async functions: stream one answer, then the best-effort steps and the export.

``run_ask`` sends one ask (new thread or follow-up), feeds the stream into the pure
:class:`~pplx_archiver.core.ask.stream.AskStream`, hands the growing answer to a view, then moves
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
from typing import IO, Any, Protocol

import anyio
import httpx
import orjson

from pplx_archiver.core.ask.asking import (
    ASK_PATH,
    FollowUp,
    ModelChoice,
    ask_body,
    follow_up_members,
    follow_up_of,
    mode_of_entry,
    refuse_computer_follow_up,
    resolve_models,
)
from pplx_archiver.core.ask.stream import AskResult, AskStream
from pplx_archiver.core.thread import mode_table
from pplx_archiver.errors import (
    AskIncompleteError,
    AskRateLimitedError,
    AskSessionError,
    AskTimeoutError,
    PplxError,
    RateLimitedError,
)
from pplx_archiver.logconfig import get_logger
from pplx_archiver.settings import Settings
from pplx_archiver.shell.ask.ask_models import LoadedModels, load_models, utc_now
from pplx_archiver.shell.ask.ask_models import run_models as run_models  # `pplx-ask models`
from pplx_archiver.shell.ask.ask_steps import after_answer, step_failed, thread_context
from pplx_archiver.shell.ask.ask_steps import run_mark_read as run_mark_read  # re-exported
from pplx_archiver.shell.ask.ask_steps import run_space_create as run_space_create
from pplx_archiver.shell.net.auth import open_session
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.run.pipeline import thread_id_from_arg
from pplx_archiver.shell.run.run_types import RunOptions

ASK_STARTED = "ASK_STARTED"
ASK_COMPLETED = "ASK_COMPLETED"
ASK_FAILED = "ASK_FAILED"

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


async def _request(
    client: ApiClient, opts: AskOptions, models: LoadedModels, new_uuid: Callable[[], str]
) -> tuple[dict[str, Any], ModelChoice, str, bool]:
    """The ask body, the models chosen, the thread followed up ("" = new) and whether it is."""
    follow: FollowUp | None = None
    mode = opts.mode
    chosen = opts.models
    thread_id = ""
    if opts.follow_up:
        thread_id = thread_id_from_arg(opts.follow_up)
        body, _ctx = await thread_context(client, thread_id)
        refuse_computer_follow_up(body, thread_id)
        follow = follow_up_of(body, f"thread {thread_id}")
        mode = mode or mode_of_entry(body["entries"][-1]) or mode_table.VIEWS.default
        if mode == "council" and not chosen:
            chosen = follow_up_members(models.table, body)  # the thread's own members
    choice = resolve_models(models.table, mode or mode_table.VIEWS.default, chosen)
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
    return request, choice, thread_id, follow is not None


async def _answer(
    client: ApiClient, request: dict[str, Any], view: AnswerView, limit_s: float
) -> AskResult:
    """Stream the answer, logging a failure before it propagates."""
    try:
        result, _stream = await stream_answer(client, request, view, limit_s)
    except PplxError as exc:
        log.warning(
            ASK_FAILED,
            error=str(exc),
            error_kind=type(exc).__name__,
            code=getattr(exc, "code", None) or None,
            thread_uuid=getattr(exc, "thread_uuid", None) or None,
        )
        raise
    return result


def _record(
    settings: Settings,
    opts: AskOptions,
    result: AskResult,
    choice: ModelChoice,
    thread_id: str,
    exported: tuple[bool, str | None],
    flags: dict[str, Any],
    step_errors: list[dict[str, str]],
) -> dict[str, Any]:
    """The JSON line ``pplx-ask ask`` prints."""
    origin = settings.base_url.rstrip("/")
    record: dict[str, Any] = {
        "thread_uuid": thread_id,
        "thread_url": f"{origin}/search/{result.thread_url_slug or thread_id}",
        "entry_uuid": result.backend_uuid,
        "context_uuid": result.context_uuid,
        "mode": choice.mode,
        "model": choice.model_preference,
        "compare_models": list(choice.compare_models),
        "folder": exported[1],
        "exported": exported[0],
        "flags": flags,
        "step_errors": step_errors,
    }
    if opts.with_answer:
        record["answer"] = result.answer
        record["sources"] = [{"title": s.title, "url": s.url} for s in result.sources]
    return record


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
        request, choice, thread_id, follow = await _request(client, opts, models, new_uuid)
        log.info(
            ASK_STARTED,
            mode=choice.mode,
            model=choice.model_preference,
            compare_models=list(choice.compare_models) or None,
            follow_up=follow,
            prompt_chars=len(opts.prompt),
            models_source=models.source,
        )
        result = await _answer(client, request, view, opts.timeout)
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
        await after_answer(client, opts.space, opts.mark_read, result, flags, step_errors)
    exported: tuple[bool, str | None] = (False, None)
    if opts.export:
        exported = await _export(
            settings, thread_id, step_errors, transport, report_out, handle_signals
        )
    return _record(settings, opts, result, choice, thread_id, exported, flags, step_errors)


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

    options = RunOptions(command="export", thread_ids=(thread_id,), force=True)
    try:
        summary = await run_command(
            settings,
            options,
            transport=transport,
            stdout=report_out or sys.stderr,
            handle_signals=handle_signals,
        )
    except PplxError as exc:
        if exc.exit_code == 4:  # interrupted: the run left the archive consistent
            raise
        step_failed(step_errors, "export", str(exc))
        return False, None
    archive = Archive(settings.out_dir, read_only=True)
    try:
        row = archive.get(thread_id)
    finally:
        archive.close()
    if summary.failed or row is None or row.status != "done" or not row.path:
        error = (row.error if row is not None else None) or "the export did not archive it"
        step_failed(step_errors, "export", error)
        return False, None
    return True, str(settings.out_dir / row.path)
