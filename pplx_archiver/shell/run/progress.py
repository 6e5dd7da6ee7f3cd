"""What a person at a terminal sees: a progress bar during the run and the closing summary.

The bar (rich, TTY only) shows done/total, threads/s, ETA, retries and 429s. The summary is
printed whatever the output is: archived / unchanged / failed / total, the failed threads,
and a ⚠ line counting answer-variant hits.
"""

from __future__ import annotations

import math
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from pplx_archiver.shell.run.scheduler import RunSummary

CounterSource = Callable[[], dict[str, int]]


class ProgressView:
    """A rich progress bar fed by the scheduler's progress hook; silent when disabled."""

    def __init__(
        self, *, enabled: bool, stream: IO[str] | None = None, counters: CounterSource | None = None
    ) -> None:
        self.enabled = enabled
        self._counters = counters or dict
        self._started = time.monotonic()
        self._progress: Progress | None = None
        self._task: Any = None
        if enabled:
            console = Console(file=stream, stderr=stream is None)
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]:.1f} threads/s"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("retries {task.fields[retries]} · 429s {task.fields[limited]}"),
                console=console,
                transient=False,
            )

    def __enter__(self) -> ProgressView:
        if self._progress is not None:
            self._progress.start()
            self._task = self._progress.add_task(
                "archiving", total=None, rate=0.0, retries=0, limited=0
            )
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, kind: str, summary: RunSummary) -> None:
        """Scheduler hook: one thread listed, or one reached a final state. While the
        listing runs the bar says how many threads it listed so far."""
        if self._progress is None:
            return
        elapsed = max(time.monotonic() - self._started, 1e-6)
        counters = self._counters()
        listing = kind == "listed" or not summary.plan
        self._progress.update(
            self._task,
            description=f"listed {summary.listed}, archiving" if listing else "archiving",
            completed=summary.done,
            total=summary.to_fetch or None,
            rate=summary.archived / elapsed,
            retries=counters.get("retries", 0),
            limited=counters.get("rate_limited", 0),
        )


def meter_text(label: str, done: int, total: int | None, elapsed: float) -> str:
    """``label: 120/2000 (6 %) · 3.2/s · ETA 9:47`` (no total: ``label: 120 · 3.2/s``)."""
    rate = done / elapsed if elapsed > 0 else 0.0
    if not total:
        return f"{label}: {done} · {rate:.1f}/s"
    left = max(total - done, 0)
    eta = _clock_text(left / rate) if rate > 0 else "?"
    return f"{label}: {done}/{total} ({100 * done // total} %) · {rate:.1f}/s · ETA {eta}"


def _clock_text(seconds: float) -> str:
    hours, rest = divmod(math.ceil(seconds), 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Meter:
    """A ``progress(done, total)`` hook showing :func:`meter_text` on one stderr line,
    rewritten in place at most every ``every`` seconds; on a terminal only (else silent)."""

    def __init__(
        self,
        label: str,
        *,
        stream: IO[str] | None = None,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        every: float = 0.25,
    ) -> None:
        self.label = label
        self._stream = stream if stream is not None else sys.stderr
        self.enabled = self._stream.isatty() if enabled is None else enabled
        self._clock = clock
        self._started = clock()
        self._shown_at = -math.inf
        self._every = every
        self._width = 0

    def __call__(self, done: int, total: int | None = None) -> None:
        if not self.enabled:
            return
        now = self._clock()
        if now - self._shown_at < self._every and done != total:
            return
        self._shown_at = now
        text = meter_text(self.label, done, total, now - self._started)
        pad = " " * max(0, self._width - len(text))
        self._width = len(text)
        self._stream.write("\r" + text + pad)
        self._stream.flush()

    def __enter__(self) -> Meter:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.enabled and self._width:
            self._stream.write("\n")
            self._stream.flush()


def summary_text(summary: RunSummary, *, out_dir: str, log_file: Path | None = None) -> str:
    """The closing lines of a run, for people (the RUN_SUMMARY event is for machines).

    Failed threads are listed with their titles; the last line names the run's log file,
    where every per-thread event is.
    """
    lines = [
        f"{summary.command}: archived {summary.archived} · unchanged {summary.unchanged} · "
        f"failed {summary.failed} · total {summary.total}"
        + (f" · deleted/expired {summary.terminal}" if summary.terminal else "")
        + (f" · other modes {summary.skipped_mode}" if summary.skipped_mode else "")
        + (f" · before --since {summary.skipped_since}" if summary.skipped_since else "")
        + f"  ({summary.elapsed_s:.1f} s)"
    ]
    for failure in summary.failures[:20]:
        where = f" at {failure['json_path']}" if failure.get("json_path") else ""
        title = _one_line(str(failure.get("title") or "untitled"))
        lines.append(f"  failed {failure['thread_uuid']} “{title}”{where}: {failure['error']}")
    if len(summary.failures) > 20:
        lines.append(f"  … and {len(summary.failures) - 20} more (see `pplx-export status`)")
    lines += incomplete_lines(summary)
    if summary.findings:
        counts = ", ".join(f"{k} {n}" for k, n in sorted(summary.findings.items()))
        lines.append(f"⚠ new findings: {counts}")
        lines.append(f"  list them: pplx-export alerts --out {shlex.quote(out_dir)} --run last")
    if summary.new_versions:
        lines.append(
            f"{summary.new_versions} thread(s) changed on the server; earlier versions kept "
            "(pplx-export history THREAD)"
        )
    if summary.interrupted:
        lines.append("interrupted: the archive is consistent; run the same command to continue")
    if log_file is not None and log_file.exists():
        lines.append(f"log: {log_file}")
    return "\n".join(lines)


def incomplete_lines(summary: RunSummary) -> list[str]:
    """The threads archived without a report or asset (named; the next run retries them)."""
    if not summary.incomplete:
        return []
    lines = [f"⚠ incomplete {len(summary.incomplete)}: a report or asset could not be fetched"]
    for item in summary.incomplete[:20]:
        title = _one_line(str(item.get("title") or "untitled"))
        what = "report.md" if item.get("report_missing") else "assets"
        names = ", ".join(_one_line(str(n), 30) for n in item.get("assets_missing", [])[:3])
        lines.append(f"  incomplete {item['thread_uuid']} “{title}”: {what} missing ({names})")
    if len(summary.incomplete) > 20:
        lines.append(f"  … and {len(summary.incomplete) - 20} more (see `pplx-export status`)")
    return lines


def _one_line(text: str, limit: int = 60) -> str:
    """A title safe for one terminal line: control characters replaced, shortened."""
    clean = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"
