"""The shrink guard's judgement: has a complete listing lost too many of the known threads?

A listing that ran to its end is compared with the threads the archive knows for the account
(index rows not yet terminal: ``done``, ``failed``, ``pending``). When more than
:data:`SHRINK_THRESHOLD` of them (and at least :data:`SHRINK_MIN_MISSING`) are missing, the
listing is taken for a service-side incident rather than for deletions: the run tombstones
nothing and ends with exit code 8 unless ``--accept-shrink`` was given. Pure: the shell counts,
this module decides and words the verdict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Set
from typing import Any

# A thread in one of these index states is one the archive expects the listing to show.
KNOWN_STATUSES = ("done", "failed", "pending")
SHRINK_THRESHOLD = 0.05  # more than this share of the known threads missing…
SHRINK_MIN_MISSING = 10  # …and at least this many


@dataclasses.dataclass(frozen=True, slots=True)
class ListingShrink:
    """How a complete listing compares with the threads the archive knows for its account."""

    listed: int
    known: int
    missing: int
    threshold: float = SHRINK_THRESHOLD
    min_missing: int = SHRINK_MIN_MISSING

    @property
    def ratio(self) -> float:
        """The share of the known threads the listing lacks (0.0 when none are known)."""
        return self.missing / self.known if self.known else 0.0

    @property
    def shrank(self) -> bool:
        """True when the listing lacks more than the threshold and at least ``min_missing``."""
        return self.missing >= self.min_missing and self.ratio > self.threshold

    def as_event(self) -> dict[str, Any]:
        """The fields of the ``LISTING_SHRANK`` event."""
        return {
            "listed": self.listed,
            "known": self.known,
            "missing": self.missing,
            "missing_ratio": round(self.ratio, 4),
            "threshold": self.threshold,
        }

    def message(self) -> str:
        """One line for people: how many threads vanished and how to proceed anyway."""
        return (
            f"the listing shrank: {self.missing} of the {self.known} threads archived for this "
            f"account ({self.ratio:.1%}, more than {self.threshold:.0%}) are missing from it "
            f"({self.listed} listed), which looks like a service-side problem; nothing was "
            "marked deleted. Rerun with --accept-shrink if the threads were really deleted"
        )


def judge_listing(listed: int, known: Set[str], seen: Set[str]) -> ListingShrink:
    """Compare a complete listing (``seen``: the ids it showed) with the ``known`` ids."""
    missing = sum(1 for thread_id in known if thread_id not in seen)
    return ListingShrink(listed=listed, known=len(known), missing=missing)
