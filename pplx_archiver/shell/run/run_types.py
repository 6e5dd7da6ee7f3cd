"""What a run is given and gives back: its options, its summary, the store it writes to.

:class:`RunOptions` is what the command line asked; :class:`RunSummary` the counters that
become ``RUN_SUMMARY``; :class:`Store` what the scheduler needs of the archive (the archive
itself, the space-aware wrapper, or the writer process's :class:`ClosingStore`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Protocol

import anyio

from pplx_archiver.core.archive import plan as planning
from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread.budgets import Budgets
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.core.thread.timeparse import parse_ts
from pplx_archiver.errors import AuthError, ChallengeAbort, PplxError
from pplx_archiver.settings import Settings

# The writer makes written threads durable with one file-system sync per batch (group commit)
# at most this often / this many threads apart; a crash before it leaves them ``pending``.
GROUP_COMMIT_SECONDS = 1.0
GROUP_COMMIT_SIZE = 64


@dataclasses.dataclass(frozen=True, slots=True)
class RunOptions:
    """What the command line asked of this run, typed: the CLI builds it, the shell reads it.

    The run's tunables (``early_stop``, ``concurrency``, ``page_limit``, ``budgets``,
    ``lang``) and its account folder come from the settings and the session:
    :meth:`for_account` sets them once the session names the account.
    """

    command: str = "batch"
    account: str = "default"
    modes: frozenset[str] = frozenset()
    limit: int | None = None
    dry_run: bool = False
    force: bool = False
    # --full: list everything, and compare the recorded hashes of every stored file
    full: bool = False
    # --check-deleted (sync): list everything, keep every listed id, confirm deletions online
    check_deleted: bool = False
    # --include-spaces: also archive threads of spaces shared with the account
    include_spaces: bool = False
    # sync-deleted --online: confirm each candidate with a thread request
    online: bool = False
    accept_shrink: bool = False
    # the threads given on the command line (export, --retry-failed): only these are fetched
    thread_ids: tuple[str, ...] = ()
    # --since as canonical UTC text (``2026-07-20T00:00:00Z``); threads to fetch listed as
    # updated before it are left out
    since: str | None = None
    early_stop: int = 50
    concurrency: int = 4
    page_limit: int = 100
    # what one thread's responses may become (entries, turns, blocks, sources, depth, bytes)
    budgets: Budgets = dataclasses.field(default_factory=Budgets)
    lang: str = "en"

    def for_account(self, settings: Settings, account: str) -> RunOptions:
        """These options for one account's run: its folder and the tunables of ``settings``."""
        return dataclasses.replace(
            self,
            account=account,
            early_stop=settings.early_stop,
            concurrency=settings.concurrency,
            page_limit=settings.page_limit,
            budgets=settings.budgets,
            lang=settings.lang,
        )

    @property
    def lists_everything(self) -> bool:
        """No early stop of the listing (``--full``, ``--check-deleted``)."""
        return self.full or self.check_deleted

    @property
    def keep_listed_ids(self) -> bool:
        """Keep the id of every listed thread in ``Run.listed_ids`` (the deletion check)."""
        return self.check_deleted

    @property
    def since_us(self) -> int | None:
        """``since`` as µs (UTC), or None."""
        return parse_ts(self.since)

    @property
    def since_stops_listing(self) -> bool:
        """Whether a run of threads older than ``since`` stops the listing: not when it is
        not one newest-first list (others' space threads come first, out of date order)."""
        return not self.include_spaces

    def coverage(self) -> dict[str, Any]:
        """Which threads the run looks at: ``modes`` (empty: all) and ``since`` (None: all)."""
        return {"modes": sorted(self.modes), "since": self.since}

    def fetch_args(self) -> dict[str, Any]:
        """The keywords of :func:`~pplx_archiver.shell.run.pipeline.fetch_thread` this run gives."""
        return {"page_limit": self.page_limit, "budgets": self.budgets}


