"""The shrink guard's threshold: more than 5 % of the known threads and at least 10 missing."""

from __future__ import annotations

import pytest

from pplx_archiver.core.findings.shrink import (
    SHRINK_MIN_MISSING,
    SHRINK_THRESHOLD,
    ListingShrink,
    judge_listing,
)


def _ids(n: int, prefix: str = "t") -> set[str]:
    return {f"{prefix}{i}" for i in range(n)}


@pytest.mark.parametrize(
    ("known", "missing", "shrank"),
    [
        (200, 10, False),  # exactly 5 %: not more than the threshold
        (199, 10, True),  # 5.03 %
        (200, 11, True),  # 5.5 %
        (100, 9, False),  # 9 %, but fewer than 10 threads
        (30, 9, False),  # 30 % of a small account: still fewer than 10
        (30, 10, True),  # 33 % and 10 threads
        (1000, 50, False),  # exactly 5 % of a large account
        (1000, 51, True),
        (0, 0, False),  # an empty archive knows nothing to lose
        (10, 0, False),
    ],
)
def test_threshold(known: int, missing: int, shrank: bool) -> None:
    assert ListingShrink(listed=known - missing, known=known, missing=missing).shrank is shrank


def test_the_defaults_are_five_percent_and_ten_threads() -> None:
    assert (SHRINK_THRESHOLD, SHRINK_MIN_MISSING) == (0.05, 10)


def test_judge_counts_only_known_threads_missing_from_the_listing() -> None:
    known = _ids(100)
    seen = (known - {"t1", "t2", "t3"}) | _ids(40, prefix="new")  # new threads do not offset
    verdict = judge_listing(137, known, seen)
    assert (verdict.listed, verdict.known, verdict.missing) == (137, 100, 3)
    assert not verdict.shrank
    lost = judge_listing(70, known, set(sorted(known)[:70]))
    assert lost.missing == 30 and lost.shrank


def test_event_and_message() -> None:
    verdict = ListingShrink(listed=210, known=300, missing=90)
    assert verdict.as_event() == {
        "listed": 210,
        "known": 300,
        "missing": 90,
        "missing_ratio": 0.3,
        "threshold": 0.05,
    }
    text = verdict.message()
    assert "90 of the 300 threads" in text and "(30.0%, more than 5%)" in text
    assert "--accept-shrink" in text
    assert "\n" not in text
