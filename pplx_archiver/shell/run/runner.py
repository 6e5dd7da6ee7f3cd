"""The archiving commands as async functions: session → store → listing → scheduler → summary.

``run_command`` is what ``batch``, ``sync``, ``export`` and ``sync-deleted`` run; it returns
the :class:`~pplx_archiver.shell.run.scheduler.RunSummary` and always ends with ``RUN_SUMMARY``.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import nullcontext
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import structlog

from pplx_archiver.core.findings.shrink import ListingShrink
from pplx_archiver.core.thread.layout import safe_component
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.errors import (
    ConfigError,
    IndexCorruptError,
    InterruptedRun,
    PplxError,
    exit_code_for,
)
from pplx_archiver.settings import Settings
from pplx_archiver.shell.archive.assets import open_assets
from pplx_archiver.shell.archive.index_schema import index_file_damage
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.net.auth import Credential, SessionInfo, open_session
from pplx_archiver.shell.net.listing import iter_threads
from pplx_archiver.shell.net.ratelimit import Clock, Sleep
from pplx_archiver.shell.run.coverage import listing_gap_reason
from pplx_archiver.shell.run.deletions import (
    ListingCheck,
    refuse_shrink,
    settle,
)
from pplx_archiver.shell.run.dry_run import dry_run_archive
from pplx_archiver.shell.run.pipeline import row_from_arg, thread_id_from_arg
from pplx_archiver.shell.run.progress import ProgressView, summary_text
from pplx_archiver.shell.run.scheduler import Run, RunOptions, RunSummary
from pplx_archiver.shell.run.spaces import SpacesHook
from pplx_archiver.shell.writer.offload import offload_for

log = structlog.get_logger()


def account_folder(info: SessionInfo) -> str:
    """The archive's account folder name for a session."""
    name = getattr(info, "username", None) or info.account_id or "default"
    return safe_component(str(name), fallback="default")


_SHORT_ID = re.compile(r"^[0-9a-f]{8}$")


