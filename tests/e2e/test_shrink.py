"""The shrink guard end to end: a listing that lost 30 % marks nothing deleted and exits 8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.errors import EXIT_LISTING_SHRANK
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import CliResult, run_cli, sim_args, sim_post
from tests.shell.ping_server import ping_server

FAST = ("--concurrency", "8", "--rate", "1000", "--burst", "100")


def _no_404_retries(tmp_path: Path) -> None:
    """A vanished thread answers 404, which runs retry (new threads 404 briefly): not here."""
    config = tmp_path / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text("max_attempts = 1\n")


def _index_rows(out: Path) -> dict[str, tuple[str, str | None]]:
    index = Index(out / "index" / "archive.sqlite")
    try:
        return {row.uuid: (row.status, row.remote_deleted) for row in index.iter_threads()}
    finally:
        index.close()


def _remote_deleted_in_records(out: Path) -> set[str]:
    records = (orjson.loads(p.read_bytes()) for p in out.glob("*/*/*/thread.json"))
    return {r["uuid"] for r in records if r.get("remote_deleted")}


def _events(result: CliResult, name: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["event"] == name]


def test_a_listing_that_lost_30_percent_exits_8_and_tombstones_nothing(tmp_path: Path) -> None:
    """30 % of the threads vanish (unlisted, 404): `sync --check-deleted` archives the new
    thread, marks nothing deleted and exits 8; `--accept-shrink` then tombstones them."""
    _no_404_retries(tmp_path)
    with serve_in_thread(SimConfig(threads=60, seed=11)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        gone = set(sim_post(sim, "/__sim/mutate", {"vanish": 0.3})["vanished"])
        added = sim_post(sim, "/__sim/mutate", {"add": 1})["added"]
        assert 12 <= len(gone) <= 24  # about 30 % of 60

        held = run_cli(["sync", "--check-deleted", *sim_args(sim, out, *FAST)], out)
        assert held.exit_code == EXIT_LISTING_SHRANK, held.output
        assert f"{len(gone)} of the 60 threads" in held.output
        assert "--accept-shrink" in held.output
        rows = _index_rows(out)
        assert all(rows[u] == ("done", None) for u in gone)
        assert rows[added[0]][0] == "done"  # what was listed is still archived
        assert _remote_deleted_in_records(out) == set()
        (shrank,) = _events(held, "LISTING_SHRANK")
        assert (shrank["listed"], shrank["known"], shrank["missing"]) == (61 - len(gone), 60,
                                                                           len(gone))  # fmt: skip
        assert shrank["threshold"] == 0.05 and shrank["missing_ratio"] > 0.05
        assert not _events(held, "THREAD_REMOTE_DELETED")
        (summary,) = _events(held, "RUN_SUMMARY")
        assert summary["exit_code"] == EXIT_LISTING_SHRANK and summary["listing_shrank"]

        accepted = run_cli(
            ["sync", "--check-deleted", "--accept-shrink", *sim_args(sim, out, *FAST)], out
        )
        assert accepted.exit_code == 0, accepted.output
        rows = _index_rows(out)
        assert {u for u, (status, when) in rows.items() if status == "deleted" and when} == gone
        assert _remote_deleted_in_records(out) == gone
        only = {e["thread_uuid"] for e in _events(accepted, "ARCHIVE_ONLY_COPY")}
        assert only == gone
        assert all(e["path"] and e["title"] for e in _events(accepted, "ARCHIVE_ONLY_COPY"))


def test_sync_deleted_holds_a_shrunk_listing_until_accepted(tmp_path: Path) -> None:
    """`sync-deleted --online` confirms nothing on a shrunk listing (exit 8), then does."""
    _no_404_retries(tmp_path)
    with serve_in_thread(SimConfig(threads=40, seed=12)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        gone = set(sim_post(sim, "/__sim/mutate", {"vanish": 0.4})["vanished"])
        assert len(gone) >= 10

        with ping_server() as hc:
            args = ["sync-deleted", "--online", "--healthcheck", hc.url, *sim_args(sim, out)]
            held = run_cli(args, out)
        assert held.exit_code == EXIT_LISTING_SHRANK, held.output
        pings = [p.path.split("?")[0] for p in hc.pings]
        assert pings == ["/ping/secret-key/start", "/ping/secret-key/8"]  # a failure ping
        body = orjson.loads(hc.pings[1].body)
        assert body["exit_code"] == 8 and body["listing_shrank"]["missing"] == len(gone)
        assert "nothing confirmed or tombstoned" in held.output
        assert _remote_deleted_in_records(out) == set()
        assert _events(held, "LISTING_SHRANK")

        accepted = run_cli(["sync-deleted", "--online", "--accept-shrink", *sim_args(sim, out)],
                           out)  # fmt: skip
        assert accepted.exit_code == 0, accepted.output
        assert _remote_deleted_in_records(out) == gone
