"""Isolation every test gets: no user configuration or credential, no logging left behind.

A developer's or CI machine may have ``PPLX_*`` variables set or a stored credential in the
user config folder; no test may read them. Commands point the log sinks at their own files
and streams; each test starts from structlog's defaults so none inherits a sink of an earlier
one (a closed CLI runner stream, a finished run's log file). Directory fixtures may tighten
this further.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, settings

# Property tests measure no speed: no per-example deadline and no "too slow" health check
# (both fail at random on a busy machine). CI (CI=true) gets Hypothesis's "ci" profile
# underneath: the same examples on every run.
settings.register_profile(
    "pplx",
    settings.get_profile("ci" if settings.get_current_profile_name() == "ci" else "default"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("pplx")

# Switches of the test suite itself, not settings of the program under test.
SUITE_VARIABLES = frozenset({"PPLX_SOAK", "PPLX_UPDATE_GOLDEN"})


@pytest.fixture(autouse=True)
def _no_user_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PPLX_* settings and proxy variables from the environment are dropped; the config folder
    is the test's own."""
    for name in list(os.environ):
        proxy = name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
        if proxy or (name.startswith("PPLX_") and name not in SUITE_VARIABLES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PPLX_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("PPLX_LOG_DIR", str(tmp_path / "user-log"))


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Every test starts and ends with structlog's default configuration."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked ``heavy`` runs untraced (pytest-cov's ``no_cover``, and see
    :func:`pytest_runtest_call`) in the same run: it spends its time in the package's own
    Python code, where tracing costs most, and the lines it reaches are reached by traced
    tests too (docs/dev/architecture.md, the gate)."""
    for item in items:
        if item.get_closest_marker("heavy") is not None:
            item.add_marker(pytest.mark.no_cover)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A ``heavy`` test's call runs with no coverage tracer at all.

    pytest-cov's ``no_cover`` stops its own Coverage object only. In a pytest-xdist worker a
    second one runs beneath it (started with the worker process), and coverage.py resumes
    that one's tracer when the upper one stops: measured, the 2,000-thread account test ran
    traced (60 s of CPU against 30 s). Every running Coverage object is stopped here, and
    started again, oldest first, when the call ends."""
    import coverage

    stopped: list[coverage.Coverage] = []
    if item.get_closest_marker("heavy") is not None:
        while (running := coverage.Coverage.current()) is not None and len(stopped) < 8:
            running.stop()
            stopped.append(running)
    # A tracer still set once every Coverage object has stopped (seen once in a full run) is
    # set aside as well, for this thread and for the threads the test starts.
    left = sys.gettrace() if stopped else None
    left_threads = threading.gettrace() if stopped else None
    if left is not None or left_threads is not None:
        sys.settrace(None)
        threading.settrace(None)
    try:
        yield
    finally:
        if left is not None:
            sys.settrace(left)
        if left_threads is not None:
            threading.settrace(left_threads)
        for running in reversed(stopped):
            running.start()
