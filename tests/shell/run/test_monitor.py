"""Health-check pings, the metrics textfile and the JSON summary of a run."""

from __future__ import annotations

import socket
from pathlib import Path

import orjson
import pytest

from pplx_archiver.errors import ConfigError
from pplx_archiver.shell.archive.index import RunRow
from pplx_archiver.shell.run import monitor
from tests.shell.ping_server import ping_server


def _run(**summary: object) -> RunRow:
    return RunRow(
        id=7,
        command="sync",
        started_at="2026-11-30T03:00:00Z",
        finished_at="2026-11-30T03:02:00Z",
        summary=summary,
        exit_code=None,
        log_file=None,
    )


def test_ping_posts_to_the_suffix_with_body_and_run_id() -> None:
    """A ping is a POST to <url><suffix> with the body and the run id as ``rid``."""
    with ping_server() as server:
        assert monitor.ping(server.url, "/start", run_id="r1") is None
        assert monitor.ping(server.url, monitor.ping_suffix("end", 3), b'{"x":1}') is None
    assert [(p.method, p.path) for p in server.pings] == [
        ("POST", "/ping/secret-key/start?rid=r1"),
        ("POST", "/ping/secret-key/3"),
    ]
    assert server.pings[1].body == b'{"x":1}'


def test_ping_failures_are_returned_not_raised() -> None:
    """A refused connection or an error status comes back as text; nothing is raised."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/x"  # bound, not listening
        assert monitor.ping(dead, "", timeout=2.0) == "ConnectError"
    with ping_server(status=500) as server:
        assert monitor.ping(server.url, "") == "HTTP 500"


def test_ping_suffixes_follow_healthchecks() -> None:
    """Start, success and failure map to /start, the URL itself and /<exit code>."""
    assert monitor.ping_suffix("start") == "/start"
    assert monitor.ping_suffix("end", 0) == ""
    assert monitor.ping_suffix("end", 5) == "/5"


def test_ping_url_checked_and_shown_without_its_key() -> None:
    """Only http(s) URLs are accepted, and messages never show the secret path."""
    assert monitor.check_ping_url("https://hc-ping.com/abc/") == "https://hc-ping.com/abc"
    with pytest.raises(ConfigError, match="not an http"):
        monitor.check_ping_url("ftp://hc-ping.com/abc")
    assert monitor.shown_url("https://hc-ping.com/secret-uuid") == "https://hc-ping.com/…uuid"
    assert monitor.shown_url("https://hc-ping.com/abc") == "https://hc-ping.com/…"


def test_summary_carries_counts_failures_and_outcome(tmp_path: Path) -> None:
    """The summary copies the run's counts and failures and adds exit code and log file."""
    run = _run(
        listed=10,
        archived=7,
        failed=1,
        unchanged=2,
        total=10,
        variant_hits=2,
        failures=[{"thread_uuid": "t", "title": "T", "error": "502", "json_path": None}],
    )
    summary = monitor.build_summary(
        "sync", run, exit_code=1, duration_s=1.23456, out_dir=tmp_path, log_file=tmp_path / "l"
    )
    assert summary["message_type"] == "summary" and summary["exit_code"] == 1
    assert (summary["archived"], summary["failed"], summary["variants_detected"]) == (7, 1, 2)
    assert summary["failures"] == [
        {"thread_uuid": "t", "title": "T", "reason": "502", "json_path": None}
    ]
    assert summary["duration_s"] == 1.235 and summary["log_file"] == str(tmp_path / "l")
    assert orjson.loads(monitor.summary_json(summary)) == summary


def test_metrics_textfile_has_every_gauge(tmp_path: Path) -> None:
    """The textfile names last success, thread counts, variants, duration and exit code."""
    summary = monitor.build_summary(
        "sync", _run(archived=3, failed=1, listed=4, variant_hits=1), exit_code=1,
        duration_s=2.5, out_dir=tmp_path, log_file=None,
    )  # fmt: skip
    body = monitor.metrics_text(
        summary,
        state_counts={"done": 9, "failed": 1},
        degraded=2,
        variants=4,
        last_success=_run(),
    )
    samples = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in body.splitlines()
        if not line.startswith("#")
    }
    assert samples['pplx_export_last_success_timestamp_seconds{command="sync"}'] == 1796007720.0
    assert samples['pplx_export_last_run_exit_code{command="sync"}'] == 1
    assert samples['pplx_export_last_run_duration_seconds{command="sync"}'] == 2.5
    assert samples['pplx_export_last_run_threads{command="sync",result="archived"}'] == 3
    assert samples['pplx_export_last_run_variants_detected{command="sync"}'] == 1
    assert samples["pplx_export_threads_total"] == 10
    assert samples["pplx_export_threads_archived"] == 9
    assert samples["pplx_export_threads_failed"] == 1
    assert samples["pplx_export_threads_degraded"] == 2
    assert samples["pplx_export_variants_detected"] == 4
    assert "# TYPE pplx_export_threads_degraded gauge" in body
    path = tmp_path / "pplx.prom"
    monitor.write_metrics(path, body)
    assert path.read_text() == body
    assert [p.name for p in tmp_path.iterdir()] == ["pplx.prom"]  # no temp file left


def test_metrics_path_must_have_a_folder(tmp_path: Path) -> None:
    """A metrics path in a missing folder is a usage error named after the option."""
    with pytest.raises(ConfigError, match="--metrics-file"):
        monitor.check_metrics_path(tmp_path / "missing" / "x.prom")
