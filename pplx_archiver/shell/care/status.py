"""The archive report behind ``pplx-export status``: local and read-only, from the index.

Counts by state and by mode, the last run (command, times, summary), failures with their
reasons, threads pending retry, answer-variant hits, interruption records, degraded turns
(turns rendered with a note because part of their payload could not be read), the relation
edges per kind (once ``relations`` has run) and the credit usage totals by mode (once
``usage-backfill`` has run). Nothing is fetched and nothing is written.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator
from typing import Any

from pplx_archiver.core.relations.relations import counts as relation_counts
from pplx_archiver.shell.archive.file_check import Coverage, invalid_threads
from pplx_archiver.shell.archive.index import PAGE_ROWS, TERMINAL_STATUSES, Index, ThreadRow
from pplx_archiver.shell.archive.store import INDEX_DIR, Archive
from pplx_archiver.shell.archive.terminal_log import TERMINAL_LOG, read_terminal_log
from pplx_archiver.shell.care.changes import incomplete_reason, incomplete_records
from pplx_archiver.shell.care.relations import stored_edges
from pplx_archiver.shell.care.usage import UsageStore

MAX_LISTED = 50


@dataclasses.dataclass(slots=True)
class _Tally:
    """What the index rows count (by SQL) and list (the rows worth naming, read one by one)."""

    by_state: Counter[str] = dataclasses.field(default_factory=Counter)
    by_mode: Counter[str] = dataclasses.field(default_factory=Counter)
    failures: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    pending: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    interruptions: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    interruption_kinds: Counter[str] = dataclasses.field(default_factory=Counter)
    remote_deleted: int = 0
    not_found: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    invalid: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    degraded: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    tombstones: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    dates: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def add_tombstone(self, row: ThreadRow) -> None:
        """A thread the service said it no longer has, with the date it said so."""
        line = self.dates.get(row.uuid) or {}
        since = row.remote_deleted or line.get("at")
        self.tombstones.append(
            {"thread_uuid": row.uuid, "title": row.title, "state": row.status, "since": since}
        )

    def add_done(self, row: ThreadRow) -> None:
        if row.degraded_turns:
            self.degraded.append(
                {"thread_uuid": row.uuid, "path": row.path, "degraded_turns": row.degraded_turns}
            )

    def add(self, row: ThreadRow) -> None:
        if row.status == "not_found":
            self.not_found.append({"thread_uuid": row.uuid, "title": row.title, "error": row.error})
        if row.status == "done":
            self.add_done(row)
        elif row.status in TERMINAL_STATUSES:
            self.add_tombstone(row)
        if row.status == "failed":
            self.failures.append(
                {
                    "thread_uuid": row.uuid,
                    "title": row.title,
                    "error": row.error,
                    "json_path": row.error_path,
                    "attempts": row.attempts,
                }
            )
        if row.status in ("failed", "pending"):
            self.pending.append({"thread_uuid": row.uuid, "title": row.title, "status": row.status})

    def add_interrupted(self, row: ThreadRow) -> None:
        """The interruption records of one thread (the first :data:`MAX_LISTED` are listed)."""
        for item in row.interruptions or ():
            self.interruptions.append(
                {
                    "thread_uuid": row.uuid,
                    "path": row.path,
                    "location": item.get("location"),
                    "kind": str(item.get("kind", "unknown")),
                }
            )


def _last_run(archive: Archive) -> dict[str, Any] | None:
    last = archive.last_run()
    if last is None:
        return None
    return {
        "id": last.id,
        "command": last.command,
        "started_at": last.started_at,
        "finished_at": last.finished_at,
        "exit_code": last.exit_code,
        "error": (last.summary or {}).get("error"),
        "summary": last.summary,
    }


def _usage(archive: Archive) -> Any:
    usage_store = UsageStore(archive.index.path)
    try:
        return usage_store.totals_by_mode()
    finally:
        usage_store.close()


# Rows status names one by one: all but done ones, and done ones with degraded turns.
NOTABLE = "(status != 'done' OR degraded_turns > 0)"
INTERRUPTED = "(interruptions IS NOT NULL AND interruptions NOT IN ('', 'null', '[]'))"
KINDS = (
    "SELECT COALESCE(json_extract(j.value, '$.kind'), 'unknown'), COUNT(*) "
    "FROM threads AS t, json_each(t.interruptions) AS j "
    f"WHERE {INTERRUPTED} AND json_valid(t.interruptions) GROUP BY 1"
)


def _count(archive: Archive, tally: _Tally) -> None:
    """Threads by state, done ones by mode, tombstoned ones: aggregates, no row read."""
    select = archive.index.select
    by_state = "SELECT status, COUNT(*) FROM threads GROUP BY status"
    tally.by_state.update({str(state): int(n) for state, n in select(by_state)})
    by_mode = (
        "SELECT COALESCE(NULLIF(mode, ''), 'unknown'), COUNT(*) FROM threads "
        "WHERE status = 'done' GROUP BY 1"
    )
    tally.by_mode.update({str(mode): int(n) for mode, n in select(by_mode)})
    gone = "SELECT COUNT(*) FROM threads WHERE remote_deleted IS NOT NULL AND remote_deleted != ''"
    tally.remote_deleted = int(select(gone)[0][0])
    tally.interruption_kinds.update({str(kind): int(n) for kind, n in select(KINDS)})


def _rows(archive: Archive, where: str, page: int = PAGE_ROWS) -> Iterator[ThreadRow]:
    """The rows matching ``where`` in uuid order, read by pages."""
    query = f"SELECT * FROM threads WHERE {where} AND uuid > ? ORDER BY uuid LIMIT {page}"
    after = ""
    while rows := archive.index.select(query, (after,)):
        after = str(rows[-1]["uuid"])
        yield from (Index.thread_row(row) for row in rows)


def _files_checked(archive: Archive, checked: Coverage) -> dict[str, Any]:
    """What this report's file check covered, and the last complete pass of ``verify``."""
    rotation = archive.index.verify_rotation()
    return {
        "threads": checked.threads,
        "folders": checked.folders,
        "files_of": checked.files,
        "full": checked.full,
        "verified_pass_ended": rotation.covered_at if rotation else None,
    }


