"""The check of stored files ``sync`` (its early-stop guard) and ``status`` make on every run.

Checking every stored file of every done thread costs about fifteen ``stat`` calls a thread
and the decoding of every index row: a fifth of a millisecond a thread, twenty seconds at
100,000 threads, on a run that has nothing to do. So on an archive of more than
:data:`FULL_CHECK_UP_TO` done threads each run checks

- every thread folder's existence, from one directory listing per parent folder (a thread
  folder deleted or renamed by hand is found on the very next run), and
- the files of one share of the threads, :data:`SHARE_RUNS` shares in turn (rows whose
  ``rowid`` modulo the share count equals the run count modulo it), so a file deleted or
  truncated inside a folder that still exists is found within that many runs.

Smaller archives are checked in full, as before. ``verify`` (or ``verify --sample``) checks
every file and its hash whenever asked.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.fsutil import safe_join
from pplx_archiver.shell.archive.index import PAGE_ROWS
from pplx_archiver.shell.archive.store import Archive

FULL_CHECK_UP_TO = 2000  # done threads up to which every file is checked on every run
SHARE_RUNS = 100  # larger archives: the files of one thread in this many, another one each run


@dataclasses.dataclass(frozen=True, slots=True)
class Invalid:
    """A done thread whose stored files are not as its last commit wrote them."""

    uuid: str
    path: str
    problem: str


@dataclasses.dataclass(slots=True)
class Coverage:
    """What one check covered: done threads, folders listed, threads whose files were read."""

    threads: int = 0
    folders: int = 0
    files: int = 0
    full: bool = True


def _done_count(archive: Archive) -> int:
    return int(archive.index.select("SELECT COUNT(*) FROM threads WHERE status = 'done'")[0][0])


def _run_count(archive: Archive) -> int:
    return int(archive.index.select("SELECT COALESCE(MAX(id), 0) FROM runs")[0][0])


def _listing(archive: Archive, parent: str) -> dict[str, bool] | None:
    """Folder names under ``parent`` (True: a symlink, checked in full), None: not a folder."""
    try:
        folder = safe_join(archive.out, *parent.split("/")) if parent else archive.out
        with os.scandir(folder) as entries:
            return {e.name: e.is_symlink() for e in entries if e.is_dir()}
    except (OSError, StoreError):
        return None


def _folders(archive: Archive, coverage: Coverage) -> Iterator[Invalid]:
    """Done threads whose folder is missing, in path order, one listing per parent folder."""
    empty = "SELECT uuid FROM threads WHERE status = 'done' AND (path IS NULL OR path = '')"
    for (uuid,) in archive.index.select(empty):
        yield Invalid(str(uuid), "", "no folder recorded")
    after, parent, names = "", None, None
    query = (
        "SELECT uuid, path FROM threads WHERE +status = 'done' AND path > ? "
        f"ORDER BY path LIMIT {PAGE_ROWS}"
    )
    while rows := archive.index.select(query, (after,)):
        after = str(rows[-1][1])
        for uuid, path in rows:
            coverage.folders += 1
            head, _, name = str(path).rpartition("/")
            if head != parent:
                parent, names = head, _listing(archive, head)
            if names is None or name not in names or names[name]:
                row = archive.get(str(uuid))
                problem = archive.files_problem(row) if row is not None else "not indexed"
                if problem is not None:
                    yield Invalid(str(uuid), str(path), problem)


def _share(archive: Archive, coverage: Coverage, shares: int) -> Iterator[Invalid]:
    """The threads of this run's share, every stored file of each compared with the index."""
    turn = _run_count(archive) % shares
    where = "status = 'done' AND rowid % ? = ?"
    after = ""
    query = f"SELECT uuid FROM threads WHERE {where} AND uuid > ? ORDER BY uuid LIMIT {PAGE_ROWS}"
    while rows := archive.index.select(query, (shares, turn, after)):
        after = str(rows[-1][0])
        for (uuid,) in rows:
            row = archive.get(str(uuid))
            if row is None:
                continue
            coverage.files += 1
            problem = archive.files_problem(row)
            if problem is not None:
                yield Invalid(row.uuid, row.path or "", problem)


def invalid_threads(archive: Archive, coverage: Coverage | None = None) -> Iterator[Invalid]:
    """The done threads found with missing or changed files by this run's check.

    ``coverage`` (filled in as the check goes) says what the check looked at.
    """
    coverage = coverage if coverage is not None else Coverage()
    coverage.threads = _done_count(archive)
    if coverage.threads <= FULL_CHECK_UP_TO:
        for row in archive.iter_threads("done"):
            coverage.folders += 1
            coverage.files += 1
            problem = archive.files_problem(row)
            if problem is not None:
                yield Invalid(row.uuid, row.path or "", problem)
        return
    coverage.full = False
    seen: set[str] = set()
    for item in _folders(archive, coverage):
        seen.add(item.uuid)
        yield item
    for item in _share(archive, coverage, SHARE_RUNS):
        if item.uuid not in seen:
            yield item
