"""The one table of bounds for every number a user can give.

Each command-line option that takes a number declares its range from :data:`BOUNDS` (through
``cli/_options.bounded``), and :class:`~pplx_archiver.settings.Settings` checks its numeric
fields (from options, ``PPLX_*`` variables or the config file) against the same rows, so a
value is refused in one line before anything forks, opens or allocates in proportion to it.
docs/configuration.md lists the maxima; a test sweeps every numeric option with 0, -1, a huge
value, ``nan`` and ``inf``.
"""

from __future__ import annotations

import dataclasses
import math
import os

# Worker processes of re-render, verify and site: a small multiple of the cores, capped.
MAX_JOBS = min(64, 4 * (os.cpu_count() or 1))

_DAY = 86_400.0
_GIB = 1024**3
_SEED_MAX = 2**32 - 1


@dataclasses.dataclass(frozen=True, slots=True)
class Bound:
    """An inclusive range; ``integer`` for whole numbers."""

    low: float
    high: float
    integer: bool = True

    def holds(self, value: float) -> bool:
        """Whether ``value`` is a finite number within the range."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if isinstance(value, float) and (not math.isfinite(value) or self.integer):
            return False
        return self.low <= value <= self.high

    def text(self) -> str:
        """The range as words: ``a whole number from 1 to 8``."""
        kind = "a whole number" if self.integer else "a number"
        return f"{kind} from {_num(self.low)} to {_num(self.high)}"


def _num(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _seconds(low: float = 0.1, high: float = _DAY) -> Bound:
    return Bound(low, high, integer=False)


def _rate(low: float = 0.01, high: float = 100_000.0) -> Bound:
    return Bound(low, high, integer=False)


# Key → range. A key names what a number means; options of several commands share a row.
BOUNDS: dict[str, Bound] = {
    "jobs": Bound(1, MAX_JOBS),
    "limit": Bound(1, 1_000_000),
    "concurrency": Bound(1, 256),
    "rate": _rate(),
    "burst": Bound(1, 10_000),
    "asset_concurrency": Bound(1, 64),
    "asset_rate": _rate(),
    "max_asset_bytes": Bound(1, 16 * _GIB),
    "early_stop": Bound(0, 1_000_000),
    "page_limit": Bound(1, 1000),
    "max_attempts": Bound(1, 100),
    "max_retry_seconds": _seconds(),
    "request_timeout": _seconds(),
    "request_deadline": _seconds(),
    "download_deadline": _seconds(),
    "total_deadline": _seconds(),
    "max_body_bytes": Bound(1024, _GIB),
    "max_challenges": Bound(1, 100),
    # Budgets of what one thread's responses become (core/thread/budgets.py).
    "max_thread_entries": Bound(1, 10_000_000),
    "max_thread_turns": Bound(1, 1_000_000),
    "max_thread_blocks": Bound(1, 10_000_000),
    "max_thread_sources": Bound(1, 10_000_000),
    "max_thread_depth": Bound(8, 1000),
    "max_thread_bytes": Bound(1024 * 1024, 16 * _GIB),
    "max_thread_values": Bound(1000, 100_000_000),
    "usage_rate": _rate(),
    "ask_timeout": _seconds(1.0),
    "demo_threads": Bound(1, 100_000),
    "seed": Bound(0, _SEED_MAX),
    "version": Bound(1, 1_000_000),  # a thread's version (history, diff)
    "turn": Bound(1, 1_000_000),  # a turn of a thread (diff --entry)
    "mcp_port": Bound(1, 65_535),  # mcp --http: the loopback port
    "sample_percent": Bound(0.01, 100.0, integer=False),  # verify --sample
    # The simulator (sim serve, sim truth).
    "sim_threads": Bound(0, 100_000),
    "sim_port": Bound(0, 65_535),
    "sim_ms": _seconds(0.0, 60_000.0),
    "sim_rate": _rate(0.0),
    "sim_share": Bound(0.0, 1.0, integer=False),
    "sim_count": Bound(0, 1_000_000),
    "sim_ttl": Bound(1, 7 * 86_400),
    "sim_accounts": Bound(1, 100),
}

# Settings fields checked against the row of the same name (command line, env, config file).
SETTING_FIELDS: tuple[str, ...] = (
    "concurrency",
    "rate",
    "burst",
    "asset_concurrency",
    "asset_rate",
    "max_asset_bytes",
    "early_stop",
    "page_limit",
    "max_attempts",
    "max_retry_seconds",
    "request_timeout",
    "request_deadline",
    "download_deadline",
    "total_deadline",
    "max_body_bytes",
    "max_challenges",
    "max_thread_entries",
    "max_thread_turns",
    "max_thread_blocks",
    "max_thread_sources",
    "max_thread_depth",
    "max_thread_bytes",
    "max_thread_values",
)


def check(key: str, value: float) -> str | None:
    """``None`` when ``value`` is within the row ``key``; else what it must be."""
    bound = BOUNDS[key]
    return None if bound.holds(value) else bound.text()
