"""A sync converges to a complete, valid archive; the index is derived and can be rebuilt."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import sim_post
from tests.reliability.conftest import (
    index_statuses,
    run_cli,
    sim_args,
    sim_get,
    truth_uuids,
)

FAST = ("--rate", "1000", "--burst", "100")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _one_attempt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "one-attempt.toml"
    config.write_text("max_attempts = 1\nmax_retry_seconds = 1\n")
    monkeypatch.setenv("PPLX_CONFIG", str(config))


def test_failed_connection_then_sync_archives_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that cannot connect exits 7 naming the host, logs why, and does not let the
    next sync stop early: that sync archives every thread."""
    _one_attempt(tmp_path, monkeypatch)
    with serve_in_thread(SimConfig(threads=40, seed=3)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out, *FAST, "--limit", "8")], out).exit_code == 0
        port = _closed_port()
        args = ["sync", *sim_args(sim, out, *FAST)]
        args[args.index(sim.base_url)] = f"http://127.0.0.1:{port}"
        failed = run_cli(args, out)
        assert failed.exit_code == 7, failed.output
        assert f"127.0.0.1:{port}" in failed.output
        reasons = [e for e in failed.events if e["event"] == "RUN_FAILED"]
        assert reasons and reasons[0]["exit_code"] == 7
        result = run_cli(["sync", *sim_args(sim, out, *FAST, "--early-stop", "3")], out)
        assert result.exit_code == 0, result.output
        statuses = index_statuses(out)
        assert set(statuses) == truth_uuids(sim)
        assert set(statuses.values()) == {"done"}


def _folders(out: Path) -> list[Path]:
    return sorted(p.parent for p in out.glob("*/*/*/thread.json"))


