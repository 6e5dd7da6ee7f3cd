"""Where ``verify --sample`` stands in its rotation: table ``verify_rotation`` of the index.

One row: the uuid of the last thread a sampled ``verify`` checked (the next run starts after
it, in uuid order, and wraps around), when the current pass over the archive started, and
when the last complete pass ended and had started. Written through the writer's
:class:`~pplx_archiver.core.archive.writes.VerifyRotation` plan. The table is a cache: ``reindex``
starts it empty, and the rotation then starts again from the first thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pplx_archiver.core.archive.writes import VerifyRotation


class VerifyRotationTable:
    """Mixin of :class:`~pplx_archiver.shell.archive.index.Index`: the ``verify_rotation`` row."""

    if TYPE_CHECKING:
        read_only: bool

        def _tx(self) -> Any: ...

        def _query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]: ...

    def put_verify_rotation(self, rotation: VerifyRotation) -> None:
        """Record where the rotation stands (replaces the one row)."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO verify_rotation (id, position, pass_started, covered_from, "
                "covered_at) VALUES (1, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                "position = excluded.position, pass_started = excluded.pass_started, "
                "covered_from = excluded.covered_from, covered_at = excluded.covered_at",
                (
                    rotation.position,
                    rotation.pass_started,
                    rotation.covered_from,
                    rotation.covered_at,
                ),
            )

    def verify_rotation(self) -> VerifyRotation | None:
        """Where the rotation stands (None before the first sampled verify).

        An index opened read-only that predates the table answers None.
        """
        known = "SELECT 1 FROM sqlite_master WHERE name = 'verify_rotation'"
        if self.read_only and not self._query(known):
            return None
        rows = self._query(
            "SELECT position, pass_started, covered_from, covered_at FROM verify_rotation"
        )
        if not rows:
            return None
        position, started, covered_from, covered_at = rows[0]
        return VerifyRotation(str(position), str(started), covered_from, covered_at)
