"""The request counters of a run's API client, for the progress bar and the run's summary.

:meth:`pplx_archiver.shell.net.http.ApiClient.stats` returns a :class:`ClientStats`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from pplx_archiver.shell.net.ratelimit import LimiterSnapshot


@dataclasses.dataclass(frozen=True, slots=True)
class ClientStats:
    """Request counters of a run, for the progress bar and the summary."""

    requests_by_kind: Mapping[str, int]
    responses_by_status: Mapping[int, int]
    errors_by_kind: Mapping[str, int]
    retries: int
    rate_limited: int
    challenges: int
    cookie_rotations: int
    limiter: LimiterSnapshot

    @property
    def requests(self) -> int:
        """All requests sent, retries included."""
        return sum(self.requests_by_kind.values())
