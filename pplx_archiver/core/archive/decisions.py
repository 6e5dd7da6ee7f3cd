"""Incremental decisions: what to do with each listed thread, and when the listing may stop.

A listed thread is ``new`` (never archived), ``updated`` (its normalised update time moved,
or ``--force``), ``retry`` (an earlier run failed or left it incomplete), ``unchanged``
(same update time and complete: skipped without a request) or ``terminal`` (expired and
listed at the update time it expired at: not retried). The listing is newest-first by update
time, so once a run of ``threshold`` consecutive unchanged threads has passed, everything
older is unchanged too. A tombstone is a state, not a verdict: a thread deleted
or confirmed ``not_found`` that is listed again — the service lists no deleted thread — is
a ``retry``, and so is an expired one whose update time moved (or any, with ``--force``:
``export`` fetches every id it is given).

Filters that cost nothing: a thread to fetch is left out, without a request, when
``--since`` is later than its listed update time (``before_since``), or when ``--mode``
excludes it (``other_mode``): its listing row says its mode is another one
(:func:`~pplx_archiver.core.thread.modes.listing_modes`), or an earlier run fetched it at the
same listed update time and found it of another mode (:class:`ModeMemo`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable

from pplx_archiver.core.thread.layout import normalize_timestamp_key
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.core.thread.modes import listing_modes
from pplx_archiver.core.thread.timeparse import parse_ts
from pplx_archiver.errors import PayloadError

NEW = "new"
UPDATED = "updated"
RETRY = "retry"
UNCHANGED = "unchanged"
TERMINAL = "terminal"
FETCH_DECISIONS = (NEW, UPDATED, RETRY)
# Threads to fetch that a filter leaves out without a request (counted in the plan when any).
OTHER_MODE = "other_mode"
BEFORE_SINCE = "before_since"
# How the filter knew the mode of an ``other_mode`` thread.
BY_LISTING = "listing"
BY_MEMO = "remembered"


# The states of a thread the service said it no longer has (a state, not a verdict).
TOMBSTONES = ("deleted", "expired", "not_found")


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
    if stored.status in TOMBSTONES:
        same = normalize_timestamp_key(row.updated_at) == normalize_timestamp_key(
            stored.last_updated
        )
        return TERMINAL if stored.status == "expired" and same and not force else RETRY
    if stored.status != "done" or not stored.complete:
        return RETRY
    if force:
        return UPDATED
    if normalize_timestamp_key(row.updated_at) != normalize_timestamp_key(stored.last_updated):
        return UPDATED
    return UNCHANGED


@dataclasses.dataclass(frozen=True, slots=True)
class ModeMemo:
    """A thread a run with ``--mode`` fetched and found of another mode: the key of the
    listed update time it was fetched at (:func:`normalize_timestamp_key`) and its mode."""

    updated_key: str
    mode: str


def memo_of(row: ListingRow, mode: str) -> ModeMemo | None:
    """What to remember of a fetched thread of ``mode`` (None: nothing to key it by)."""
    key = normalize_timestamp_key(row.updated_at)
    return ModeMemo(key, mode) if key else None


def mode_known_outside(
    row: ListingRow, modes: frozenset[str], memo: ModeMemo | None, *, force: bool = False
) -> str | None:
    """How a listed thread is known to be of a mode outside ``modes`` (``BY_LISTING``,
    ``BY_MEMO``), or None: no filter, or its mode can only be learnt by fetching it.

    The listing decides first; a remembered decision holds while the thread's listed update
    time is the one it was fetched at (``--force`` fetches it again).
    """
    if not modes:
        return None
    possible = listing_modes(row)
    if possible is not None and not possible & modes:
        return BY_LISTING
    key = normalize_timestamp_key(row.updated_at)
    if memo is None or force or not key or memo.updated_key != key:
        return None
    return BY_MEMO if memo.mode not in modes else None


def before_since(row: ListingRow, since_us: int | None) -> bool:
    """True when ``--since`` (µs, UTC) is later than the row's listed update time.

    A row without a readable update time is never left out (it may be newer).
    """
    if since_us is None or not row.updated_at:
        return False
    try:
        updated = parse_ts(row.updated_at)
    except PayloadError:
        return False
    return updated is not None and updated < since_us


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
class DecisionCounts:
    """Counts of a run's decisions, for the one-line plan and the summary."""

    counts: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, decisions: Iterable[str]) -> DecisionCounts:
        c = Counter(decisions)
        order: tuple[str, ...] = (NEW, UPDATED, RETRY, UNCHANGED, TERMINAL)
        order += tuple(name for name in (OTHER_MODE, BEFORE_SINCE) if c.get(name))
        return cls(tuple((name, c.get(name, 0)) for name in order))

    def line(self) -> str:
        """``plan: 12 new, 3 updated, 1 retry, 480 unchanged, 2 terminal``."""
        return "plan: " + ", ".join(f"{n} {name}" for name, n in self.counts)
