"""Every exit code reaches the JSON summary, the run history, the ping and the metrics."""

from __future__ import annotations

import contextvars
import json
from pathlib import Path
from typing import Any

import pytest
import typer

from pplx_archiver.cli._monitor import MonitorOptions, run_monitored
from pplx_archiver.cli._run import CommonOptions
from pplx_archiver.errors import (
    EXIT_AUTH,
    EXIT_CHALLENGE,
    EXIT_FAILURES,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    AuthError,
    ChallengeAbort,
    ConfigError,
    PplxError,
)
from pplx_archiver.shell.archive.index import Index
from tests.shell.ping_server import ping_server

LOG: contextvars.ContextVar[Path | None] = contextvars.ContextVar("LOG", default=None)

# Exit codes 6 (archive busy) and 7 (connection failure) belong to the locking and
# connection work; the monitoring reports whatever code a run ends with.
CASES: list[tuple[int, BaseException | None, str | None]] = [
    (EXIT_OK, None, None),
    (EXIT_FAILURES, None, None),
    (EXIT_USAGE, ConfigError("bad --rate"), "bad --rate"),
    (EXIT_AUTH, AuthError("logged out"), "logged out"),
    (EXIT_INTERRUPTED, KeyboardInterrupt(), "interrupted"),
    (EXIT_CHALLENGE, ChallengeAbort("Cloudflare challenged"), "Cloudflare challenged"),
    (6, PplxError("archive busy"), "archive busy"),
    (7, PplxError("host unreachable"), "host unreachable"),
]


def _fake_run(out: Path, code: int, cause: BaseException | None) -> Any:
    def inner(command: str, opts: Any) -> None:
        log = out / "index" / "logs" / f"{command}.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
        LOG.set(log)
        index = Index(out / "index" / "archive.sqlite")
        run = index.begin_run(command, "2026-12-01T03:00:00Z")
        index.finish_run(run, "2026-12-01T03:01:00Z", {"archived": 3, "failed": int(code == 1)})
        index.close()
        if cause is None:
            raise typer.Exit(code)
        try:
            raise cause
        except BaseException:
            raise typer.Exit(code) from None

    return inner


@pytest.mark.parametrize(("code", "cause", "error"), CASES, ids=[str(c[0]) for c in CASES])
def test_exit_code_flows_to_every_report(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    code: int,
    cause: BaseException | None,
    error: str | None,
) -> None:
    """The run's exit code is the process's, the summary's, the history's and the ping's."""
    out = tmp_path / "a"
    metrics = tmp_path / "m.prom"
    with ping_server() as hc:
        opts = CommonOptions(
            out=out, monitor=MonitorOptions(json=True, healthcheck=hc.url, metrics_file=metrics)
        )
        with pytest.raises(typer.Exit) as done:
            run_monitored("sync", opts, _fake_run(out, code, cause), LOG)
    assert done.value.exit_code == code
    summary = json.loads(capsys.readouterr().out)
    assert (summary["exit_code"], summary["ok"], summary["error"]) == (code, code == 0, error)
    assert summary["archived"] == 3 and summary["log_file"].endswith("sync.jsonl")
    ends = [p.path.split("?")[0] for p in hc.pings]
    assert ends == [
        "/ping/secret-key/start",
        "/ping/secret-key" + ("" if code == 0 else f"/{code}"),
    ]
    index = Index(out / "index" / "archive.sqlite")
    try:
        run = index.runs(1)[0]
    finally:
        index.close()
    assert run.exit_code == code and run.log_file == summary["log_file"]
    assert f'pplx_export_last_run_exit_code{{command="sync"}} {code}\n' in metrics.read_text()


def test_a_failed_metrics_write_changes_no_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """When the metrics folder vanished during the run, a warning is printed; exit stays 0."""
    out = tmp_path / "a"
    folder = tmp_path / "metrics"
    folder.mkdir()
    ok = _fake_run(out, 0, None)

    def inner(command: str, opts: Any) -> None:
        folder.rmdir()
        (tmp_path / "metrics").write_text("now a file")  # the folder is gone for good
        ok(command, opts)

    opts = CommonOptions(out=out, monitor=MonitorOptions(metrics_file=folder / "m.prom"))
    with pytest.raises(typer.Exit) as done:
        run_monitored("sync", opts, inner, LOG)
    assert done.value.exit_code == 0
    assert "warning: metrics file not written" in capsys.readouterr().err