@dataclasses.dataclass(slots=True)
class RunSummary:
    """Counters of one run; becomes the RUN_SUMMARY event and the printed summary."""

    command: str
    listed: int = 0
    archived: int = 0
    unchanged: int = 0
    failed: int = 0
    terminal: int = 0
    skipped_mode: int = 0
    skipped_since: int = 0
    variant_hits: int = 0
    interruptions: int = 0
    thread_requests: int = 0
    to_fetch: int = 0
    done: int = 0
    plan: dict[str, int] = dataclasses.field(default_factory=dict)
    failures: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # new facts found by this run, per kind (each also logged once as its event)
    findings: dict[str, int] = dataclasses.field(default_factory=dict)
    new_versions: int = 0  # threads whose server version changed (the old one kept)
    # threads archived without a report or asset that could not be fetched (retried)
    incomplete: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    interrupted: bool = False
    elapsed_s: float = 0.0

    def note_finding(self, event: str) -> None:
        """Count one new finding (variants and interruptions keep their own counters)."""
        self.findings[event] = self.findings.get(event, 0) + 1
        if event == "ANSWER_VARIANT_DETECTED":
            self.variant_hits += 1
        elif event == "WORKFLOW_INTERRUPTED":
            self.interruptions += 1

    @property
    def total(self) -> int:
        skipped = self.skipped_mode + self.skipped_since
        return self.archived + self.unchanged + self.failed + self.terminal + skipped

    def as_event(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["total"] = self.total
        data["failures"] = self.failures[:50]
        data["incomplete"] = self.incomplete[:50]
        return data


class Store(Protocol):
    """What the scheduler needs from the archive store.

    Every member is declared here and called directly: a store that writes in this process
    (the archive) answers :meth:`can_post` with False and commits in :meth:`commit_then` at
    once; the writer process's store posts the commit and answers later.
    """

    def stored_state(self, thread_uuid: str) -> planning.StoredState | None: ...

    def commit(self, plan: ThreadCommit) -> Mapping[str, Any]: ...

    def commit_then(self, plan: ThreadCommit, then: Callable[[Mapping[str, Any]], None]) -> None:
        """Commit a thread the run fetched, then register its answer variants (source
        ``online``), then call ``then`` with the commit's fields: at once, or (the writer
        process) when the commit is answered."""

    def can_post(self) -> bool:
        """True when :meth:`commit_then` returns at once without writing in this thread (a
        writer process with room): the run posts from its event loop."""

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None: ...

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None: ...

    def confirm_not_found(self, uuid: str, error: str, run_id: int, immediate: bool) -> bool:
        """Record a thread as not found when this 404 confirms it (see the archive's)."""

    def register_variants(
        self, records: Any, source: str, run_id: int | None = None
    ) -> list[Any]: ...

    def kept_record(self, thread_uuid: str) -> dict[str, Any]: ...

    def mode_memo(self, key: str) -> planning.ModeMemo | None:
        """What the store remembers of a thread fetched before and found of another mode."""

    def remember_modes(self, memos: Sequence[tuple[str, planning.ModeMemo]], run_id: int) -> int:
        """Remember threads fetched and found of another mode (``--mode``)."""

    def flush_done(self) -> int: ...

    @property
    def unsynced(self) -> int: ...


class ClosingStore(Store, Protocol):
    """A store the run must close when its writer is done (the writer process)."""

    def close(self) -> None: ...


Lister = Callable[[], AsyncIterator[ListingRow]]


class Offload(Protocol):
    """Given the number of threads to fetch, a store that writes in another process, or None.

    The run asks once it has ``min_threads`` to fetch (or its plan is final); a run that
    never asks calls ``discard``.
    """

    min_threads: int

    def __call__(self, to_fetch: int) -> ClosingStore | None: ...

    def discard(self) -> None: ...


ProgressHook = Callable[[str, RunSummary], None]


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The exception a task group should surface: our own errors before anything else."""
    flat: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            flat.append(exc)

    walk(group)
    for kinds in ((AuthError, ChallengeAbort), (PplxError,)):
        for exc in flat:
            if isinstance(exc, kinds):
                return exc
    # a stream broken because the task at its other end failed says less than that failure
    secondary = (anyio.BrokenResourceError, anyio.ClosedResourceError)
    primary = [exc for exc in flat if not isinstance(exc, secondary)]
    return (primary or flat or [group])[0]
