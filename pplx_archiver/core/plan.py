"""Incremental decisions: what to do with each listed thread, and when the listing may stop.

A listed thread is ``new`` (never archived), ``updated`` (its normalised update time moved,
or ``--force``), ``retry`` (an earlier run failed or left it incomplete), ``unchanged``
(same update time and complete: skipped without a request) or ``terminal`` (deleted or
expired: not retried). The listing is newest-first by update time, so once a run of
``threshold`` consecutive unchanged threads has passed, everything older is unchanged too.
A thread confirmed ``not_found`` (404 in two runs) is terminal as well, until forgotten.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable

from pplx_archiver.core.layout import normalize_timestamp_key
from pplx_archiver.core.model import ListingRow

NEW = "new"
UPDATED = "updated"
RETRY = "retry"
UNCHANGED = "unchanged"
TERMINAL = "terminal"
FETCH_DECISIONS = (NEW, UPDATED, RETRY)


@dataclasses.dataclass(frozen=True, slots=True)
class StoredState:
    """What the index knows of a thread."""

    status: str  # done | failed | pending | deleted | expired | not_found
    last_updated: str | None
    complete: bool = True


def decide(row: ListingRow, stored: StoredState | None, *, force: bool = False) -> str:
    """Classify one listed thread against the index."""
    if stored is None:
        return NEW
    if stored.status in ("deleted", "expired", "not_found"):
        return TERMINAL
    if stored.status != "done" or not stored.complete:
        return RETRY
    if force:
        return UPDATED
    if normalize_timestamp_key(row.updated_at) != normalize_timestamp_key(stored.last_updated):
        return UPDATED
    return UNCHANGED


@dataclasses.dataclass(slots=True)
class EarlyStop:
    """Counts consecutive unchanged threads; ``threshold`` 0 disables the early stop."""

    threshold: int
    run: int = 0

    def observe(self, decision: str) -> bool:
        """Record one decision; True when the listing may stop here."""
        if decision in (UNCHANGED, TERMINAL):
            self.run += 1
        else:
            self.run = 0
        return self.threshold > 0 and self.run >= self.threshold


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """Counts of a run's decisions, for the one-line plan and the summary."""

    counts: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, decisions: Iterable[str]) -> Plan:
        c = Counter(decisions)
        order = (NEW, UPDATED, RETRY, UNCHANGED, TERMINAL)
        return cls(tuple((name, c.get(name, 0)) for name in order))

    def line(self) -> str:
        """``plan: 12 new, 3 updated, 1 retry, 480 unchanged, 2 terminal``."""
        return "plan: " + ", ".join(f"{n} {name}" for name, n in self.counts)