def resolve_thread_arg(archive: Archive, arg: str) -> str:
    """A thread id from a command-line argument; an 8-hex-digit folder suffix is looked up.

    Folder names end in the first 8 characters of the thread's uuid; those alone are not an
    id the service knows, so they are resolved through the index (unknown or ambiguous: a
    usage error, before any request).
    """
    thread_id = thread_id_from_arg(arg)
    if not _SHORT_ID.match(thread_id):
        return thread_id
    matches = [row.uuid for row in archive.iter_threads() if row.uuid.startswith(thread_id)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ConfigError(
            f"{arg!r} looks like the short id of a thread folder, but no archived thread's "
            "uuid starts with it; pass the whole uuid (thread.json has it), a slug or a URL"
        )
    raise ConfigError(f"{arg!r} matches {len(matches)} archived threads; pass the whole uuid")


def _id_lister(archive: Archive, ids: list[str]) -> Callable[[], AsyncIterator[ListingRow]]:
    rows = [
        dataclasses.replace(row_from_arg(arg), thread_id=resolve_thread_arg(archive, arg))
        for arg in ids
    ]

    async def gen() -> AsyncIterator[ListingRow]:
        for row in rows:
            yield row

    return gen


async def run_command(
    settings: Settings,
    options: RunOptions,
    log_path: Path | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    stdout: IO[str] | None = None,
    handle_signals: bool = True,
    sleep: Sleep = anyio.sleep,
    clock: Clock = time.monotonic,
    credential: Credential | None = None,
) -> RunSummary:
    """Run the archiving command ``options`` asks for against the service named by ``settings``.

    ``credential`` is the session to use (one account of several); default: the settings'.

    ``sleep`` and ``clock`` pace every wait of the run: the API client's (rate-limit pauses,
    retry waits) and the CDN downloader's. Tests inject virtual time so a run with 15 s
    challenge pauses takes no real time; a wait left on the real clock would stall such a run.
    """
    out = stdout or sys.stdout
    command = options.command
    archive, lister_ids = _open_archive(settings, options)
    early_stop_guard = listing_gap_reason(archive, options.coverage())
    # sync --full / --force also compares the recorded hashes of every stored file.
    archive.deep_check = options.full or options.force
    run_id = 0 if archive.read_only else archive.begin_run(command)  # a dry run: no history
    state = _RunState(RunSummary(command=command))
    exit_code = 0
    try:
        async with open_session(
            settings, credential=credential, transport=transport, sleep=sleep, clock=clock
        ) as (client, info):
            if command == "sync-deleted":
                state.shrink = await _sync_deleted(client, archive, settings, options, info, out)
            else:
                ctx = _RunContext(settings, client, archive, options, run_id, out, transport,
                                  sleep, clock)  # fmt: skip
                await _archive(ctx, state, info, early_stop_guard, lister_ids, handle_signals)
        refuse_shrink(state.shrink, options.accept_shrink)
    except BaseException as exc:
        # Any error ending the run (a connection failure included) means the listing did
        # not complete: the next run must not stop early on its account.
        exit_code = exit_code_for(exc) or 1
        if isinstance(exc, InterruptedRun) and (state.summary.listed or state.summary.total):
            exc.reported = True  # the summary below says it: the console says it once
        raise
    finally:
        _finish(settings, archive, options, run_id, state, exit_code, out, log_path)
    return state.summary


@dataclasses.dataclass(slots=True)
class _RunState:
    """What the end of a run reports, whatever ended it."""

    summary: RunSummary
    listing_finished: bool = False
    shrink: ListingShrink | None = None  # the listing shrank (core/findings/shrink.py)


@dataclasses.dataclass(frozen=True, slots=True)
class _RunContext:
    settings: Settings
    client: Any
    archive: Archive
    options: RunOptions  # as asked; the run's own adds the account and settings
    run_id: int
    out: IO[str]
    transport: httpx.AsyncBaseTransport | None
    sleep: Sleep
    clock: Clock


def _open_archive(
    settings: Settings, options: RunOptions
) -> tuple[Archive, Callable[[], AsyncIterator[ListingRow]] | None]:
    """The run's archive, and the lister of the thread ids given on the command line."""
    index_file = settings.out_dir / "index" / "archive.sqlite"
    damage = index_file_damage(index_file)
    folders = damage is not None and any(settings.out_dir.glob("*/*/*/thread.json"))
    if damage is not None and (folders or damage.startswith(("not", "a foreign"))):
        # An empty or foreign index would look like a new archive: everything fetched again.
        raise IndexCorruptError(
            f"{index_file} is {damage} but the archive holds thread folders; run "
            f"`pplx-export reindex --out {settings.out_dir}` to rebuild it (a run now would "
            "fetch the whole account again)"
            if folders
            else f"{index_file} is {damage}: not this program's index; move it away"
        )
    if options.dry_run:
        archive = dry_run_archive(settings.out_dir)  # read-only: nothing is written
    else:
        archive = Archive(settings.out_dir, group_commit=True)
    ids = options.thread_ids
    try:
        return archive, (_id_lister(archive, list(ids)) if ids else None)
    except PplxError:
        archive.close()
        raise


async def _archive(
    ctx: _RunContext,
    state: _RunState,
    info: SessionInfo,
    early_stop_guard: str | None,
    lister_ids: Callable[[], AsyncIterator[ListingRow]] | None,
    handle_signals: bool,
) -> None:
    """List, fetch and write the account's threads (``batch``, ``sync``, ``export``)."""
    settings, client, archive = ctx.settings, ctx.client, ctx.archive
    options = ctx.options.for_account(settings, account_folder(info))
    if early_stop_guard and options.early_stop and not options.lists_everything:
        # Threads older than the unchanged ones may be missing: list everything.
        log.info("EARLY_STOP_DISABLED", reason=early_stop_guard)
        options = dataclasses.replace(options, early_stop=0)
    lister = lister_ids or _account_lister(client, settings)
    # --include-spaces (shell/run/spaces.py): others' space threads, then the library.
    spaces: SpacesHook | None = None
    if options.include_spaces and lister_ids is None:
        spaces = SpacesHook(client, archive, lister, own_username=info.username,
                            incremental=not options.lists_everything and options.early_stop > 0,
                            force=options.force)  # fmt: skip
        lister = spaces.rows

    def counters() -> dict[str, int]:
        stats = client.stats()
        return {"retries": stats.retries, "rate_limited": stats.rate_limited}

    show_bar = settings.log_format != "json" and sys.stderr.isatty()
    with ProgressView(enabled=show_bar, counters=counters) as view:

        def on_plan(summary: RunSummary) -> None:
            _print(ctx.out, _plan_line(summary, options.dry_run))

        # A first archive of the account: the run is as large as the account, so a writer
        # process (writer_process = auto) starts at once instead of after 150 threads. With
        # spaces its store is wrapped too: others' threads are committed under their author.
        first = not options.dry_run and not any(archive.index.counts().values())
        offloader = offload_for(archive, settings.writer_process, early=first)
        offload = spaces.offload(offloader) if spaces is not None else offloader
        run = Run(client, spaces.store if spaces is not None else archive, lister, options,
                  run_id=ctx.run_id, progress=view.update, handle_signals=handle_signals,
                  on_plan=on_plan, offload=offload)  # fmt: skip
        try:
            async with _assets(ctx, options.dry_run):
                await run.execute()
        finally:
            state.summary = run.summary
            state.listing_finished = run.listing_finished
    if spaces is not None and not options.dry_run:  # --include-spaces: index pages
        spaces.write_pages(archive.writer)
    if not options.dry_run:
        state.shrink = await _settle_listing(ctx, run, options.account, lister_ids is not None)


async def _settle_listing(
    ctx: _RunContext, run: Run, account: str, given_ids: bool
) -> ListingShrink | None:
    """The shrink guard on a listing read to its very end, then the deletion check."""
    check = ListingCheck(
        account=account,
        listed=run.summary.listed,
        seen=run.listed_ids | run.listed_known,
        complete=run.listing_exhausted and not given_ids,
        run_id=ctx.run_id,
        was_known=run.listed_known,
        check_deleted=ctx.options.check_deleted,
        accept_shrink=ctx.options.accept_shrink,
    )
    return await settle(ctx.client, ctx.archive, check, ctx.out)


def _assets(ctx: _RunContext, dry_run: bool) -> Any:
    """Issue 8: the workers fetch each thread's assets in the same pass (a dry run fetches
    none, and leaves the archive's staging folder alone)."""
    if dry_run:
        return nullcontext()
    return open_assets(ctx.settings, ctx.client, ctx.archive, transport=ctx.transport,
                       sleep=ctx.sleep, clock=ctx.clock, shared=ctx.client.budget())  # fmt: skip


def _account_lister(client: Any, settings: Settings) -> Callable[[], AsyncIterator[ListingRow]]:
    def lister() -> AsyncIterator[ListingRow]:
        return iter_threads(client, lister=settings.lister, graphql_hashes=settings.graphql_hashes)

    return lister


def _finish(
    settings: Settings,
    archive: Archive,
    options: RunOptions,
    run_id: int,
    state: _RunState,
    exit_code: int,
    out: IO[str],
    log_path: Path | None,
) -> None:
    """End the run: ``RUN_SUMMARY`` logged and recorded, the archive closed, the summary shown."""
    summary = state.summary
    if (summary.failed or summary.incomplete) and not exit_code:
        exit_code = 1
    complete = state.listing_finished and _listing_complete(summary, options, exit_code)
    event = summary.as_event() | {
        "exit_code": exit_code,
        "dry_run": options.dry_run,
        "listing_complete": complete,
        **options.coverage(),
    }
    if state.shrink is not None:
        event["listing_shrank"] = state.shrink.as_event() | {"accepted": options.accept_shrink}
    log.info("RUN_SUMMARY", **event)
    if run_id:
        archive.finish_run(run_id, event)
    archive.close()
    if summary.listed or summary.total:
        out.write(summary_text(summary, out_dir=str(settings.out_dir), log_file=log_path) + "\n")


def _listing_complete(summary: RunSummary, options: RunOptions, exit_code: int) -> bool:
    """True when the run planned its whole listing and processed every planned thread."""
    return (
        exit_code in (0, 1)
        and not summary.interrupted
        and options.limit is None
        and not options.thread_ids
        and summary.done >= summary.to_fetch
    )


async def _sync_deleted(
    client: Any,
    archive: Archive,
    settings: Settings,
    options: RunOptions,
    info: SessionInfo,
    out: IO[str],
) -> ListingShrink | None:
    """List everything, find archived threads missing from it, confirm them when online."""
    listed: set[str] = set()
    rows = 0
    async for row in iter_threads(
        client, lister=settings.lister, graphql_hashes=settings.graphql_hashes
    ):
        rows += 1
        listed.update((row.thread_id, row.key))
    check = ListingCheck(account=account_folder(info), listed=rows, seen=listed, complete=True,
                         check_deleted=True, online=options.online,
                         accept_shrink=options.accept_shrink)  # fmt: skip
    return await settle(client, archive, check, out)


def _print(out: IO[str], line: str) -> None:
    out.write(line + "\n")
    out.flush()


def _plan_line(summary: RunSummary, dry_run: bool) -> str:
    counts = ", ".join(f"{n} {name}" for name, n in summary.plan.items())
    tail = " (dry run: nothing fetched)" if dry_run else f" → fetching {summary.to_fetch}"
    return f"plan: {counts}{tail}"
