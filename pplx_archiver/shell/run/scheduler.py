"""The run: listing streams into bounded workers; one writer commits each thread atomically.

Shape (one task group per run)::

    listing ──rows──► N fetch workers ──fetched──► writer ──► store (files, index, registry)
      (plan: skip unchanged, early stop)       (render core)         logs / progress

Memory stays flat: the streams are bounded, nothing holds the whole listing. On SIGINT or
SIGTERM the listing and the workers are cancelled (threads are written only by the writer,
whole), the writer finishes what is queued, and the run ends with ``InterruptedRun``.
"""

from __future__ import annotations

import dataclasses
import signal
import time
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

import anyio
import structlog
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from pplx_archiver.core.archive import plan as planning
from pplx_archiver.core.findings.shrink import KNOWN_STATUSES
from pplx_archiver.core.thread.model import ListingRow, RenderContext
from pplx_archiver.errors import (
    AuthError,
    ChallengeAbort,
    FetchError,
    InterruptedRun,
    NotFoundError,
    PayloadError,
    TerminalThreadError,
)
from pplx_archiver.shell.archive.commit import missing
from pplx_archiver.shell.run.filters import RunFilters
from pplx_archiver.shell.run.pipeline import FetchedThread, JsonApi, fetch_thread
from pplx_archiver.shell.run.run_types import (
    GROUP_COMMIT_SECONDS,
    GROUP_COMMIT_SIZE,
    ClosingStore,
    Lister,
    Offload,
    ProgressHook,
    RunOptions,
    RunSummary,
    Store,
    first_error,
)

__all__ = ["Run", "RunOptions", "RunSummary", "Store"]

log = structlog.get_logger()


@dataclasses.dataclass(slots=True)
class _Outcome:
    row: ListingRow
    fetched: FetchedThread | None = None
    error: BaseException | None = None


