"""The per-thread budgets (issue 44): counted on each page before decoding, named on breach."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.budgets import (
    Budgets,
    PageTally,
    body_values,
    depth_of,
    output_bytes,
)
from pplx_archiver.errors import BudgetError, PayloadError


def test_depth_of_counts_containers_and_stops_early() -> None:
    assert depth_of(1, 10) == 0
    assert depth_of({"a": [1, {"b": []}]}, 10) == 4
    deep: object = []
    for _ in range(500):
        deep = [deep]
    assert depth_of(deep, 20) == 21


def _depth(value: object) -> int:
    """The definition: a scalar is 0, a container one more than its deepest child."""
    if isinstance(value, dict):
        return 1 + max((_depth(c) for c in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(c) for c in value), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None)
@given(_JSON, st.integers(0, 12))
def test_depth_of_is_the_nesting_depth_or_one_past_the_stop(value: object, stop: int) -> None:
    """Of a value parsed from JSON (plain dicts and lists), as orjson gives it."""
    parsed = orjson.loads(orjson.dumps(value))
    depth = _depth(parsed)
    assert depth_of(parsed, stop) == (depth if depth <= stop else stop + 1)


def test_a_page_tally_checks_entries_blocks_and_depth() -> None:
    budgets = Budgets(entries=3, blocks=4, depth=8)
    tally = PageTally()
    tally.add("t", {"entries": [{"blocks": [1, 2]}, {}]}, budgets)
    with pytest.raises(BudgetError) as caught:
        tally.add("t", {"entries": [{"blocks": [1, 2, 3]}]}, budgets)
    assert caught.value.budget == "blocks"
    with pytest.raises(BudgetError) as caught:
        PageTally().add("t", {"entries": [{}] * 4}, budgets)
    assert caught.value.budget == "entries"
    assert "entries 4 > 3 (--max-thread-entries)" in str(caught.value)
    nested: object = {}
    for _ in range(10):
        nested = {"x": nested}
    with pytest.raises(BudgetError, match="depth"):
        PageTally().add("t", {"entries": [nested]}, budgets)


def test_a_budget_error_is_a_payload_error_at_the_thread() -> None:
    with pytest.raises(PayloadError) as caught:
        Budgets(turns=1).check("thread-1", "turns", 2)
    assert caught.value.path == "thread-1"


def test_values_and_output_bytes() -> None:
    assert body_values(b'{"a":[{},{}]}') == 4
    assert output_bytes({"a": b"12", "b": b"3"}, b"45", None) == 5