def collect(archive: Archive) -> dict[str, Any]:
    """The status report as a JSON-able dict (``status --json`` prints it as is)."""
    tally = _Tally(dates=read_terminal_log(archive.out / INDEX_DIR / TERMINAL_LOG))
    _count(archive, tally)
    for row in _rows(archive, NOTABLE):
        tally.add(row)
    for row in _rows(archive, INTERRUPTED, MAX_LISTED):
        tally.add_interrupted(row)
        if len(tally.interruptions) >= MAX_LISTED:
            break
    checked = Coverage()
    for item in invalid_threads(archive, checked):
        tally.invalid.append({"thread_uuid": item.uuid, "path": item.path, "problem": item.problem})
    variants = archive.index.variants()
    from pplx_archiver.shell.run.coverage import listing_gap_reason

    gap = listing_gap_reason(archive, invalid=bool(tally.invalid))
    edges = stored_edges(archive.index.path)
    incomplete = incomplete_records(archive)
    return {
        "early_stop": "enabled" if gap is None else f"disabled: {gap}",
        "not_found": tally.not_found[:MAX_LISTED],
        "not_found_count": len(tally.not_found),
        "invalid_files": tally.invalid[:MAX_LISTED],
        "invalid_files_count": len(tally.invalid),
        "files_checked": _files_checked(archive, checked),
        "registry_problems": [
            {"line": number, "problem": text} for number, text in archive.registry.problems
        ],
        "out": str(archive.out),
        "threads": sum(tally.by_state.values()),
        "by_state": dict(sorted(tally.by_state.items())),
        "by_mode": dict(sorted(tally.by_mode.items())),
        "remote_deleted": tally.remote_deleted,
        "tombstones": sorted(tally.tombstones, key=lambda t: str(t["since"] or ""))[:MAX_LISTED],
        "tombstones_count": len(tally.tombstones),
        "last_run": _last_run(archive),
        "failures": tally.failures,
        "pending_retry": len(tally.pending),
        "pending": tally.pending[:MAX_LISTED],
        "variant_hits": len(variants),
        "variant_threads": len({str(v.get("thread_uuid")) for v in variants}),
        "interruptions": sum(tally.interruption_kinds.values()),
        "interruption_kinds": dict(sorted(tally.interruption_kinds.items())),
        "interrupted_threads": tally.interruptions[:MAX_LISTED],
        "relations": relation_counts(edges) if edges else None,
        "usage": _usage(archive),
        "degraded_turns": sum(d["degraded_turns"] for d in tally.degraded),
        "degraded_threads": len(tally.degraded),
        "degraded": tally.degraded[:MAX_LISTED],
        "incomplete": incomplete[:MAX_LISTED],
        "incomplete_count": len(incomplete),
        "alerts": archive.alerts.counts(),
    }


