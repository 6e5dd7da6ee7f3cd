"""The suite's own machinery (tests/conftest.py)."""

from __future__ import annotations

import sys

import pytest


@pytest.mark.heavy
def test_a_heavy_test_runs_with_no_tracer() -> None:
    """Under `make pytest` (coverage, xdist workers) a heavy test's call is untraced: it
    failed there while only pytest-cov's own Coverage object was stopped."""
    assert sys.gettrace() is None
