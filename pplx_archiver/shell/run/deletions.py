"""Deletion detection: archived threads missing from the listing, confirmed and tombstoned.

Candidates are threads the index holds as ``done`` whose uuid the current, complete listing
does not contain. Offline they are only reported. Online each is confirmed with one thread
request: ``ENTRY_DELETED`` / ``ENTRY_EXPIRED`` / 404 confirm it (a
:class:`~pplx_archiver.core.archive.writes.Tombstone` plan for the archive's writer:
``remote_deleted`` is written into its ``thread.json`` once and the index marks it terminal); a
thread that answers is a false positive; a server or network error leaves it for the next run (after
:data:`CHECK_ATTEMPTS` attempts, not the whole retry policy). Archive files are never deleted
or moved. An empty listing while the archive holds threads means a broken
session, never "everything was deleted".

The shrink guard (:mod:`pplx_archiver.core.findings.shrink`) judges every complete listing first:
when it lacks more than 5 % (and at least 10) of the threads the archive knows for the
account, ``LISTING_SHRANK`` is logged, nothing is confirmed or tombstoned, and the run ends
with :class:`~pplx_archiver.errors.ListingShrankError` (exit 8) unless ``--accept-shrink``.
A tombstoned thread logs ``ARCHIVE_ONLY_COPY``: the archive now holds its only copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Set
from datetime import UTC, datetime
from typing import IO, Any

import structlog

from pplx_archiver.core.archive.writes import Findings, Tombstone
from pplx_archiver.core.findings.shrink import KNOWN_STATUSES, ListingShrink, judge_listing
from pplx_archiver.errors import (
    AuthError,
    ChallengeAbort,
    FetchError,
    ListingShrankError,
    NotFoundError,
    TerminalThreadError,
)
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.run.pipeline import JsonApi

log = structlog.get_logger()


@dataclasses.dataclass(slots=True)
class DeletionReport:
    """What a deletion check found."""

    listed: int = 0
    candidates: list[str] = dataclasses.field(default_factory=list)
    confirmed: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    still_present: list[str] = dataclasses.field(default_factory=list)
    undecided: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    held: bool = False  # the listing shrank: nothing was confirmed or tombstoned

    def as_event(self) -> dict[str, Any]:
        return {
            "listed": self.listed,
            "candidates": len(self.candidates),
            "confirmed": len(self.confirmed),
            "still_present": len(self.still_present),
            "undecided": len(self.undecided),
        }

    def text(self, online: bool) -> str:
        lines = [f"deletion check: {len(self.candidates)} candidate(s) of {self.listed} listed"]
        if self.held:
            lines.append("  nothing confirmed or tombstoned: the listing shrank (LISTING_SHRANK)")
        elif not online:
            lines += [f"  candidate {uuid}" for uuid in self.candidates]
            if self.candidates:
                lines.append("run with --online to confirm them (archive files are never removed)")
        lines += [f"  tombstoned {uuid} ({state})" for uuid, state in self.confirmed]
        lines += [f"  still present {uuid} (false positive)" for uuid in self.still_present]
        lines += [f"  undecided {uuid}: {why} (retried next run)" for uuid, why in self.undecided]
        return "\n".join(lines)


def find_candidates(archive: Archive, listed: Iterable[str], listed_count: int) -> list[str]:
    """Archived, complete threads absent from the listing; refuses an empty listing."""
    ids = set(listed)
    done = [row.uuid for row in archive.iter_threads("done") if not row.remote_deleted]
    if listed_count == 0 and done:
        raise AuthError(
            f"the listing is empty while the archive holds {len(done)} threads: the session "
            "is probably logged out or broken; nothing was marked deleted"
        )
    return sorted(uuid for uuid in done if uuid not in ids)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# Attempts of one deletion check: a server error leaves the candidate for the next run, so
# it is not retried with the whole policy (6 attempts, ~34 s of waits per candidate).
CHECK_ATTEMPTS = 2


async def _ask(api: JsonApi, uuid: str) -> None:
    path, params = f"/rest/thread/{uuid}", [("limit", "1")]
    if isinstance(api, ApiClient):
        await api.request_json("GET", path, params=params, attempts=CHECK_ATTEMPTS)
    else:
        await api.get_json(path, params)


async def confirm(api: JsonApi, archive: Archive, report: DeletionReport) -> None:
    """Ask the server about each candidate and tombstone the confirmed ones."""
    for uuid in report.candidates:
        state: str | None = None
        try:
            await _ask(api, uuid)
        except TerminalThreadError as exc:
            state = exc.state
        except NotFoundError:
            state = "deleted"
        except (AuthError, ChallengeAbort):
            raise
        except FetchError as exc:
            report.undecided.append((uuid, f"{type(exc).__name__}: {exc}"))
            log.warning("DELETION_UNDECIDED", thread_uuid=uuid, error=str(exc))
            continue
        if state is None:
            report.still_present.append(uuid)
            log.info("DELETION_FALSE_POSITIVE", thread_uuid=uuid)
            continue
        archive.writer.apply(Tombstone(uuid, state, _now()))
        report.confirmed.append((uuid, state))
        log.warning("THREAD_REMOTE_DELETED", thread_uuid=uuid, state=state)
        _only_copy(archive, uuid)


def _only_copy(archive: Archive, uuid: str) -> None:
    """Say (once: an alert) that the archive now holds the only copy of a thread gone."""
    row = archive.get(uuid)
    fields = {"thread_uuid": uuid, "title": row.title if row else None}
    fields["path"] = row.path if row else None
    found: list[tuple[str, str, Mapping[str, Any]]] = []
    found.append(("ARCHIVE_ONLY_COPY", "warning", fields))
    for event, _level, new in archive.writer.apply(Findings(tuple(found))):
        log.warning(event, **new)


def known_threads(
    archive: Archive, account: str, run_id: int | None = None, was_known: Set[str] = frozenset()
) -> set[str]:
    """The ids the archive knew for ``account`` before run ``run_id`` (not terminal).

    A thread run ``run_id`` wrote that the index did not know when it was listed
    (``was_known``) is new: listed by this very run, so not one the listing could lack.
    """
    return {
        row.uuid
        for status in KNOWN_STATUSES
        for row in archive.iter_threads(status)
        if row.account == account
        and not row.remote_deleted
        and (run_id is None or row.updated_in_run != run_id or row.uuid in was_known)
    }


@dataclasses.dataclass(frozen=True, slots=True)
class ListingCheck:
    """A listing as the deletion side sees it once it has ended."""

    account: str
    listed: int
    seen: Set[str]  # the ids it showed (every one when ``check_deleted``)
    complete: bool  # read to its end: no early stop, no --limit, not given thread ids
    run_id: int | None = None  # the run that listed (and wrote) while listing
    was_known: Set[str] = frozenset()  # listed ids the index knew when they were listed
    check_deleted: bool = False
    online: bool = True
    accept_shrink: bool = False


async def settle(
    api: JsonApi, archive: Archive, check: ListingCheck, out: IO[str]
) -> ListingShrink | None:
    """Judge a complete listing (``LISTING_SHRANK``), then run the deletion check it allows.

    Returns the verdict when the listing shrank (``None`` otherwise); :func:`refuse_shrink`
    turns it into the run's exit code 8.
    """
    shrink = None
    if check.complete:
        known = known_threads(archive, check.account, check.run_id, check.was_known)
        shrink = judge_listing(check.listed, known, check.seen)
        if shrink.shrank:
            fields = {**shrink.as_event(), "accepted": check.accept_shrink}
            found: list[tuple[str, str, Mapping[str, Any]]] = []
            found.append(("LISTING_SHRANK", "warning", fields))
            for event, _level, new in archive.writer.apply(Findings(tuple(found), check.run_id)):
                log.warning(event, **new)  # once per fact; the exit code says it every run
        else:
            shrink = None
    if check.check_deleted:
        report = DeletionReport(listed=check.listed)
        report.candidates = find_candidates(archive, check.seen, check.listed)
        report.held = shrink is not None and not check.accept_shrink
        if check.online and not report.held:
            await confirm(api, archive, report)
        out.write(report.text(check.online) + "\n")
        log.info("DELETION_CHECK", **report.as_event())
    return shrink


def refuse_shrink(shrink: ListingShrink | None, accepted: bool) -> None:
    """End the run with exit code 8 when the listing shrank and the shrink was not accepted."""
    if shrink is not None and not accepted:
        raise ListingShrankError(shrink.message())