def test_corrupt_files_are_healed_by_sync(tmp_path: Path) -> None:
    """Garbage, truncated or missing stored files are re-planned and rewritten by a sync."""
    with serve_in_thread(SimConfig(threads=30, seed=4)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        folders = _folders(out)
        (folders[-1] / "thread.json").write_bytes(b"garbage")  # oldest folders: past early stop
        raw = folders[-2] / "raw_entries.json"
        raw.write_bytes(raw.read_bytes()[:100])
        (folders[-3] / "raw_entries.json").unlink()
        status = run_cli(["status", "--out", str(out)])
        assert "missing or changed files" in status.output
        verify = run_cli(["verify", "--out", str(out), "--jobs", "1"])
        assert verify.exit_code == 1
        result = run_cli(["sync", *sim_args(sim, out, *FAST, "--early-stop", "3")], out)
        assert result.exit_code == 0, result.output
        archived = {e["thread_uuid"] for e in result.events if e["event"] == "THREAD_ARCHIVED"}
        assert len(archived) == 3
        assert run_cli(["verify", "--out", str(out), "--jobs", "1"]).exit_code == 0
        # A same-size change is found by the hashes of sync --full.
        md = folders[0] / "conversation.md"
        data = md.read_bytes()
        md.write_bytes(data[:-1] + (b"X" if data[-1:] != b"X" else b"Y"))
        full = run_cli(["sync", *sim_args(sim, out, *FAST, "--full")], out)
        assert full.exit_code == 0
        assert md.read_bytes() == data


def test_not_found_is_terminal_and_short_ids_resolve(tmp_path: Path) -> None:
    """An unknown id given to export becomes not_found (no retry, early stop stays on) and
    can be forgotten; an 8-character folder id resolves to its thread or is a usage error."""
    with serve_in_thread(SimConfig(threads=20, seed=8)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        some = sorted(index_statuses(out))[0]
        short = run_cli(["export", some[:8], *sim_args(sim, out)], out)
        assert short.exit_code == 0, short.output
        assert [e["thread_uuid"] for e in short.events if e["event"] == "THREAD_ARCHIVED"] == [some]
        unknown = run_cli(["export", "9659918d", *sim_args(sim, out)], out)
        assert unknown.exit_code == 2
        assert "short id" in unknown.output
        missing = "0badc0de-0000-4000-8000-000000000000"
        gone = run_cli(["export", missing, *sim_args(sim, out)], out)
        assert index_statuses(out)[missing] == "not_found", gone.output
        status = run_cli(["status", "--out", str(out)])
        assert "pending retry: 0" in status.output
        assert "early stop: enabled" in status.output
        assert "not found" in status.output
        sync = run_cli(["sync", *sim_args(sim, out, *FAST, "--early-stop", "3")], out)
        assert not [e for e in sync.events if e["event"] == "EARLY_STOP_DISABLED"]
        assert run_cli(["forget", missing, "--out", str(out)], out).exit_code == 0
        assert missing not in index_statuses(out)


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    """Index rows without the columns that name runs or run times."""
    index = Index(out / "index" / "archive.sqlite")
    try:
        rows = {}
        for row in index.iter_threads():
            data = {k: getattr(row, k) for k in row.__dataclass_fields__}
            for key in ("updated_in_run", "archived_at", "attempts", "listing", "last_updated_key"):
                data.pop(key)
            rows[row.uuid] = data
        return rows
    finally:
        index.close()


def _variants(out: Path) -> list[dict[str, Any]]:
    index = Index(out / "index" / "archive.sqlite")
    try:
        return [dict(v) for v in index.variants()]
    finally:
        index.close()


def test_reindex_rebuilds_a_deleted_index(tmp_path: Path) -> None:
    """With the index deleted and threads deleted upstream meanwhile, reindex restores every
    folder's row (orphans included), the variants and the terminal states; sync-deleted
    then finds the deleted ones."""
    with serve_in_thread(SimConfig(threads=30, seed=9, deleted_rate=0.1)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        threads = sim_get(sim, "/__sim/truth")["threads"]
        dead = [t["uuid"] for t in threads if t.get("era_state", "ok") != "ok"][:1]
        assert dead
        run_cli(["export", *dead, *sim_args(sim, out)], out)
        before = _rows(out)
        variants = _variants(out)
        assert variants  # the simulated account has answer variants to restore
        assert before[dead[0]]["status"] in ("deleted", "expired")
        done = sorted(u for u, r in before.items() if r["status"] == "done")
        gone = done[:3]
        assert sim_post(sim, "/__sim/mutate", {"delete": gone})["deleted"] == gone
        for name in ("archive.sqlite", "archive.sqlite-wal", "archive.sqlite-shm"):
            (out / "index" / name).unlink(missing_ok=True)
        refused = run_cli(["sync", *sim_args(sim, out, *FAST)], out)
        assert refused.exit_code != 0 and "reindex" in refused.output
        rebuilt = run_cli(["reindex", "--out", str(out)], out)
        assert rebuilt.exit_code == 0, rebuilt.output
        assert _rows(out) == before
        assert _variants(out) == [{**v} for v in variants]
        deleted = run_cli(["sync-deleted", *sim_args(sim, out)], out)
        assert deleted.exit_code == 0, deleted.output
        for uuid in gone:
            assert uuid in deleted.output or uuid[:8] in deleted.output
        assert sim_get(sim, "/__sim/stats")["requests"]


def test_corrupt_index_and_bad_registry_line(tmp_path: Path) -> None:
    """A garbage index is reported with the reindex hint; a bad registry line is reported by
    verify (not a crash) and dropped by reindex."""
    with serve_in_thread(SimConfig(threads=20, seed=10)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
        registry = out / "index" / "answer_variants_log.jsonl"
        lines = registry.read_bytes().splitlines(keepends=True)
        registry.write_bytes(b"".join([*lines[:1], b"{not json\n", *lines[1:], *lines[-1:]]))
        verify = run_cli(["verify", "--out", str(out), "--jobs", "1"])
        assert verify.exit_code == 1
        assert "bad_registry" in verify.output
        index = out / "index" / "archive.sqlite"
        for name in ("archive.sqlite-wal", "archive.sqlite-shm"):
            (out / "index" / name).unlink(missing_ok=True)
        index.write_bytes(b"this is not a database" * 100)
        # status: 0 or 2 (docs/exit-codes.md); a run that cannot open its index: 1
        for args, code in (
            (["status", "--out", str(out)], 2),
            (["sync", *sim_args(sim, out, *FAST)], 1),
        ):
            result = run_cli(args, out)
            assert result.exit_code == code, result.output
            assert "reindex --out" in result.output and "Traceback" not in result.output
            assert "<archive>" not in result.output
        assert run_cli(["reindex", "--out", str(out)], out).exit_code == 0
        verify = run_cli(["verify", "--out", str(out), "--jobs", "1"])
        assert verify.exit_code == 0, verify.output
        assert all(orjson.loads(line) for line in registry.read_bytes().splitlines())
