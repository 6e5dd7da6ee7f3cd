"""Monitoring of unattended runs: the JSON run summary, health-check pings, a metrics textfile.

* :func:`build_summary` turns a finished run (its row in the run history) into the one JSON
  object ``--json`` prints on stdout.
* :func:`ping` sends a healthchecks.io-style ping (``<url>/start``, ``<url>``,
  ``<url>/<exit code>``) with a short timeout; a ping that fails is reported, never raised,
  so monitoring cannot fail a run.
* :func:`metrics_text` renders a Prometheus textfile-collector file; :func:`write_metrics`
  replaces it atomically so the collector never reads half a file.

A health-check URL holds the check's secret key: it is shown only as ``scheme://host/…`` and
its last 4 characters; the metrics textfile is created 0600 (an existing one keeps its mode).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from pplx_archiver.core.schedules.schedule import mask_url
from pplx_archiver.errors import ConfigError
from pplx_archiver.shell.archive.fsutil import write_atomic
from pplx_archiver.shell.archive.index import RunRow

PING_TIMEOUT_S = 10.0
MAX_PING_BODY = 100_000  # healthchecks.io keeps the first 100 kB of a ping body
MAX_FAILURES = 50

# Run-summary counters copied from the RUN_SUMMARY event, in this order.
SUMMARY_COUNTS = (
    "listed",
    "to_fetch",
    "archived",
    "unchanged",
    "failed",
    "terminal",
    "skipped_mode",
    "skipped_since",
    "variant_hits",
    "interruptions",
    "thread_requests",
    "total",
)
RUN_RESULTS = (
    "listed",
    "archived",
    "unchanged",
    "failed",
    "terminal",
    "skipped_mode",
    "skipped_since",
)


# -- the JSON summary ---------------------------------------------------------------------


def build_summary(
    command: str,
    run: RunRow | None,
    *,
    exit_code: int,
    duration_s: float,
    out_dir: Path | None,
    log_file: Path | None,
    error: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The run's summary object: counts, failures with reasons, duration, log file, exit code."""
    event: Mapping[str, Any] = (run.summary if run is not None else None) or {}
    failures = []
    for item in list(event.get("failures") or ())[:MAX_FAILURES]:
        failures.append(
            {
                "thread_uuid": item.get("thread_uuid"),
                "title": item.get("title"),
                "reason": item.get("error"),
                "json_path": item.get("json_path"),
            }
        )
    summary: dict[str, Any] = {
        "message_type": "summary",
        "command": command,
        "exit_code": exit_code,
        "ok": exit_code == 0,
        "error": error,
        "run_id": run.id if run is not None else None,
        "started_at": run.started_at if run is not None else None,
        "finished_at": run.finished_at if run is not None else None,
        "duration_s": round(duration_s, 3),
        "out": str(out_dir) if out_dir is not None else None,
        "log_file": str(log_file) if log_file is not None else None,
        "dry_run": bool(event.get("dry_run", False)),
        "interrupted": bool(event.get("interrupted", False)),
    }
    for key in SUMMARY_COUNTS:
        value = event.get(key, 0)
        summary[key] = value if isinstance(value, int) else 0
    summary["variants_detected"] = summary["variant_hits"]
    summary["failures"] = failures
    if event.get("listing_shrank"):  # the shrink guard held the run (exit 8)
        summary["listing_shrank"] = event["listing_shrank"]
    if extra:
        summary.update(extra)
    return summary


def summary_json(summary: Mapping[str, Any]) -> bytes:
    """The summary as one line of JSON (keys in a fixed order)."""
    return orjson.dumps(dict(summary))


def deletion_report(log_file: Path | None) -> dict[str, Any] | None:
    """The fields of the last ``DELETION_CHECK`` event in a run's log file, if it logged one."""
    if log_file is None or not log_file.is_file():
        return None
    found: dict[str, Any] | None = None
    with log_file.open("rb") as fh:
        for line in fh:
            if b'"DELETION_CHECK"' not in line:
                continue
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(event, dict) and event.get("event") == "DELETION_CHECK":
                found = {k: v for k, v in event.items() if isinstance(v, int)}
    return found


# -- health-check pings -------------------------------------------------------------------


def check_ping_url(url: str) -> str:
    """``url`` without a trailing slash; a ConfigError when it is not an http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--healthcheck: not an http(s) URL: {shown_url(url)!r}")
    if parts.query or parts.fragment:
        raise ConfigError("--healthcheck: the URL must not have a query or fragment")
    return url.rstrip("/")


def shown_url(url: str) -> str:
    """A URL with its path (the secret ping key) hidden: ``https://hc-ping.com/…d1f2``."""
    return mask_url(url)


def ping_suffix(stage: str, exit_code: int = 0) -> str:
    """The path added to the check URL: ``/start``, nothing for success, ``/<code>`` else."""
    if stage == "start":
        return "/start"
    return "" if exit_code == 0 else f"/{exit_code}"


