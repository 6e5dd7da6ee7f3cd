"""End to end: `pplx-export usage-backfill` against the simulator (403s, resume, idempotence)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from pplx_archiver.sim.sessions import ERA_B_COOKIE
from tests.e2e.conftest import run_cli, sim_args


def _usage_rows(out: Path) -> dict[str, tuple[str, int | None]]:
    """thread uuid → (status, usage_cents) from the index's usage table."""
    db = sqlite3.connect(out / "index" / "archive.sqlite")
    try:
        rows = db.execute("SELECT thread_uuid, status, usage_cents FROM usage").fetchall()
    finally:
        db.close()
    return {str(u): (str(s), c) for u, s, c in rows}


def test_usage_backfill_records_usage_and_403s_resumes_and_asks_nothing_twice(
    tmp_path: Path,
) -> None:
    """Usage and 403s are stored; a limited run resumes; a third run sends no request."""
    out = tmp_path / "archive"
    with serve_in_thread(SimConfig(threads=14)) as sim:
        assert run_cli(["batch", *sim_args(sim, out, "--rate", "500")], out).exit_code == 0
        fast = ("--usage-rate", "500")
        first = run_cli(["usage-backfill", *sim_args(sim, out, *fast, "--limit", "5")], out)
        assert first.exit_code == 0, first.output
        assert len(_usage_rows(out)) == 5
        second = run_cli(["usage-backfill", *sim_args(sim, out, *fast)], out)
        assert second.exit_code == 0, second.output
        assert "5 already settled" in second.output
        rows = _usage_rows(out)
        assert len(rows) == 14
        assert sorted(s for s, _ in rows.values()).count("forbidden") == 2
        assert any(e.get("event") == "USAGE_FORBIDDEN" for e in first.events + second.events)
        # The stored cents are the simulator's answers, asked by context uuid.
        index = Index(out / "index" / "archive.sqlite")
        expected = 0
        for row in index.iter_threads("done"):
            context = (row.listing or {}).get("context_uuid") or row.uuid
            url = f"{sim.base_url}/rest/billing/credits/thread-usage"
            answer = httpx.get(
                url, params={"thread_id": context}, cookies={ERA_B_COOKIE: sim.session_token}
            )
            if answer.status_code == 200:
                expected += answer.json()["usage_cents"]
                assert rows[row.uuid] == ("ok", answer.json()["usage_cents"])
            else:
                assert answer.status_code == 403 and rows[row.uuid][0] == "forbidden"
        index.close()
        third = run_cli(["usage-backfill", *sim_args(sim, out, *fast)], out)
        assert third.exit_code == 0
        assert "0 fetched, 0 forbidden, 0 failed, 14 already settled" in third.output
        status = run_cli(["status", "--out", str(out)], out)
        assert f"credit usage: {expected / 100:.2f} total" in status.output


def test_usage_backfill_without_an_archive_exits_2(tmp_path: Path) -> None:
    """--out pointing at a folder that is not an archive is a usage error on one line."""
    result = run_cli(["usage-backfill", "--out", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: no archive at")
