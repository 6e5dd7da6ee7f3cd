"""Filters that cost nothing (issue 37): `--mode` reruns make no thread request; `--since`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pplx_archiver.core.thread.timeparse import parse_ts
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_get, sim_post

FAST = ("--concurrency", "8", "--rate", "1000", "--burst", "100")


@pytest.fixture
def sim120() -> Iterator[RunningSim]:
    """A healthy 120-thread simulated account on loopback."""
    with serve_in_thread(SimConfig(threads=120)) as sim:
        yield sim


def _thread_requests(sim: RunningSim) -> int:
    return int(sim_get(sim, "/__sim/stats")["requests"].get("thread_detail", 0))


def _summary(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["event"] == "RUN_SUMMARY")


def _archived(events: list[dict[str, Any]]) -> set[str]:
    return {e["thread_uuid"] for e in events if e["event"] == "THREAD_ARCHIVED"}


def test_mode_reruns_make_no_thread_request(sim120: RunningSim, tmp_path: Path) -> None:
    """A first `sync --mode study` archives exactly the study threads without fetching the
    computer and council ones; a second makes no thread request at all; a thread of another
    mode that moved is fetched once and decided again."""
    out = tmp_path / "a"
    truth = sim_get(sim120, "/__sim/truth")["threads"]
    study = {t["uuid"] for t in truth if t["mode"] == "study" and t["era_state"] == "ok"}
    told = [t for t in truth if t["mode"] in ("computer", "council")]
    assert study and told

    first = run_cli(["sync", *sim_args(sim120, out, "--mode", "study", *FAST)], out)
    assert first.exit_code == 0, first.output
    assert _archived(first.events) == study
    summary = _summary(first.events)
    # computer tasks and council threads are told by their listing rows: never fetched
    assert summary["plan"]["other_mode"] >= len(told)
    fetched = summary["to_fetch"]
    assert fetched <= len(truth) - len(told)
    assert summary["skipped_mode"] == fetched - len(study) + summary["plan"]["other_mode"]
    assert {p.parts[-3] for p in out.glob("*/*/*/thread.json")} == {"study"}
    memos = _memos(out)
    assert len(memos) == fetched - len(study)  # every fetched thread of another mode
    assert not set(memos) & study

    before = _thread_requests(sim120)
    again = run_cli(["sync", *sim_args(sim120, out, "--mode", "study", *FAST)], out)
    assert again.exit_code == 0, again.output
    assert _thread_requests(sim120) == before  # only listing requests
    assert _summary(again.events)["thread_requests"] == 0
    assert not _archived(again.events)

    moved = next(u for u in memos if u not in study)
    sim_post(sim120, "/__sim/mutate", {"continue": [{"thread": moved, "turns": 1}]})
    before = _thread_requests(sim120)
    third = run_cli(["sync", *sim_args(sim120, out, "--mode", "study", *FAST)], out)
    assert third.exit_code == 0, third.output
    assert _summary(third.events)["to_fetch"] == 1  # the moved thread, decided again
    assert 1 <= _thread_requests(sim120) - before <= 2
    assert not _archived(third.events)
    assert _memos(out)[moved] != memos[moved]  # remembered at its new update time


def _memos(out: Path) -> dict[str, tuple[str, str]]:
    db = sqlite3.connect(out / "index" / "archive.sqlite")
    try:
        rows = db.execute("SELECT uuid, updated_key, mode FROM mode_memos").fetchall()
    finally:
        db.close()
    return {str(r[0]): (str(r[1]), str(r[2])) for r in rows}


def test_since_archives_only_threads_updated_since(sim120: RunningSim, tmp_path: Path) -> None:
    """`batch --since DATE` fetches only the threads listed as updated on or after DATE, and
    the next run without it lists everything (its early stop cannot trust a partial run)."""
    out = tmp_path / "a"
    truth = sorted(sim_get(sim120, "/__sim/truth")["threads"], key=lambda t: t["updated_at"])
    cut = truth[len(truth) * 3 // 4]["updated_at"][:16]  # to the minute: the newest quarter
    since_us = parse_ts(cut)
    assert since_us is not None
    recent = {t["uuid"] for t in truth if (parse_ts(t["updated_at"]) or 0) >= since_us}
    recent_ok = {t["uuid"] for t in truth if t["uuid"] in recent and t["era_state"] == "ok"}
    assert 0 < len(recent) < len(truth)

    before = _thread_requests(sim120)
    first = run_cli(["batch", *sim_args(sim120, out, "--since", cut, *FAST)], out)
    assert first.exit_code == 0, first.output
    assert _archived(first.events) == recent_ok
    summary = _summary(first.events)
    assert summary["since"] == f"{cut}:00Z"
    assert summary["to_fetch"] == len(recent)
    assert _thread_requests(sim120) - before <= 2 * len(recent)
    stops = [e for e in first.events if e["event"] == "LISTING_EARLY_STOP"]
    assert stops and stops[0]["why"] == "since"

    rest = run_cli(["sync", *sim_args(sim120, out, *FAST)], out)
    assert rest.exit_code == 0, rest.output
    assert [e for e in rest.events if e["event"] == "EARLY_STOP_DISABLED"]
    assert _archived(rest.events) == {t["uuid"] for t in truth if t["era_state"] == "ok"} - recent


@pytest.mark.parametrize("value", ["yesterday", "2026-02-30", "1999-12-31", "2999-01-01"])
def test_a_bad_since_is_a_one_line_usage_error(tmp_path: Path, value: str) -> None:
    """A date that is not one, not real or out of bounds stops with exit 2 and one line."""
    out = tmp_path / "a"
    result = run_cli(["sync", "--out", str(out), "--since", value])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: --since {value!r}"), result.output
    assert not out.exists()