def ping(
    url: str,
    suffix: str,
    body: bytes = b"",
    *,
    run_id: str | None = None,
    timeout: float = PING_TIMEOUT_S,
    transport: httpx.BaseTransport | None = None,
) -> str | None:
    """POST one ping; return None when it was answered 2xx, else why it failed (never raises)."""
    params = {"rid": run_id} if run_id else None
    try:
        with httpx.Client(timeout=timeout, transport=transport, follow_redirects=True) as client:
            response = client.post(url + suffix, content=body[:MAX_PING_BODY], params=params)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}"
    except (httpx.InvalidURL, OSError, ValueError) as exc:  # bad URL, socket error
        return f"{type(exc).__name__}"
    if response.status_code >= 300:
        return f"HTTP {response.status_code}"
    return None


# -- Prometheus textfile ------------------------------------------------------------------


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


def _number(value: float) -> str:
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _metric(
    lines: list[str],
    name: str,
    help_text: str,
    samples: Iterable[tuple[Mapping[str, str], float | None]],
) -> None:
    rows = [(labels, value) for labels, value in samples if value is not None]
    if not rows:
        return
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} gauge")
    for labels, value in rows:
        assert value is not None
        inner = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
        lines.append(f"{name}{{{inner}}} {_number(value)}" if inner else f"{name} {_number(value)}")


_Samples = list[tuple[Mapping[str, str], float | None]]


def _run_metrics(
    summary: Mapping[str, Any], last_success: RunRow | None
) -> list[tuple[str, str, _Samples]]:
    """(name, help, samples) of the gauges about the run, labelled with its command."""
    cmd = {"command": str(summary.get("command", ""))}
    return [
        (
            "pplx_export_last_success_timestamp_seconds",
            "Unix time the last run of this command that exited 0 finished.",
            [(cmd, _epoch(last_success.finished_at) if last_success else None)],
        ),
        (
            "pplx_export_last_run_timestamp_seconds",
            "Unix time the last run of this command finished.",
            [(cmd, _epoch(summary.get("finished_at")))],
        ),
        (
            "pplx_export_last_run_exit_code",
            "Exit code of the last run of this command (0 = every thread archived).",
            [(cmd, float(summary.get("exit_code", 0)))],
        ),
        (
            "pplx_export_last_run_duration_seconds",
            "Wall-clock duration of the last run of this command.",
            [(cmd, float(summary.get("duration_s", 0.0)))],
        ),
        (
            "pplx_export_last_run_threads",
            "Threads of the last run by result.",
            [(cmd | {"result": r}, float(summary.get(r, 0))) for r in RUN_RESULTS],
        ),
        (
            "pplx_export_last_run_variants_detected",
            "Answer variants the last run detected.",
            [(cmd, float(summary.get("variants_detected", 0)))],
        ),
    ]


def _archive_metrics(
    state_counts: Mapping[str, int], degraded: int, variants: int
) -> list[tuple[str, str, _Samples]]:
    """(name, help, samples) of the gauges about the archive the run left."""
    return [
        (
            "pplx_export_threads_total",
            "Threads the archive's index knows, in any state.",
            [({}, float(sum(state_counts.values())))],
        ),
        (
            "pplx_export_threads_archived",
            "Threads archived completely or partly (state done).",
            [({}, float(state_counts.get("done", 0)))],
        ),
        (
            "pplx_export_threads_failed",
            "Threads whose last attempt failed (retried by the next run).",
            [({}, float(state_counts.get("failed", 0)))],
        ),
        (
            "pplx_export_threads_degraded",
            "Archived threads whose answer or assets are incomplete.",
            [({}, float(degraded))],
        ),
        (
            "pplx_export_variants_detected",
            "Answer variants registered in the archive.",
            [({}, float(variants))],
        ),
    ]


def metrics_text(
    summary: Mapping[str, Any],
    *,
    state_counts: Mapping[str, int],
    degraded: int,
    variants: int,
    last_success: RunRow | None,
) -> str:
    """The Prometheus textfile for one finished run and the archive it left."""
    lines: list[str] = []
    archive = _archive_metrics(state_counts, degraded, variants)
    for name, help_text, samples in _run_metrics(summary, last_success) + archive:
        _metric(lines, name, help_text, samples)
    return "\n".join(lines) + "\n"


def check_metrics_path(path: Path) -> Path:
    """``path`` made absolute; a ConfigError when its folder does not exist."""
    path = path.expanduser().absolute()
    if not path.parent.is_dir():
        raise ConfigError(f"--metrics-file: folder {path.parent} does not exist")
    if path.is_dir():
        raise ConfigError(f"--metrics-file: {path} is a folder")
    return path


def write_metrics(path: Path, text: str) -> None:
    """Replace the textfile atomically (temp file in the same folder, then rename): created
    0600, or with the mode of the file it replaces (a collector's group read set by hand)."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o600
    write_atomic(path, text.encode("utf-8"), mode=mode)


def failed_titles(runs: Sequence[RunRow]) -> dict[str, str]:
    """Thread titles named by the failures of recent runs (newest wins)."""
    titles: dict[str, str] = {}
    for run in reversed(runs):
        for item in (run.summary or {}).get("failures") or ():
            if isinstance(item, Mapping) and item.get("title") and item.get("thread_uuid"):
                titles[str(item["thread_uuid"])] = str(item["title"])
    return titles
