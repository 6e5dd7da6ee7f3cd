"""A simulator harvest re-renders byte-identically (--jobs 1 and 2) and passes verify."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.shell.archive_builders import snapshot


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No run reads the user's real config file or stored credential."""
    monkeypatch.setenv("PPLX_CONFIG_DIR", str(tmp_path / "config"))
    for var in ("PPLX_SESSION_TOKEN", "PPLX_BASE_URL", "PPLX_COOKIES", "PPLX_OUT"):
        monkeypatch.delenv(var, raising=False)


def _invoke(args: list[str]) -> tuple[int, str]:
    _register()
    res = CliRunner().invoke(app, args, catch_exceptions=False)
    return res.exit_code, res.output


def _events(out: Path, prefix: str) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    for path in sorted((out / "index" / "logs").glob(f"{prefix}-*.jsonl")):
        events += [orjson.loads(x) for x in path.read_bytes().splitlines() if x]
    return events


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_harvest_rerender_verify(tmp_path: Path) -> None:
    """After `batch` on 60 simulated threads, re-render rewrites nothing and verify is clean."""
    out = tmp_path / "archive"
    with serve_in_thread(SimConfig(threads=60)) as sim:
        code, output = _invoke(
            ["batch", "--out", str(out), "--base-url", sim.base_url, "--session-token",
             sim.session_token, "--log-format", "json", "--rate", "500", "--burst", "50"]
        )  # fmt: skip
        assert code == 0, output
    before = snapshot(out)
    assert sum(1 for k in before if k.endswith("thread.json")) >= 50
    for jobs in ("1", "2"):
        code, output = _invoke(["re-render", "--out", str(out), "--jobs", jobs, "--thread-json"])
        assert code == 0, output
        assert "rewrote 0 files in 0 threads" in output
    assert snapshot(out) == before
    assert not [e for e in _events(out, "re-render") if e["event"] == "ANSWER_VARIANT_DETECTED"]

    # Damage a third of the derived files; --jobs 2 rebuilds exactly the harvested bytes.
    derived = sorted(k for k in before if k.endswith(".md") and "/assets/" not in k)[::3]
    for rel in derived:
        (out / rel).write_bytes(b"damaged\n")
    code, output = _invoke(["verify", "--out", str(out), "--jobs", "2"])
    assert code == 1 and output.count("rerender_mismatch") == len(derived)
    code, output = _invoke(["re-render", "--out", str(out), "--jobs", "2"])
    assert code == 0 and f"rewrote {len(derived)} files" in output
    assert {k: v[0] for k, v in snapshot(out).items()} == {k: v[0] for k, v in before.items()}
    code, output = _invoke(["verify", "--out", str(out)])
    assert code == 0, output

    code, output = _invoke(["status", "--out", str(out), "--json"])
    report = orjson.loads(output)
    assert report["by_state"].get("done") == sum(report["by_mode"].values()) >= 50
    assert report["last_run"]["command"] == "re-render"