def _later_lines(report: dict[str, Any]) -> list[str]:
    """Relations, credit usage and degraded turns of the status report."""
    lines: list[str] = []
    if report.get("relations"):
        relations = ", ".join(f"{n} {k}" for k, n in report["relations"].items())
        lines.append(f"relations: {relations}")
    if report.get("usage"):
        total = report["usage"]["total_cents"]
        modes = ", ".join(
            f"{m} {v['cents'] / 100:.2f} ({v['threads']} threads"
            + (f", {v['forbidden']} forbidden)" if v["forbidden"] else ")")
            for m, v in report["usage"]["by_mode"].items()
        )
        lines.append(f"credit usage: {total / 100:.2f} total; by mode: {modes}")
    if report["degraded_turns"]:
        lines.append(
            f"⚠ degraded turns: {report['degraded_turns']} in {report['degraded_threads']} "
            "threads (partly unreadable, rendered with a note; re-render after an upgrade)"
        )
        for item in report["degraded"]:
            lines.append(f"  {item['path']}: {item['degraded_turns']} degraded")
    else:
        lines.append("degraded turns: 0")
    if report["incomplete_count"]:
        lines.append(f"⚠ incomplete threads: {report['incomplete_count']}")
        for item in report["incomplete"]:
            lines.append(f"  {item['path']}: {incomplete_reason(item)}")
    else:
        lines.append("incomplete threads: 0")
    if report["alerts"]:
        counts = ", ".join(f"{n} {k}" for k, n in sorted(report["alerts"].items()))
        lines.append(f"alerts: {counts} (`pplx-export alerts` lists them)")
    return lines


def _last_run_lines(last: dict[str, Any] | None) -> list[str]:
    """The last run: command, times, exit code, its error and its counts."""
    if last is None:
        return ["last run: none"]
    ended = last["finished_at"] or "did not finish"
    code = "" if last.get("exit_code") is None else f", exit {last['exit_code']}"
    lines = [f"last run: {last['command']} started {last['started_at']}, ended {ended}{code}"]
    if last.get("error"):
        lines.append(f"  error: {last['error']}")
    summary = last["summary"] or {}
    keys = ("archived", "unchanged", "failed", "total", "threads", "rewritten_files")
    parts = [f"{k} {summary[k]}" for k in keys if k in summary]
    if parts:
        lines.append("  " + ", ".join(parts))
    return lines


def _checked_line(checked: dict[str, Any]) -> str:
    """What the file check covered: all files, or all folders and a share of the files."""
    if checked["full"]:
        line = f"stored files checked: all, of {checked['threads']} threads"
    else:
        line = (
            f"stored files checked: {checked['folders']} folders, the files of "
            f"{checked['files_of']} of {checked['threads']} threads (another share each run)"
        )
    ended = checked["verified_pass_ended"]
    return line + f"; last complete verify --sample pass: {ended or 'none'}"


def render_text(report: dict[str, Any]) -> str:
    """The status report for a person."""
    lines = [f"archive: {report['out']}", f"threads: {report['threads']}"]
    states = ", ".join(f"{n} {s}" for s, n in report["by_state"].items()) or "none"
    lines.append(f"  by state: {states}")
    modes = ", ".join(f"{n} {m}" for m, n in report["by_mode"].items()) or "none"
    lines.append(f"  by mode (done): {modes}")
    if report["remote_deleted"]:
        lines.append(f"  tombstoned (remote_deleted): {report['remote_deleted']}")
    lines.extend(_last_run_lines(report["last_run"]))
    lines.append(f"pending retry: {report['pending_retry']}")
    lines.append(f"next sync's early stop: {report['early_stop']}")
    lines.append(_checked_line(report["files_checked"]))
    if report["tombstones_count"]:
        lines.append(
            f"tombstoned (deleted, expired, not found; archived again when listed or "
            f"exported again): {report['tombstones_count']}"
        )
        for item in report["tombstones"]:
            lines.append(
                f"  {item['state']} {item['thread_uuid']} ({item['title'] or 'untitled'}) "
                f"since {item['since'] or 'unknown'}"
            )
    if report["invalid_files_count"]:
        lines.append(
            f"threads with missing or changed files (the next sync refetches them): "
            f"{report['invalid_files_count']}"
        )
        for item in report["invalid_files"]:
            lines.append(f"  {item['path']}: {item['problem']}")
    for item in report["registry_problems"]:
        lines.append(
            f"  registry line {item['line']}: {item['problem']} (`pplx-export reindex` repairs)"
        )
    for failure in report["failures"][:MAX_LISTED]:
        where = f" at {failure['json_path']}" if failure["json_path"] else ""
        lines.append(
            f"  failed {failure['thread_uuid']} ({failure['title'] or 'untitled'}), "
            f"{failure['attempts']} attempts: {failure['error']}{where}"
        )
    if report["variant_hits"]:
        lines.append(
            f"⚠ answer variants: {report['variant_hits']} in {report['variant_threads']} threads"
        )
    else:
        lines.append("answer variants: 0")
    kinds = ", ".join(f"{n} {k}" for k, n in report["interruption_kinds"].items())
    lines.append(f"interruptions: {report['interruptions']}" + (f" ({kinds})" if kinds else ""))
    lines.extend(_later_lines(report))
    return "\n".join(lines) + "\n"
