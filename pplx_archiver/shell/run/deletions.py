"""Deletion detection: archived threads missing from the listing, confirmed and tombstoned.

Candidates are threads the index holds as ``done`` whose uuid the current, complete listing
does not contain. Offline they are only reported. Online each is confirmed with one thread
request: ``ENTRY_DELETED`` / ``ENTRY_EXPIRED`` / 404 confirm it (a
:class:`~pplx_archiver.core.writes.Tombstone` plan for the archive's writer: ``remote_deleted``
is written into its ``thread.json`` once and the index marks it terminal); a thread that
answers is a false positive; a server or network error leaves it for the next run. Archive files are
never deleted or moved. An empty listing while the archive holds threads means a broken
session, never "everything was deleted".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import structlog

from pplx_archiver.core.writes import Tombstone
from pplx_archiver.errors import (
    AuthError,
    ChallengeAbort,
    FetchError,
    NotFoundError,
    TerminalThreadError,
)
from pplx_archiver.shell.archive.store import Archive
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
        if not online:
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


async def confirm(api: JsonApi, archive: Archive, report: DeletionReport) -> None:
    """Ask the server about each candidate and tombstone the confirmed ones."""
    for uuid in report.candidates:
        state: str | None = None
        try:
            await api.get_json(f"/rest/thread/{uuid}", [("limit", "1")])
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
