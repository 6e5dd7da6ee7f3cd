"""`verify` sees every kind of damage and names its repair (issue 44): a deleted variant
registry, a damaged search index, deleted or truncated asset files, a 0-byte or foreign
index. `reindex` keeps the variant records the registry lost; `sync --full` heals missing
assets; a 0-byte index makes `sync` refuse (as a deleted one does) instead of fetching the
whole account again."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import CliResult, run_cli, sim_args

FAST = ("--concurrency", "4", "--rate", "1000", "--burst", "100")


@pytest.fixture(scope="module")
def sim() -> Iterator[RunningSim]:
    with serve_in_thread(SimConfig(threads=30, seed=7)) as running:
        yield running


@pytest.fixture(scope="module")
def base(sim: RunningSim, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("damage") / "base"
    assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
    return out


def _copy(base: Path, tmp_path: Path) -> Path:
    out = tmp_path / "a"
    shutil.copytree(base, out)
    return out


def _verify(out: Path) -> CliResult:
    return run_cli(["verify", "--out", str(out), "--jobs", "1"])


def test_a_deleted_registry_is_seen_and_reindex_keeps_its_records(
    base: Path, tmp_path: Path
) -> None:
    out = _copy(base, tmp_path)
    registry = out / "index" / "answer_variants_log.jsonl"
    lines = registry.read_bytes().splitlines()
    assert lines, "the account has answer variants"
    registry.unlink()
    seen = _verify(out)
    assert seen.exit_code == 1
    assert "missing_registry" in seen.output and "pplx-export reindex" in seen.output
    assert run_cli(["reindex", "--out", str(out)], out).exit_code == 0
    assert len(registry.read_bytes().splitlines()) == len(lines)
    assert _verify(out).exit_code == 0


def test_a_damaged_search_index_is_seen(base: Path, tmp_path: Path) -> None:
    out = _copy(base, tmp_path)
    db = sqlite3.connect(out / "index" / "archive.sqlite")
    db.execute("UPDATE search_tri_data SET block = x'00112233' WHERE id > 10")
    db.commit()
    db.close()
    seen = _verify(out)
    assert seen.exit_code == 1
    assert "search_damaged" in seen.output and "pplx-export reindex" in seen.output
    found = run_cli(["search", "--out", str(out), "pandas"])
    assert found.exit_code != 0 and "search index is damaged" in found.output
    assert run_cli(["reindex", "--out", str(out)], out).exit_code == 0
    assert _verify(out).exit_code == 0


def test_damaged_assets_are_seen_and_sync_full_heals_them(
    sim: RunningSim, base: Path, tmp_path: Path
) -> None:
    out = _copy(base, tmp_path)
    files = sorted(p for p in out.glob("*/*/*/assets/*") if p.name != "manifest.json")
    assert len(files) >= 2
    files[0].unlink()
    files[1].write_bytes(files[1].read_bytes()[:10])
    seen = _verify(out)
    assert seen.exit_code == 1
    assert "missing_asset" in seen.output and "asset_hash" in seen.output
    assert "repair: pplx-export sync --full" in seen.output
    healed = run_cli(["sync", "--full", *sim_args(sim, out, *FAST)], out)
    assert healed.exit_code == 0, healed.output
    assert _verify(out).exit_code == 0


@pytest.mark.parametrize("content", [b"", b"hello, not a database\n"], ids=["empty", "foreign"])
def test_an_empty_or_foreign_index_is_refused_with_the_reindex_hint(
    sim: RunningSim, base: Path, tmp_path: Path, content: bytes
) -> None:
    out = _copy(base, tmp_path)
    for path in (out / "index").glob("archive.sqlite*"):
        path.unlink()
    (out / "index" / "archive.sqlite").write_bytes(content)
    refused = run_cli(["sync", *sim_args(sim, out, *FAST)], out)
    assert refused.exit_code != 0
    assert "pplx-export reindex" in refused.output
    assert not [e for e in refused.events if e["event"] == "THREAD_ARCHIVED"]
    for command in ("verify", "status"):
        result = run_cli([command, "--out", str(out)])
        assert result.exit_code != 0 and "reindex" in result.output
        assert "Traceback" not in result.output
    assert run_cli(["reindex", "--out", str(out)], out).exit_code == 0
    assert _verify(out).exit_code == 0


def test_reindex_keeps_the_credit_usage_the_service_gave(
    sim: RunningSim, base: Path, tmp_path: Path
) -> None:
    """Usage fetched by usage-backfill is a fact no folder holds: reindex keeps it."""
    out = _copy(base, tmp_path)
    fetched = run_cli(["usage-backfill", *sim_args(sim, out, "--usage-rate", "1000")], out)
    assert fetched.exit_code == 0, fetched.output

    def usage() -> object:
        report = run_cli(["status", "--out", str(out), "--json"])
        return orjson.loads(report.output)["usage"]

    before = usage()
    assert before
    assert run_cli(["reindex", "--out", str(out)], out).exit_code == 0
    assert usage() == before
