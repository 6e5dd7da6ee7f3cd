"""`-q`, `-v` and `--json` on the long commands (issue 40 item 4): `--json` prints one JSON
object (a JSON array for a list) on stdout; `-q` and `-v` together are one usage error."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register
from pplx_archiver.cli._app import app
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from tests.e2e.conftest import run_cli, sim_args


def _invoke(*args: str) -> tuple[int, str, str]:
    _register()
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _one_json(out: str) -> object:
    lines = out.splitlines()
    assert len(lines) == 1, out
    return orjson.loads(lines[0])


def test_json_quiet_and_verbose_on_the_long_commands(tmp_path: Path) -> None:
    out = tmp_path / "a"
    with serve_in_thread(SimConfig(threads=6)) as sim:
        open_rate = ("--rate", "1000", "--burst", "100")  # the pacing is not what is tested
        assert run_cli(["batch", *sim_args(sim, out, *open_rate)], out).exit_code == 0
        session = ["--base-url", sim.base_url, "--session-token", sim.session_token]
        code, body, _ = _invoke("usage-backfill", "-o", str(out), "--json", "-q", *session)
        assert code == 0 and _one_json(body)["threads"] == 6  # type: ignore[index]
        code, body, _ = _invoke("spaces", "--json", *session)
        assert code == 0 and isinstance(_one_json(body), list)
        code, body, _ = _invoke("auth", "check", "--json", *session)
        checked = _one_json(body)
        assert code == 0 and checked["exit_code"] == 0  # type: ignore[index]
        assert checked["accounts"][0]["thread_detail"] == "ok"  # type: ignore[index]
        assert sim.session_token not in body
    o = ["-o", str(out)]
    code, body, _ = _invoke("verify", *o, "--json", "-q", "--jobs", "1")
    report = _one_json(body)
    assert code == 0 and report["ok"] is True and report["threads"] == 6  # type: ignore[index]
    code, body, _ = _invoke("re-render", *o, "--dry-run", "--json", "--jobs", "1")
    assert code == 0 and _one_json(body)["threads"] == 6  # type: ignore[index]
    code, body, _ = _invoke("site", *o, "--to", str(tmp_path / "site"), "--json", "--jobs", "1")
    assert code == 0 and _one_json(body)["threads"] == 6  # type: ignore[index]
    code, body, _ = _invoke("relations", *o, "--json", "-v")
    assert code == 0 and _one_json(body)["threads"] == 6  # type: ignore[index]
    code, body, _ = _invoke("assets-backfill", *o, "--json", "-q")
    assert code == 0 and _one_json(body)["threads"] == 6  # type: ignore[index]
    code, body, _ = _invoke("reindex", *o, "--json", "-q")
    assert code == 0 and _one_json(body)["threads"] == 6  # type: ignore[index]


@pytest.mark.parametrize(
    "command",
    [
        "re-render",
        "site",
        "relations",
        "reindex",
        "assets-backfill",
        "usage-backfill",
        "sync-deleted",
    ],
)
def test_quiet_and_verbose_exclude_each_other(command: str, tmp_path: Path) -> None:
    code, _out, err = _invoke(command, "-o", str(tmp_path), "-q", "-v")
    assert code == 2 and err.strip() == "error: --verbose and --quiet exclude each other"


def test_forget_prints_json_and_is_quiet_when_asked(tmp_path: Path) -> None:
    """`forget --json` is one object naming what was forgotten and what was unknown; `-q`
    prints nothing for what was forgotten."""
    from pplx_archiver.shell.archive.index import Index

    out = tmp_path / "a"
    index = Index(out / "index" / "archive.sqlite")
    index.upsert("0a1b2c3d-0000-4000-8000-000000000001", "acct", status="not_found")
    index.upsert("0a1b2c3d-0000-4000-8000-000000000002", "acct", status="not_found")
    index.close()
    result = run_cli(
        ["forget", "0a1b2c3d-0000-4000-8000-000000000001", "nope", "-o", str(out), "--json"]
    )
    assert result.exit_code == 1
    data = orjson.loads(result.output.strip().splitlines()[-1])
    assert data == {"forgotten": ["0a1b2c3d-0000-4000-8000-000000000001"], "unknown": ["nope"]}
    quiet = run_cli(["forget", "0a1b2c3d-0000-4000-8000-000000000002", "-o", str(out), "-q"])
    assert quiet.exit_code == 0 and "forgot" not in quiet.output
