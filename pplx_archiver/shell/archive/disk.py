"""The file operations of the archive's writer, and the clean-up of download staging.

:class:`Disk` is the only place besides :mod:`~pplx_archiver.shell.archive.fsutil` that
writes, moves or removes files in the archive; the writer
(:class:`~pplx_archiver.shell.archive.writer.ArchiveWriter`) calls it. It is a seam: tests
pass one that fails at a chosen file or records the order of the writes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.fsutil import fsync_dir, sync_filesystem, write_atomic


class Disk:
    """The writer's file operations on the real file system."""

    def write(self, path: Path, data: bytes, *, durable: bool = True, compare: bool = True) -> bool:
        """Write atomically; False when the file already holds ``data`` (``compare=False``:
        the caller knows it does not, and made the folder)."""
        return write_atomic(path, data, durable=durable, compare=compare)

    def move_in(self, source: Path, dest: Path) -> None:
        """Move a complete staged file into place (same file system: one rename)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            source.replace(dest)
        except OSError as exc:
            raise StoreError(f"{dest}: cannot move the downloaded asset in: {exc}") from exc

    def rename_dir(self, source: Path, dest: Path) -> None:
        """Move a thread folder to its new name."""
        if dest.exists():
            raise StoreError(f"{dest}: cannot move a thread here from {source}: folder exists")
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            source.rename(dest)
        except OSError as exc:
            raise StoreError(f"{source}: cannot move to {dest}: {exc}") from exc

    def exists(self, path: Path) -> bool:
        """True when something is at ``path`` (a dangling symlink included)."""
        return os.path.lexists(path)

    def make_dir(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)

    def remove(self, path: Path) -> bool:
        """Remove a file; False when it was already gone."""
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def remove_tree(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def remove_empty_dir(self, path: Path) -> bool:
        try:
            path.rmdir()
        except OSError:
            return False
        return True

    def sync_dir(self, path: Path) -> None:
        fsync_dir(path)

    def sync_all(self, root: Path) -> None:
        sync_filesystem(root)


def remove_dead_staging(staging: Path, disk: Disk | None = None) -> int:
    """Remove staging folders of runs whose process is gone; return how many.

    A folder is ``run-<pid>-<random>``: one whose PID is alive belongs to a running command
    (the writer lock makes that impossible for a writer, but a folder is never taken from a
    live process on that assumption alone). Folders of other shapes are leftovers too.
    """
    from pplx_archiver.shell.archive.lock import pid_alive

    disk = disk or Disk()
    removed = 0
    try:
        children = list(staging.iterdir())
    except OSError:
        return 0
    for child in children:
        parts = child.name.split("-")
        if len(parts) == 3 and parts[1].isdigit() and pid_alive(int(parts[1])):
            continue
        disk.remove_tree(child)
        removed += 1
    return removed
