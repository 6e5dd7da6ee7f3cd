"""A tombstone is a state, not a verdict (issue 44): a thread tombstoned as deleted that is
listed or exported again is archived again, with one THREAD_RETURNED finding; `status` lists
tombstones with their date; `reindex` does not bring a returned thread's tombstone back."""

from __future__ import annotations

from pathlib import Path

import orjson

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_get, sim_post

FAST = ("--concurrency", "4", "--rate", "1000", "--burst", "100")


def _row(out: Path, uuid: str) -> tuple[str, str | None]:
    index = Index(out / "index" / "archive.sqlite")
    try:
        row = index.get(uuid)
        assert row is not None
        return row.status, row.remote_deleted
    finally:
        index.close()


def _record(out: Path, uuid: str) -> dict[str, object]:
    (path,) = out.glob(f"*/*/*_{uuid[:8]}/thread.json")
    record: dict[str, object] = orjson.loads(path.read_bytes())
    return record


def _status(out: Path) -> dict[str, object]:
    result = run_cli(["status", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report: dict[str, object] = orjson.loads(result.output)
    return report


def test_a_deleted_thread_listed_again_is_archived_again(tmp_path: Path) -> None:
    out = tmp_path / "a"
    with serve_in_thread(SimConfig(threads=20, seed=3)) as sim:
        victim = sim_get(sim, "/__sim/truth")["threads"][4]["uuid"]
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        turns = _record(out, victim)["counts"]["turns"]  # type: ignore[index]
        sim_post(sim, "/__sim/mutate", {"delete": [victim]})
        gone = run_cli(["sync-deleted", "--online", *sim_args(sim, out)], out)
        assert gone.exit_code == 0, gone.output
        assert _row(out, victim)[0] == "deleted"
        report = _status(out)
        tombs: list[dict[str, str]] = report["tombstones"]  # type: ignore[assignment]
        (tomb,) = tombs
        assert tomb["thread_uuid"] == victim and tomb["state"] == "deleted" and tomb["since"]
        assert "since 20" in run_cli(["status", "--out", str(out)]).output

        sim_post(sim, "/__sim/mutate", {"restore": [victim]})
        sim_post(sim, "/__sim/mutate", {"continue": [{"thread": victim, "turns": 2}]})
        back = run_cli(["sync", *sim_args(sim, out, *FAST)], out)
        assert back.exit_code == 0, back.output
        returned = [e for e in back.events if e["event"] == "THREAD_RETURNED"]
        assert [e["thread_uuid"] for e in returned] == [victim]
        assert returned[0]["previous_state"] == "deleted"
        assert _row(out, victim) == ("done", None)
        record = _record(out, victim)
        assert record["counts"]["turns"] == turns + 2  # type: ignore[index]
        assert "remote_deleted" not in record
        assert _status(out)["tombstones_count"] == 0

        again = run_cli(["sync", "--force", *sim_args(sim, out, *FAST)], out)
        assert not [e for e in again.events if e["event"] == "THREAD_RETURNED"]
    assert run_cli(["reindex", "--out", str(out)], out).exit_code == 0
    assert _row(out, victim)[0] == "done"


def test_export_of_a_tombstoned_id_fetches_it(tmp_path: Path) -> None:
    out = tmp_path / "b"
    with serve_in_thread(SimConfig(threads=8, seed=3)) as sim:
        victim = sim_get(sim, "/__sim/truth")["threads"][2]["uuid"]
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        sim_post(sim, "/__sim/mutate", {"delete": [victim]})
        assert run_cli(["sync-deleted", "--online", *sim_args(sim, out)], out).exit_code == 0
        sim_post(sim, "/__sim/mutate", {"restore": [victim]})
        result = run_cli(["export", victim, *sim_args(sim, out)], out)
    assert result.exit_code == 0, result.output
    assert [e["thread_uuid"] for e in result.events if e["event"] == "THREAD_ARCHIVED"] == [victim]
    assert _row(out, victim) == ("done", None)
