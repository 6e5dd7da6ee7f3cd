"""Assets end to end against the simulator: every version, reports, refresh, cap, backfill."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_get

THREADS = 60
_SIGNED = re.compile(r"(Signature|Expires|Key-Pair-Id)=(?!\*\*\*)")


@pytest.fixture(scope="module")
def sim() -> Iterator[RunningSim]:
    """60 threads (reports, versioned files, toolu_ handles); signed URLs live 15 minutes, so
    none expires between a thread's fetch and its downloads however slow the machine is."""
    with serve_in_thread(SimConfig(threads=THREADS)) as running:
        yield running


def _manifests(out: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    found = {}
    for path in out.glob("*/*/*/assets/manifest.json"):
        data = orjson.loads(path.read_bytes())
        found[data["thread_uuid"]] = (path.parent.parent, data)
    return found


def _batch(sim: RunningSim, out: Path, *extra: str) -> Any:
    args = ["batch", *sim_args(sim, out, "--concurrency", "4", "--rate", "500", "--burst", "50")]
    return run_cli([*args, *extra], out)


def _no_signed_query(out: Path) -> None:
    for log in (out / "index" / "logs").glob("*.jsonl"):
        text = log.read_text()
        assert not _SIGNED.search(text), log


def test_batch_archives_every_version(sim: RunningSim, tmp_path: Path) -> None:
    """Every report and asset version of the truth manifest is archived with its sha256, the
    right report version becomes report.md, handles are recorded, verify passes."""
    out = tmp_path / "archive"
    result = _batch(sim, out)
    assert result.exit_code == 0, result.output
    truth = sim_get(sim, "/__sim/truth")["threads"]
    manifests = _manifests(out)
    handles = 0
    for t in truth:
        if not t["assets"]:
            assert t["uuid"] not in manifests
            continue
        folder, manifest = manifests[t["uuid"]]
        entries = manifest["assets"]
        by_uuid = {e["uuid"]: e for e in entries}
        want: Counter[str] = Counter()
        for group in t["assets"]:
            root = by_uuid[group["uuid"]]
            want[root["file_name"]] += group["versions"]
            if not group["downloadable"]:
                handles += 1
                assert root["status"] == "handle" and "path" not in root
        assert Counter(e["file_name"] for e in entries) == want, t["uuid"]
        for entry in entries:
            if entry["status"] == "handle":
                continue
            assert entry["status"] == "stored", entry
            data = (folder / entry["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        report = t["report"]
        if report is None:
            assert not (folder / "report.md").exists()
            continue
        chosen = by_uuid[report["asset_uuid"]]
        assert chosen["version"] == report["version"]
        assert chosen["sha256"] == report["sha256"]
        head = f"# Document {report['asset_uuid'][:8]}"
        assert (folder / "report.md").read_text().startswith(head), t["uuid"]
    assert handles > 0
    _no_signed_query(out)
    check = run_cli(["verify", "--out", str(out), "--jobs", "1"], out)
    assert check.exit_code == 0, check.output


def test_size_cap_rejects_and_records(
    sim: RunningSim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above PPLX_MAX_ASSET_BYTES a version is recorded too_large, never stored, not retried."""
    monkeypatch.setenv("PPLX_MAX_ASSET_BYTES", "1500")
    out = tmp_path / "archive"
    result = _batch(sim, out, "--limit", "25")
    assert result.exit_code == 0, result.output
    large = [e for e in result.events if e["event"] == "ASSET_TOO_LARGE"]
    assert large and all(e["limit"] == 1500 for e in large)
    recorded = 0
    for folder, manifest in _manifests(out).values():
        for entry in manifest["assets"]:
            if entry["status"] == "too_large":
                recorded += 1
                assert "path" not in entry
        assert all(
            p.stat().st_size <= 1500 for p in (folder / "assets").iterdir() if p.suffix != ".json"
        )
    assert recorded == len(large)
    again = _batch(sim, out, "--limit", "25")
    assert "0 retry" in again.output  # too large is final, not retried


def test_backfill_refreshes_expired_urls_idempotently(sim: RunningSim, tmp_path: Path) -> None:
    """On an archive without assets, offline backfill records them missing; the stored URLs
    carry no valid signature (masked in raw files), so --online refreshes and downloads them;
    a second run changes nothing."""
    out = tmp_path / "archive"
    assert _batch(sim, out, "--limit", "30").exit_code == 0
    reports_before = {p: p.read_bytes() for p in out.glob("*/*/*/report.md")}
    assert reports_before
    for folder in list(out.glob("*/*/*/assets")):
        shutil.rmtree(folder)
    for path in reports_before:
        path.unlink()
    offline = run_cli(["assets-backfill", "--out", str(out), "--log-format", "json"], out)
    assert offline.exit_code == 0, offline.output
    assert "missing" in offline.output
    online_args = ["assets-backfill", *sim_args(sim, out), "--online", "--rate", "500"]
    online = run_cli(online_args, out)
    assert online.exit_code == 0, online.output
    assert [e for e in online.events if e["event"] == "ASSET_URL_REFRESHED"]
    assert {p: p.read_bytes() for p in out.glob("*/*/*/report.md")} == reports_before
    for _folder, manifest in _manifests(out).values():
        assert {e["status"] for e in manifest["assets"]} <= {"stored", "handle"}
    mtimes = {p: p.stat().st_mtime_ns for p in out.glob("*/*/*/**/*") if p.is_file()}
    again = run_cli(online_args, out)
    assert again.exit_code == 0
    assert "0 asset files written, 0 derived files rewritten" in again.output
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes
    _no_signed_query(out)
    check = run_cli(["verify", "--out", str(out), "--jobs", "1"], out)
    assert check.exit_code == 0, check.output
