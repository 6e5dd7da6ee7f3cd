"""The ``alerts`` table of the index: every finding recorded once per new fact.

:meth:`AlertBook.record` inserts findings keyed by (kind, thread, fact) and returns only the
ones not recorded before, which the run then logs — a refetch finding the same fact again
logs nothing. Written only by the archive's writer (through :meth:`Index.transaction`);
:meth:`AlertBook.list` and :meth:`AlertBook.counts` read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from pplx_archiver.core.findings.alerts import fact_key
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.index_schema import dumps, utc_now

# A finding to record: event (kind), level, fields (``thread_uuid`` among them or not).
Found = tuple[str, str, Mapping[str, Any]]


@dataclasses.dataclass(frozen=True, slots=True)
class Alert:
    """One recorded fact."""

    id: int
    kind: str
    thread_uuid: str
    run_id: int | None
    found_at: str
    fields: Mapping[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "thread_uuid": self.thread_uuid or None,
            "run_id": self.run_id,
            "found_at": self.found_at,
            "fields": dict(self.fields),
        }


class AlertBook:
    """The alerts of one archive's index."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def record(
        self, found: Iterable[Found], run_id: int | None, *, found_at: str | None = None
    ) -> list[Found]:
        """Record findings; return those that state a fact not recorded before (in order)."""
        items = list(found)
        if not items:
            return []
        when = found_at or utc_now()
        new: list[Found] = []
        with self.index.transaction() as db:
            for kind, level, fields in items:
                thread = str(fields.get("thread_uuid") or "")
                cur = db.execute(
                    "INSERT OR IGNORE INTO alerts (kind, thread_uuid, fact, run_id, found_at, "
                    "fields) VALUES (?, ?, ?, ?, ?, ?)",
                    (kind, thread, fact_key(kind, fields), run_id, when, dumps(dict(fields))),
                )
                if cur.rowcount:
                    new.append((kind, level, fields))
        return new

    def list(
        self,
        *,
        since: str | None = None,
        run_id: int | None = None,
        kinds: Sequence[str] = (),
        thread_uuid: str | None = None,
        limit: int | None = None,
    ) -> list[Alert]:
        """Recorded alerts, oldest first, filtered by date, run, kind or thread."""
        where, args = _filters(since, run_id, kinds, thread_uuid)
        sql = f"SELECT * FROM alerts{where} ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return [_alert(r) for r in self.index.select(sql, args)]

    def counts(self, *, run_id: int | None = None, since: str | None = None) -> dict[str, int]:
        """Alerts per kind (of one run, or since a date, or all)."""
        where, args = _filters(since, run_id, (), None)
        rows = self.index.select(f"SELECT kind, COUNT(*) FROM alerts{where} GROUP BY kind", args)
        return {str(r[0]): int(r[1]) for r in rows}


def _filters(
    since: str | None, run_id: int | None, kinds: Sequence[str], thread_uuid: str | None
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if since is not None:
        clauses.append("found_at >= ?")
        args.append(since)
    if run_id is not None:
        clauses.append("run_id = ?")
        args.append(run_id)
    if kinds:
        clauses.append(f"kind IN ({', '.join('?' for _ in kinds)})")
        args.extend(kinds)
    if thread_uuid is not None:
        clauses.append("thread_uuid = ?")
        args.append(thread_uuid)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def _alert(row: Any) -> Alert:
    return Alert(
        id=int(row["id"]),
        kind=str(row["kind"]),
        thread_uuid=str(row["thread_uuid"]),
        run_id=row["run_id"],
        found_at=str(row["found_at"]),
        fields=orjson.loads(row["fields"]),
    )
