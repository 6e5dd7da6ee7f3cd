"""Incremental decisions and the early stop of the listing."""

from __future__ import annotations

from pplx_archiver.core.archive.decisions import (
    NEW,
    RETRY,
    TERMINAL,
    UNCHANGED,
    UPDATED,
    DecisionCounts,
    EarlyStop,
    StoredState,
    decide,
)
from pplx_archiver.core.thread.model import ListingRow

ROW = ListingRow(thread_id="t1", updated_at="2026-09-07T16:42:48.180330Z")


def test_decisions() -> None:
    """New, unchanged (trailing zeros ignored), updated, retry, terminal and forced."""
    assert decide(ROW, None) == NEW
    same = StoredState("done", "2026-09-07T16:42:48.18033Z")
    assert decide(ROW, same) == UNCHANGED
    assert decide(ROW, same, force=True) == UPDATED
    assert decide(ROW, StoredState("done", "2026-09-07T16:40:00Z")) == UPDATED
    assert decide(ROW, StoredState("failed", ROW.updated_at)) == RETRY
    assert decide(ROW, StoredState("done", ROW.updated_at, complete=False)) == RETRY
    # A tombstone is a state (issue 44): a deleted or not-found thread listed again is
    # fetched again; an expired one (still listed) only when its update time moved or forced.
    assert decide(ROW, StoredState("deleted", ROW.updated_at)) == RETRY
    assert decide(ROW, StoredState("not_found", ROW.updated_at)) == RETRY
    assert decide(ROW, StoredState("expired", ROW.updated_at)) == TERMINAL
    assert decide(ROW, StoredState("expired", "2026-09-01T00:00:00Z")) == RETRY
    assert decide(ROW, StoredState("expired", ROW.updated_at), force=True) == RETRY


def test_early_stop_needs_a_consecutive_run() -> None:
    """Only `threshold` unchanged threads in a row stop the listing; 0 never stops."""
    stop = EarlyStop(threshold=3)
    seq = [UNCHANGED, UNCHANGED, NEW, UNCHANGED, UNCHANGED]
    assert [stop.observe(d) for d in seq] == [False] * 5
    assert stop.observe(UNCHANGED) is True
    never = EarlyStop(threshold=0)
    assert not any(never.observe(UNCHANGED) for _ in range(100))


def test_plan_line() -> None:
    """The one-line plan names every category in a fixed order."""
    line = DecisionCounts.of([NEW, NEW, UNCHANGED, RETRY]).line()
    assert line == "plan: 2 new, 0 updated, 1 retry, 1 unchanged, 0 terminal"
