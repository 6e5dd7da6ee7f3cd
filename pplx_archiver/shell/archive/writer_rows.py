"""The writer's index-row plans: findings, mode memos, runs, thread states, usage, relations.

:meth:`~pplx_archiver.shell.archive.writer.ArchiveWriter.apply` hands each plan of this kind
to :func:`apply_row_plan`; nothing else calls these functions. A terminal state is also
appended to ``index/terminal_states.jsonl`` so ``reindex`` can restore it.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

import orjson

from pplx_archiver.core.archive.writes import (
    Findings,
    Forget,
    ModeMemos,
    NotFound,
    Rekey,
    RelationEdges,
    RowPlan,
    RunFinish,
    RunOutcome,
    RunStart,
    ThreadFailed,
    ThreadTerminal,
    UsageAnswer,
    VerifyRotation,
)
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.terminal_log import append_terminal

if TYPE_CHECKING:
    from pplx_archiver.shell.archive.store import Archive

USAGE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS usage ("
    " thread_uuid TEXT PRIMARY KEY, status TEXT NOT NULL"
    " CHECK (status IN ('ok','forbidden','error')),"
    " usage_cents INTEGER, meter_usage TEXT, error TEXT, fetched_at TEXT NOT NULL)",
)
USAGE_COLUMNS = ("thread_uuid", "status", "usage_cents", "meter_usage", "error", "fetched_at")
RELATIONS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS relations ("
    " src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL, evidence TEXT NOT NULL,"
    " PRIMARY KEY (src, dst, kind))",
    "CREATE INDEX IF NOT EXISTS relations_dst ON relations (dst)",
)


def apply_row_plan(archive: Archive, plan: RowPlan) -> Any:
    """Apply one index-row plan to ``archive``; return what the plan's sender expects."""
    index = archive.index
    if isinstance(plan, Findings):  # the ``alerts`` table, once per fact
        return archive.alerts.record(plan.found, plan.run_id)
    if isinstance(plan, ModeMemos):
        index.put_mode_memos(plan.memos, plan.run_id)
        return len(plan.memos)
    if isinstance(plan, VerifyRotation):  # ``verify --sample``
        return index.put_verify_rotation(plan)
    if isinstance(plan, RunStart):
        return index.begin_run(plan.command, archive.now())
    if isinstance(plan, RunFinish):
        return index.finish_run(plan.run_id, archive.now(), plan.summary)
    if isinstance(plan, RunOutcome):
        return index.record_run_outcome(plan.run_id, plan.exit_code, plan.log_file, plan.error)
    if isinstance(plan, ThreadFailed):
        return _failed(archive, plan)
    if isinstance(plan, ThreadTerminal):
        return _terminal(archive, plan)
    if isinstance(plan, NotFound):
        return _not_found(archive, plan)
    if isinstance(plan, Forget):
        known = index.forget(plan.thread_uuid)
        if known:
            log_terminal(archive, plan.thread_uuid, "forgotten", "default", None)
        return known
    if isinstance(plan, Rekey):
        return index.rekey(plan.old, plan.new)
    if isinstance(plan, UsageAnswer):
        return _usage(archive, plan)
    return _relations(archive, plan)


def set_assets_complete(archive: Archive, uuid: str, complete: bool) -> None:
    """Record in the thread's completeness whether all its assets are stored (a row update
    of :class:`~pplx_archiver.core.archive.writes.AssetPlacement`)."""
    row = archive.index.get(uuid)
    if row is None:
        return
    completeness = dict(row.completeness or {})
    if complete:
        completeness.pop("assets_complete", None)
    else:
        completeness["assets_complete"] = False
    if completeness != dict(row.completeness or {}):
        archive.index.upsert(row.uuid, row.account, completeness=completeness)


def log_terminal(archive: Archive, uuid: str, state: str, account: str, title: str | None) -> None:
    """Keep a terminal state beside the index, so ``reindex`` can restore it."""
    append_terminal(archive.out, uuid, state, account=account, title=title, at=archive.now())


def _failed(archive: Archive, plan: ThreadFailed) -> None:
    fields: dict[str, Any] = {"updated_in_run": plan.run_id, "failed_at": archive.now()}
    if plan.title is not None:
        fields["title"] = plan.title
    previous = archive.index.get(plan.thread_uuid)
    account = previous.account if previous else plan.account
    archive.index.mark_failed(plan.thread_uuid, account, plan.error, plan.error_path, **fields)


def _terminal(archive: Archive, plan: ThreadTerminal) -> None:
    if plan.state not in ("deleted", "expired"):
        raise StoreError(f"terminal state must be deleted or expired, got {plan.state!r}")
    previous = archive.index.get(plan.thread_uuid)
    owner = previous.account if previous else plan.account
    archive.index.upsert(plan.thread_uuid, owner, status=plan.state, updated_in_run=plan.run_id)
    log_terminal(archive, plan.thread_uuid, plan.state, owner, previous.title if previous else None)


def _not_found(archive: Archive, plan: NotFound) -> bool:
    """Terminal when confirmed: the previous attempt also answered 404, or ``immediate`` for
    a thread never archived (fresh threads answer 404 for a while)."""
    previous = archive.index.get(plan.thread_uuid)
    was_404 = previous is not None and (
        previous.status == "not_found"
        or (previous.status == "failed" and (previous.error or "").startswith("NotFoundError"))
    )
    never_archived = previous is None or previous.status != "done"
    if not (was_404 or (plan.immediate and never_archived)):
        return False
    owner = previous.account if previous else "default"
    archive.index.upsert(
        plan.thread_uuid,
        owner,
        status="not_found",
        error=f"NotFoundError: {plan.error}",
        updated_in_run=plan.run_id,
    )
    log_terminal(
        archive, plan.thread_uuid, "not_found", owner, previous.title if previous else None
    )
    return True


def _usage(archive: Archive, plan: UsageAnswer) -> None:
    meters = None if plan.meters is None else orjson.dumps(list(plan.meters)).decode("utf-8")
    row = (plan.thread_uuid, plan.status, plan.cents, meters, plan.error, plan.fetched_at)
    try:
        with archive.index.transaction() as db:
            for statement in USAGE_SCHEMA:
                db.execute(statement)
            db.execute("INSERT OR REPLACE INTO usage VALUES (?, ?, ?, ?, ?, ?)", row)
    except sqlite3.Error as exc:
        raise StoreError(f"{archive.index.path}: cannot record usage: {exc}") from exc


def _relations(archive: Archive, plan: RelationEdges) -> int:
    try:
        with archive.index.transaction() as db:
            for statement in RELATIONS_SCHEMA:
                db.execute(statement)
            db.execute("DELETE FROM relations")
            db.executemany(
                "INSERT INTO relations (src, dst, kind, evidence) VALUES (?, ?, ?, ?)",
                list(plan.edges),
            )
    except sqlite3.Error as exc:
        raise StoreError(f"{archive.index.path}: cannot store relations: {exc}") from exc
    return len(plan.edges)
