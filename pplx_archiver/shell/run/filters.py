"""``--mode`` and ``--since`` of one run: the threads to fetch that are left out unfetched.

The decisions are the render core's (:mod:`pplx_archiver.core.archive.plan`); this module asks the
store for what it remembers, counts what was left out, and records the threads a run fetched
and found of another mode, so that the next run with ``--mode`` makes no request for them
while they stay unchanged.
"""

from __future__ import annotations

import dataclasses

from pplx_archiver.core.archive import plan as planning
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.shell.run.run_types import RunOptions, RunSummary, Store

# The listing stops after this many threads in a row listed as updated before ``--since``
# (newest first: the older ones are older still); a few rows out of order do not stop it.
SINCE_STOP_AFTER = 10


@dataclasses.dataclass(slots=True)
class RunFilters:
    """What ``--mode`` and ``--since`` leave out of one run."""

    options: RunOptions
    summary: RunSummary
    older_in_a_row: int = 0

    def left_out(self, store: Store, row: ListingRow, key: str, decision: str) -> str:
        """``decision``, or ``BEFORE_SINCE`` / ``OTHER_MODE`` for a thread to fetch that a
        filter leaves out without a request (counted in the summary)."""
        if decision not in planning.FETCH_DECISIONS:
            return decision
        if planning.before_since(row, self.options.since_us):
            self.summary.skipped_since += 1
            return planning.BEFORE_SINCE
        modes = self.options.modes
        if not modes:
            return decision
        memo = store.mode_memo(key)
        if planning.mode_known_outside(row, modes, memo, force=self.options.force) is None:
            return decision
        self.summary.skipped_mode += 1
        return planning.OTHER_MODE

    def older_run(self, row: ListingRow) -> bool:
        """True once :data:`SINCE_STOP_AFTER` threads in a row were updated before ``--since``
        (never when the listing is not one newest-first list: ``since_stops_listing``)."""
        if not self.options.since_stops_listing:
            return False
        if planning.before_since(row, self.options.since_us):
            self.older_in_a_row += 1
        else:
            self.older_in_a_row = 0
        return self.older_in_a_row >= SINCE_STOP_AFTER

    def outside(self, mode: str) -> bool:
        """True when a fetched thread of ``mode`` is not to be written (``--mode``)."""
        return bool(self.options.modes) and mode not in self.options.modes

    def remember(self, store: Store, row: ListingRow, key: str, mode: str, run_id: int) -> None:
        """Record a thread fetched and found of another mode (when the store keeps them)."""
        memo = planning.memo_of(row, mode)
        if memo is not None:
            store.remember_modes([(key, memo)], run_id)
