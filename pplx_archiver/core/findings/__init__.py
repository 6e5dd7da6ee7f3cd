"""Findings about the account: alert kinds and keys, and the shrink guard's judgement."""

from __future__ import annotations

from pplx_archiver.core.findings.alerts import KINDS, fact_key
from pplx_archiver.core.findings.shrink import (
    KNOWN_STATUSES,
    SHRINK_MIN_MISSING,
    SHRINK_THRESHOLD,
    ListingShrink,
    judge_listing,
)

__all__ = [
    "KINDS",
    "KNOWN_STATUSES",
    "SHRINK_MIN_MISSING",
    "SHRINK_THRESHOLD",
    "ListingShrink",
    "fact_key",
    "judge_listing",
]
