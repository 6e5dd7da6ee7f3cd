"""The suite's own scheduling aid (tests/conftest.py): long tests first in every share."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import longest_first_per_share


@dataclass
class _Item:
    nodeid: str
    heavy: bool = False

    def get_closest_marker(self, name: str) -> Any:
        return object() if name == "heavy" and self.heavy else None


def _shares(order: list[Any], workers: int) -> list[list[Any]]:
    """The contiguous shares worksteal gives each worker (remaining // workers left)."""
    out, start, remaining = [], 0, len(order)
    for share in range(workers):
        size = remaining // (workers - share)
        out.append(order[start : start + size])
        start, remaining = start + size, remaining - size
    return out


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_every_share_starts_with_its_long_tests_and_nothing_is_lost(workers: int) -> None:
    items = [_Item(f"tests/core/test_{i}.py::t") for i in range(50)]
    items[7].heavy = items[30].heavy = True
    items += [_Item(f"tests/e2e/test_{i}.py::t") for i in range(9)]
    items += [_Item(f"tests/shell/test_{i}.py::t") for i in range(20)]
    order: list[Any] = longest_first_per_share(items, workers)  # type: ignore[arg-type]
    assert sorted(it.nodeid for it in order) == sorted(it.nodeid for it in items)
    shares = _shares(order, workers)
    heavy_first = [share[0] for share in shares[:2]]
    assert {it.nodeid for it in heavy_first} == {items[7].nodeid, items[30].nodeid}
    for share in shares:
        ranks = ["e2e" in it.nodeid or it.heavy for it in share]
        assert ranks == sorted(ranks, reverse=True)  # the long ones lead, none after a short one
        assert sum(ranks) in (9 // workers + 2, 9 // workers + 1, 9 // workers, 9 // workers - 1)
    rest = [it.nodeid for it in order if "e2e" not in it.nodeid and not it.heavy]
    assert rest == [it.nodeid for it in items if "e2e" not in it.nodeid and not it.heavy]


@pytest.mark.heavy
def test_a_heavy_test_runs_with_no_tracer() -> None:
    """Under `make pytest` (coverage, xdist workers) a heavy test's call is untraced: it
    failed there while only pytest-cov's own Coverage object was stopped."""
    assert sys.gettrace() is None
