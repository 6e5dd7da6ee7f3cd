"""The index's memory of other-mode threads: table ``mode_memos`` of ``index/archive.sqlite``.

A run with ``--mode`` that fetched a thread and found it of another mode records it here
(through the writer's :class:`~pplx_archiver.core.archive.writes.ModeMemos` plan): the thread's key,
the key of the listed update time it was fetched at, its mode and the run. The next run with
``--mode`` leaves it out without a request while its listed update time stays the same
(:func:`~pplx_archiver.core.archive.decisions.mode_known_outside`). The table is a cache:
``reindex`` starts it empty, and a thread it no longer describes is simply fetched again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pplx_archiver.core.archive.decisions import ModeMemo


class ModeMemoTable:
    """Mixin of :class:`~pplx_archiver.shell.archive.index.Index`: the ``mode_memos`` table."""

    if TYPE_CHECKING:
        read_only: bool

        def _tx(self) -> Any: ...

        def _query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]: ...

    def put_mode_memos(
        self, memos: Sequence[tuple[str, ModeMemo]], run_id: int | None = None
    ) -> None:
        """Record (or replace) what runs with ``--mode`` found of these threads."""
        if not memos:
            return
        with self._tx() as db:
            db.executemany(
                "INSERT INTO mode_memos (uuid, updated_key, mode, run_id) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (uuid) DO UPDATE SET updated_key = excluded.updated_key, "
                "mode = excluded.mode, run_id = excluded.run_id",
                [(uuid, memo.updated_key, memo.mode, run_id) for uuid, memo in memos],
            )

    def mode_memo(self, uuid: str) -> ModeMemo | None:
        """What a run with ``--mode`` last found of a thread of another mode, if anything.

        An index opened read-only that predates the table answers None.
        """
        known = "SELECT 1 FROM sqlite_master WHERE name = 'mode_memos'"
        if self.read_only and not self._query(known):
            return None
        rows = self._query("SELECT updated_key, mode FROM mode_memos WHERE uuid = ?", (uuid,))
        return ModeMemo(str(rows[0][0]), str(rows[0][1])) if rows else None