@dataclasses.dataclass(slots=True)
class _Archived:
    """What the run still needs of a thread once its commit is answered (not its files:
    a writer process may hold a window of commits unanswered)."""

    thread_uuid: str
    mode: str
    title: str
    requests: int
    missing: Mapping[str, Any] | None  # what an incomplete thread lacks (None: complete)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Run:
    """One archiving run over a listing; see the module docstring for its shape."""

    def __init__(
        self,
        api: JsonApi,
        store: Store,
        lister: Lister,
        options: RunOptions,
        *,
        run_id: int = 0,
        progress: ProgressHook | None = None,
        handle_signals: bool = True,
        on_plan: Callable[[RunSummary], None] | None = None,
        offload: Offload | None = None,
    ) -> None:
        self.api = api
        self.store = store
        self.lister = lister
        self.options = options
        self.run_id = run_id
        self.summary = RunSummary(command=options.command)
        self.progress = progress or (lambda _kind, _summary: None)
        self.handle_signals = handle_signals
        self.on_plan = on_plan or (lambda _summary: None)
        self._offload = offload
        self._fatal: BaseException | None = None
        self._decisions: Counter[str] = Counter()  # decision -> threads listed with it
        self._filters = RunFilters(options, self.summary)  # --mode, --since
        self.listed_ids: set[str] = set()
        # True once the listing was read to its end or to a legitimate early stop: only
        # then may the next run's early stop trust this run (issue 13).
        self.listing_finished = False
        self.listing_exhausted = False  # read to its very end: no early stop, no --limit
        self.listed_known: set[str] = set()  # listed threads the index holds (shrink guard)
        self._planned = False  # the listing has ended: summary.to_fetch is final

    # -- listing ---------------------------------------------------------------------------
    def _stored_key(self, row: ListingRow) -> str:
        """The key the archive knows a thread by: its uuid (:attr:`ListingRow.key`), or the
        text slug an older thread was filed under before (re-keyed when it is committed)."""
        moved = row.key != row.thread_id and self.store.stored_state(row.key) is None
        if moved and self.store.stored_state(row.thread_id) is not None:
            return row.thread_id
        return row.key

    async def _produce(self, send: ObjectSendStream[ListingRow]) -> None:
        """List (newest first, with the early stop) and send each thread to fetch on at once.

        Nothing holds the listing: a row to fetch goes into the bounded stream as soon as it is
        decided (the listing waits while the workers are busy), the others are only counted.
        """
        stop = planning.EarlyStop(0 if self.options.lists_everything else self.options.early_stop)
        async with send:
            async for row in self.lister():
                self.summary.listed += 1
                self.progress("listed", self.summary)  # the listing phase shows too
                if self.options.keep_listed_ids:
                    self.listed_ids.update((row.thread_id, row.key))
                key = self._stored_key(row)
                stored = self.store.stored_state(key)
                if stored is not None and stored.status in KNOWN_STATUSES:
                    self.listed_known.add(key)
                decision = planning.decide(row, stored, force=self.options.force)
                counted = self._filters.left_out(self.store, row, key, decision)
                self._decisions[counted] += 1
                if decision == planning.UNCHANGED:
                    self.summary.unchanged += 1
                elif decision == planning.TERMINAL:
                    self.summary.terminal += 1
                elif counted != decision:
                    pass  # left out by --mode or --since, without a request
                elif self.options.limit is None or self.summary.to_fetch < self.options.limit:
                    self.summary.to_fetch += 1
                    if not self.options.dry_run:
                        await send.send(row)
                unchanged_run, older_run = stop.observe(decision), self._filters.older_run(row)
                if unchanged_run or older_run:
                    why = "unchanged" if unchanged_run else "since"
                    log.info("LISTING_EARLY_STOP", after=self.summary.listed, run=stop.run, why=why)
                    self.listing_finished = True
                    break
                if self.options.limit is not None and self.summary.to_fetch >= self.options.limit:
                    break
            else:
                self.listing_finished = self.listing_exhausted = True
        self._planned = True
        self.summary.plan = dict(planning.Plan.of(self._decisions.elements()).counts)
        log.info("RUN_PLAN", **self.summary.plan, listed=self.summary.listed)
        self.on_plan(self.summary)

    # -- fetch workers ---------------------------------------------------------------------
    async def _work(
        self, rows: ObjectReceiveStream[ListingRow], out: ObjectSendStream[_Outcome]
    ) -> None:
        ctx = RenderContext(
            exported_at=_now_iso(), lang=self.options.lang, account=self.options.account
        )
        async with rows, out:
            async for row in rows:
                with structlog.contextvars.bound_contextvars(thread_uuid=row.thread_id):
                    kept = self.store.kept_record(self._stored_key(row))
                    thread_ctx = dataclasses.replace(ctx, kept_record=kept) if kept else ctx
                    try:
                        fetched = await fetch_thread(
                            self.api, row, thread_ctx, **self.options.fetch_args()
                        )
                    except (AuthError, ChallengeAbort) as exc:
                        self._fatal = exc
                        raise
                    except (FetchError, PayloadError) as exc:
                        await out.send(_Outcome(row, error=exc))
                    else:
                        await out.send(_Outcome(row, fetched=fetched))

    # -- writer ----------------------------------------------------------------------------
    async def _write(self, outcomes: ObjectReceiveStream[_Outcome]) -> None:
        local = self.store
        try:
            await self._write_all(outcomes)
        finally:
            if self._offload is not None:  # never needed: a child started early ends
                self._offload.discard()
            if self.store is not local:  # the writer process: it finishes, then ends
                offloaded, self.store = self.store, local
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(cast(ClosingStore, offloaded).close)

    async def _write_all(self, outcomes: ObjectReceiveStream[_Outcome]) -> None:
        last_flush = time.monotonic()
        async with outcomes:
            async for outcome in outcomes:
                with anyio.CancelScope(shield=True):
                    # Decided once the plan is known or already large enough (the listing
                    # streams: its end may come late in a large run).
                    offload = self._offload
                    if offload is not None and (
                        self._planned or self.summary.to_fetch >= offload.min_threads
                    ):
                        await self._start_offload(offload)
                    if self._posts_at_once(outcome):
                        self._apply(outcome)  # pickled and queued: no thread hop, no wait
                    else:
                        await anyio.to_thread.run_sync(self._apply, outcome)
                    due = time.monotonic() - last_flush >= GROUP_COMMIT_SECONDS
                    if self.store.unsynced and (due or self.store.unsynced >= GROUP_COMMIT_SIZE):
                        await anyio.to_thread.run_sync(self.store.flush_done)
                        last_flush = time.monotonic()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.store.flush_done)

    async def _start_offload(self, offload: Offload) -> None:
        """Hand the writing to another process when the run is large enough to pay for it."""
        self._offload = None
        await anyio.to_thread.run_sync(self.store.flush_done)  # what was written here first
        store = await anyio.to_thread.run_sync(offload, self.summary.to_fetch)
        if store is not None:
            self.store = store
            log.info("WRITER_PROCESS_STARTED", to_fetch=self.summary.to_fetch)

    def _posts_at_once(self, outcome: _Outcome) -> bool:
        """A fetched thread for a writer process with room for it: applied in the event
        loop, for handing it to a worker thread (and back) cost more than the posting
        (measured: ~11 ms of the writer task's time a thread, while the fetch workers
        waited for it)."""
        if outcome.fetched is None or self._filters.outside(outcome.fetched.result.mode):
            return False  # a failure, or a thread of another mode to remember: a short call
        return self.store.can_post()

    def _apply(self, outcome: _Outcome) -> None:
        self.summary.done += 1
        if outcome.error is not None:
            self._apply_error(outcome.row, outcome.error)
            return
        fetched = outcome.fetched
        assert fetched is not None
        self._apply_fetched(fetched)

    def _apply_error(self, row: ListingRow, exc: BaseException) -> None:
        uuid = self._stored_key(row)
        if isinstance(exc, TerminalThreadError):
            self.store.terminal(uuid, exc.state, self.run_id)
            self.summary.terminal += 1
            log.warning("THREAD_TERMINAL", thread_uuid=uuid, state=exc.state)
            self.progress("terminal", self.summary)
            return
        if isinstance(exc, NotFoundError) and self._confirmed_not_found(row, exc):
            return
        path = exc.path if isinstance(exc, PayloadError) else None
        status = exc.status if isinstance(exc, FetchError) else None
        self.store.fail(uuid, f"{type(exc).__name__}: {exc}", path, self.run_id)
        self.summary.failed += 1
        failure = {"thread_uuid": uuid, "title": row.title, "error": str(exc)}
        if path:
            failure["json_path"] = path
        self.summary.failures.append(failure)
        log.error(
            "THREAD_FAILED",
            thread_uuid=uuid,
            title=row.title,
            error_kind=type(exc).__name__,
            error=str(exc),
            json_path=path,
            status=status,
        )
        self.progress("failed", self.summary)

    def _confirmed_not_found(self, row: ListingRow, exc: NotFoundError) -> bool:
        """Record a confirmed 404 (a second one in a row, or an unknown id given to export)."""
        uuid = row.thread_id
        export = self.options.command == "export"
        if not self.store.confirm_not_found(uuid, str(exc), self.run_id, export):
            return False
        log.warning("THREAD_NOT_FOUND", thread_uuid=uuid, title=row.title)
        if export:
            # The thread asked for does not exist: recorded as not_found (no retry,
            # no blocked early stop), and still a failure of this command (exit 1).
            self.summary.failed += 1
            self.summary.failures.append(
                {"thread_uuid": uuid, "title": row.title, "error": str(exc)}
            )
            self.progress("failed", self.summary)
            return True
        self.summary.terminal += 1
        self.progress("terminal", self.summary)
        return True

    def _apply_fetched(self, fetched: FetchedThread) -> None:
        result = fetched.result
        self.summary.thread_requests += fetched.requests
        if self._filters.outside(result.mode):
            self.summary.skipped_mode += 1
            row = fetched.row
            self._filters.remember(self.store, row, self._stored_key(row), result.mode, self.run_id)
            self.progress("skipped", self.summary)
            return
        plan = fetched.commit_plan(self.options.account, self.run_id)
        done = _Archived(
            result.thread_uuid,
            result.mode,
            result.title,
            fetched.requests,
            None if plan.assets_complete else missing(plan),
        )
        # here and now, or (the writer process) answered later; the variants registered too
        self.store.commit_then(plan, lambda info: self._archived(done, info))

    def _archived(self, result: _Archived, info: Mapping[str, Any]) -> None:
        """What follows a thread's commit: the findings that state a new fact (the writer
        recorded them), the log line and progress."""
        fields = dict(info)
        for event, level, found in fields.pop("findings", None) or ():
            self.summary.note_finding(event)
            getattr(log, level, log.warning)(event, **_finding_fields(event, found))
        if fields.get("version"):
            self.summary.new_versions += 1
        if result.missing is not None:
            self.summary.incomplete.append(
                {"thread_uuid": result.thread_uuid, "title": result.title, **result.missing}
            )
        self.summary.archived += 1
        log.info(
            "THREAD_ARCHIVED",
            thread_uuid=result.thread_uuid,
            mode=result.mode,
            title=result.title,
            requests=result.requests,
            **fields,
        )
        self.progress("archived", self.summary)

    # -- the run ---------------------------------------------------------------------------
    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                # Logged to the file only: the console says it once, as the run's error line.
                log.info("RUN_INTERRUPTED", signal=signal.Signals(signum).name)
                self.summary.interrupted = True
                scope.cancel()
                return

    async def execute(self) -> RunSummary:
        """Run the listing, the workers and the writer; return the summary."""
        started = time.monotonic()
        n = max(1, self.options.concurrency)
        rows_send, rows_recv = anyio.create_memory_object_stream[ListingRow](n * 2)
        out_send, out_recv = anyio.create_memory_object_stream[_Outcome](n * 2)
        try:
            async with anyio.create_task_group() as outer:
                outer.start_soon(self._write, out_recv)
                async with anyio.create_task_group() as fetch:
                    if self.handle_signals:
                        fetch.start_soon(self._watch_signals, fetch.cancel_scope)
                    async with out_send, anyio.create_task_group() as work:
                        work.start_soon(self._produce, rows_send)
                        async with rows_recv:
                            for _ in range(n):
                                work.start_soon(self._work, rows_recv.clone(), out_send.clone())
                    fetch.cancel_scope.cancel()  # the work is done: stop the signal watcher
        except BaseExceptionGroup as group:
            raise first_error(group) from None
        self.summary.elapsed_s = round(time.monotonic() - started, 3)
        if self.summary.interrupted:
            raise InterruptedRun("interrupted; the archive is consistent, rerun to continue")
        return self.summary


def _finding_fields(event: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A finding's log fields (a variant's says it was found online)."""
    if event == "ANSWER_VARIANT_DETECTED":
        return {"source": "online", **fields}
    return dict(fields)
