"""The writer's files outside the thread folders: the static site and the run logs.

:meth:`~pplx_archiver.shell.archive.writer.ArchiveWriter.apply` of a :class:`SiteFiles`
and :meth:`~pplx_archiver.shell.archive.writer.ArchiveWriter.open_log` call these; nothing
else does.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from pplx_archiver.core.archive.writes import RunLog, SiteFiles
from pplx_archiver.shell.archive.disk import Disk
from pplx_archiver.shell.archive.files import check_relative
from pplx_archiver.shell.archive.fsutil import safe_join


def write_site(disk: Disk, plan: SiteFiles) -> tuple[int, int]:
    """Write the plan's files under its folder (unchanged bytes are left alone), then
    remove the stale ones; return how many files were written and removed."""
    dest, written, removed = Path(plan.dest), 0, 0
    for rel, data in plan.files.items():
        check_relative(rel)
        written += disk.write(safe_join(dest, *rel.split("/")), data, durable=False)
    for rel in plan.stale:
        check_relative(rel)
        removed += disk.remove(safe_join(dest, *rel.split("/")))
    return written, removed


def open_log(plan: RunLog) -> IO[bytes]:
    """The run's log file opened for appending, its folder made first (OSError when not)."""
    folder = Path(plan.folder)
    folder.mkdir(parents=True, exist_ok=True)
    return (folder / plan.name).open("ab")
