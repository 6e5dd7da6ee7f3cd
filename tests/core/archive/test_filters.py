"""Filters that cost nothing (issue 37): the listing's mode, remembered modes, ``--since``."""

from __future__ import annotations

import dataclasses

import pytest

from pplx_archiver.core.archive.decisions import (
    BEFORE_SINCE,
    BY_LISTING,
    BY_MEMO,
    NEW,
    OTHER_MODE,
    DecisionCounts,
    ModeMemo,
    before_since,
    memo_of,
    mode_known_outside,
)
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.core.thread.modes import listing_modes
from pplx_archiver.core.thread.timeparse import parse_ts

ROW = ListingRow(thread_id="t1", updated_at="2026-09-07T16:42:48.180330")
STUDY = frozenset({"study"})


def _row(mode: str | None = None, model: str | None = None) -> ListingRow:
    return dataclasses.replace(ROW, mode=mode, display_model=model)


@pytest.mark.parametrize(
    ("mode", "model", "possible"),
    [
        # the REST listing as captured: computer tasks are "asi", every other thread "copilot"
        ("asi", "PPLX_ASI", {"computer"}),
        ("copilot", "pplx_agentic_research", {"council"}),
        ("copilot", "pplx_study", {"study", "council"}),
        ("copilot", "turbo", {"search", "deep-research", "study", "council"}),
        ("copilot", "pplx_alpha", {"search", "deep-research", "study", "council"}),
        # GraphQL names the search mode: that mode or a more specific one (a mode switch)
        ("ASI", None, {"computer"}),
        ("AGENTIC_RESEARCH", None, {"council"}),
        ("STUDY", None, {"study", "council"}),
        ("RESEARCH", None, {"deep-research", "study", "council"}),
        ("STUDIO", "pplx_beta", {"search", "deep-research", "study", "council"}),
        ("COMPUTER", None, {"computer"}),
        # no listing mode: the display model alone (any case)
        (None, "PPLX_STUDY", {"study", "council", "computer"}),
        (None, "pplx_asi_opus", {"computer"}),
    ],
)
def test_listing_modes(mode: str | None, model: str | None, possible: set[str]) -> None:
    """The modes a listed thread may have, from its listing row alone."""
    assert listing_modes(_row(mode, model)) == frozenset(possible)


@pytest.mark.parametrize(
    ("mode", "model"),
    [(None, None), (None, "turbo"), ("", "pplx_alpha"), ("copilot", "pplx_asi_opus")],
)
def test_listing_modes_undecided(mode: str | None, model: str | None) -> None:
    """Nothing known, or signals that contradict each other (a fetch decides)."""
    assert listing_modes(_row(mode, model)) is None


def test_the_listing_decides_a_mode_outside_the_filter() -> None:
    """Computer and council rows are left out of a study run; study and unsure rows are not."""
    assert mode_known_outside(_row("asi", "PPLX_ASI"), STUDY, None) == BY_LISTING
    assert mode_known_outside(_row("copilot", "pplx_agentic_research"), STUDY, None) == BY_LISTING
    assert mode_known_outside(_row("copilot", "pplx_study"), STUDY, None) is None
    assert mode_known_outside(_row("copilot", "turbo"), STUDY, None) is None
    assert mode_known_outside(_row("STUDY"), frozenset({"council"}), None) is None
    # a copilot row is never a computer task
    assert mode_known_outside(_row("copilot", "turbo"), frozenset({"computer"}), None) == BY_LISTING
    assert mode_known_outside(_row("asi"), frozenset(), None) is None  # no filter


def test_a_remembered_mode_holds_while_the_update_time_stays() -> None:
    """A thread fetched and found of another mode is left out until its update time moves."""
    row = _row("copilot", "turbo")
    memo = memo_of(row, "search")
    assert memo == ModeMemo("2026-09-07T16:42:48.18033", "search")
    assert mode_known_outside(row, STUDY, memo) == BY_MEMO
    same = dataclasses.replace(row, updated_at="2026-09-07T16:42:48.18033")  # zeros dropped
    assert mode_known_outside(same, STUDY, memo) == BY_MEMO
    moved = dataclasses.replace(row, updated_at="2026-09-08T09:00:00.000001")
    assert mode_known_outside(moved, STUDY, memo) is None  # decided again
    assert mode_known_outside(row, STUDY, memo, force=True) is None
    assert mode_known_outside(row, frozenset({"search"}), memo) is None  # of the filter's mode
    assert memo_of(dataclasses.replace(row, updated_at=None), "search") is None


def test_before_since() -> None:
    """Older than --since is left out; same instant, newer or unknown update times are not."""
    since = parse_ts("2026-09-07T00:00:00Z")
    assert before_since(dataclasses.replace(ROW, updated_at="2026-09-06T23:59:59.9"), since)
    assert not before_since(dataclasses.replace(ROW, updated_at="2026-09-07T00:00:00Z"), since)
    assert not before_since(ROW, since)
    assert not before_since(dataclasses.replace(ROW, updated_at=None), since)
    assert not before_since(dataclasses.replace(ROW, updated_at="garbage"), since)
    assert not before_since(ROW, None)


def test_plan_counts_the_filtered_only_when_any() -> None:
    """The plan names other_mode / before_since only when a filter left threads out."""
    assert [n for n, _ in DecisionCounts.of([NEW]).counts][-1] == "terminal"
    counts = dict(DecisionCounts.of([NEW, OTHER_MODE, OTHER_MODE, BEFORE_SINCE]).counts)
    assert counts["other_mode"] == 2 and counts["before_since"] == 1
