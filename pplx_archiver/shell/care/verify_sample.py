"""``verify --sample PERCENT``: check a share of the threads, the next share on the next run.

The done threads are taken in uuid order from where the last sampled run stopped (the
rotation position the index records, :mod:`~pplx_archiver.shell.archive.index_verify`),
wrapping around at the end, so successive runs cover the whole archive, as backup tools'
``check --read-data-subset n/m`` do. A pass ends when a run checks the last thread in uuid
order; the report says when the last complete pass started and ended (every thread done when
it started was checked between the two) and how far the current one has come. The new
position is recorded through the writer (:class:`~pplx_archiver.core.archive.writes.VerifyRotation`)
after the checks, so a run interrupted part-way leaves the rotation where it was.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from pplx_archiver.core.archive.writes import VerifyRotation
from pplx_archiver.shell.archive.index import ThreadRow
from pplx_archiver.shell.archive.store import Archive

DONE_BYTES = (
    "SELECT COALESCE(SUM(json_extract(f.value, '$[0]')), 0) FROM threads AS t, "
    "json_each(t.files) AS f WHERE t.status = 'done' AND json_valid(t.files)"
)


@dataclasses.dataclass(frozen=True, slots=True)
class Sample:
    """The threads one sampled run checks and the rotation to record after the checks."""

    percent: float
    rows: list[ThreadRow]
    total: int
    rotation: VerifyRotation

    def bytes(self) -> int:
        """Bytes of the checked threads' files (as the index recorded them)."""
        return sum(_size(row) for row in self.rows)


def _size(row: ThreadRow) -> int:
    files = row.files or {}
    return sum(int(v[0]) for v in files.values() if isinstance(v, list | tuple) and v)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _done_count(archive: Archive) -> int:
    return int(archive.index.select("SELECT COUNT(*) FROM threads WHERE status = 'done'")[0][0])


def choose(archive: Archive, percent: float, now: str | None = None) -> Sample:
    """The next ``percent`` % of the done threads (at least one) in the rotation."""
    now = now or _now()
    total = _done_count(archive)
    want = min(total, max(1, math.ceil(total * percent / 100)))
    prev = archive.index.verify_rotation()
    position = prev.position if prev else ""
    started = prev.pass_started if prev else now
    covered = (prev.covered_from, prev.covered_at) if prev else (None, None)
    rows = list(islice(archive.iter_threads("done", after=position), want))
    if len(rows) < want:  # the end of the uuid order: this pass is complete, a new one starts
        if position or rows:
            covered, started = (started, now), now
        rows += islice(archive.iter_threads("done"), want - len(rows))
    position = rows[-1].uuid if rows else ""
    if rows and next(archive.iter_threads("done", after=position), None) is None:
        covered, started, position = (started, now), now, ""  # ended exactly at the last one
    return Sample(percent, rows, total, VerifyRotation(position, started, *covered))


def report(archive: Archive, sample: Sample) -> dict[str, Any]:
    """What the run covered: threads, bytes and their shares, and where the rotation stands."""
    rotation = sample.rotation
    done_bytes = int(archive.index.select(DONE_BYTES)[0][0])
    checked = sample.bytes()
    passed = 0
    if rotation.position:
        rows = archive.index.select(
            "SELECT COUNT(*) FROM threads WHERE status = 'done' AND uuid <= ?",
            (rotation.position,),
        )
        passed = int(rows[0][0])
    return {
        "percent": sample.percent,
        "threads": len(sample.rows),
        "of_threads": sample.total,
        "threads_percent": _share(len(sample.rows), sample.total),
        "bytes": checked,
        "of_bytes": done_bytes,
        "bytes_percent": _share(checked, done_bytes),
        "pass_started": rotation.pass_started,
        "pass_percent": _share(passed, sample.total),
        "last_full_pass": (
            {"started": rotation.covered_from, "ended": rotation.covered_at}
            if rotation.covered_at
            else None
        ),
    }


def _share(part: int, whole: int) -> float:
    return round(100 * part / whole, 2) if whole else 0.0


def line(cover: dict[str, Any]) -> str:
    """One line for a person: what this run covered and when everything last was."""
    last = cover["last_full_pass"]
    when = f"{last['started']} to {last['ended']}" if last else "not yet"
    return (
        f"verify: sample of {cover['threads']} of {cover['of_threads']} threads "
        f"({cover['threads_percent']}%), {cover['bytes']} of {cover['of_bytes']} bytes "
        f"({cover['bytes_percent']}%); this pass {cover['pass_percent']}% since "
        f"{cover['pass_started']}; whole archive last covered: {when}"
    )
