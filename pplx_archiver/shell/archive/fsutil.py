"""Crash-safe file writes and confined path joins for the archive.

:func:`write_atomic` writes a file so that a crash at any instant leaves either the old bytes or
the new bytes, never a mix: a temp file named ``.<name>.tmp-<random>`` in the same directory,
write, fsync, ``os.replace``, fsync of the directory. Identical bytes are not rewritten, so the
file's mtime tells when its content last changed. :data:`TEMP_PATTERN` matches those temp names
(``verify`` reports leftovers). :func:`safe_join` refuses any path that would leave its root.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
from pathlib import Path
from typing import Any

from pplx_archiver.errors import StoreError

TEMP_PATTERN = re.compile(r"^\..+\.tmp-[0-9a-f]{8}$")


def temp_name(name: str) -> str:
    """The temp file name used while writing ``name``."""
    return f".{name}.tmp-{secrets.token_hex(4)}"


def fsync_dir(path: Path) -> None:
    """Flush a directory entry change (create, rename) to disk; no-op where unsupported."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def same_bytes(path: Path, data: bytes) -> bool:
    """True when ``path`` is a regular file holding exactly ``data``."""
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return False


def write_atomic(
    path: Path, data: bytes, *, durable: bool = True, compare: bool = True, mode: int | None = None
) -> bool:
    """Write ``data`` to ``path`` atomically; return False (file untouched) when already equal.

    ``durable=False`` skips the fsync of the file and its folder: the caller makes the data
    durable later for many files at once with :func:`sync_filesystem` (group commit).
    ``compare=False``: the caller already knows the bytes differ (and that the folder exists).
    ``mode`` (e.g. ``0o600`` for a file holding a secret): the file's exact permissions, set
    before any byte is written; an equal file already there gets them too.
    """
    if compare:
        if same_bytes(path, data):
            if mode is not None:
                os.chmod(path, mode)  # noqa: PTH101
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
    # plain strings from here: a dozen files a thread, and pathlib's joins cost more than
    # the system calls on a fast disk
    target = os.fspath(path)
    folder, name = os.path.split(target)
    tmp = os.path.join(folder, temp_name(name))  # noqa: PTH118 (see above)
    try:
        created = 0o666 if mode is None else mode
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, created)
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)  # noqa: PTH105
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # noqa: PTH108
        if isinstance(exc, OSError):
            raise StoreError(f"{path}: cannot write: {exc}") from exc
        raise
    if durable:
        fsync_dir(Path(folder))
    return True


def sync_filesystem(path: Path) -> None:
    """Flush every written file of the file system holding ``path`` (``syncfs``, else ``sync``).

    One call makes a whole batch of non-durable writes durable: the group commit of the
    scheduler's writer, far cheaper than an fsync per file.
    """
    libc_syncfs = _syncfs()
    if libc_syncfs is not None:
        fd = os.open(path, os.O_RDONLY)
        try:
            if libc_syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    os.sync()


def _syncfs() -> Any:
    """``syncfs(2)`` from the C library on Linux, or None."""
    global _SYNCFS
    if _SYNCFS is False:
        try:
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            _SYNCFS = libc.syncfs if hasattr(libc, "syncfs") else None
        except OSError:
            _SYNCFS = None
    return _SYNCFS


_SYNCFS: Any = False


@functools.lru_cache(maxsize=256)
def _resolved_root(root: Path) -> Path:
    """``root.resolve()``, remembered: a run joins thousands of files under the same roots
    and the archiver never turns a folder of its own into a symlink (each resolve is one
    ``lstat`` per path component). The joined path itself is resolved every time."""
    return root.resolve()


def _check_parts(root: Path, parts: tuple[str, ...]) -> None:
    """Refuse absolute parts, ``..``, NUL bytes and drive letters (the lexical checks)."""
    for part in parts:
        if not part or "\x00" in part:
            raise StoreError(f"refusing empty or NUL-bearing path part {part!r} under {root}")
        pieces = part.replace("\\", "/").split("/")
        if part.startswith(("/", "\\")) or any(p in ("..",) for p in pieces):
            raise StoreError(f"refusing path part {part!r}: it would leave {root}")
        if _DRIVE.match(part):
            raise StoreError(f"refusing path part {part!r}: drive-qualified")


_DRIVE = re.compile(r"^[A-Za-z]:")


def _check_resolved(root: Path, base: Path, candidate: Path) -> None:
    resolved = candidate.resolve()
    if resolved != base and not resolved.is_relative_to(base):
        raise StoreError(f"refusing path {candidate}: it resolves outside {root}")


def safe_join(root: Path, *parts: str) -> Path:
    """``root / parts…``, refusing absolute parts, ``..``, NUL bytes and anything outside root."""
    _check_parts(root, parts)
    candidate = root.joinpath(*parts)
    base = _resolved_root(root) if root.is_absolute() else root.resolve()
    _check_resolved(root, base, candidate)
    return candidate


class Confined:
    """:func:`safe_join` for the many files of one folder, each sub-folder resolved once.

    A writer joins a dozen files under one thread folder: resolving every path costs an
    ``lstat`` per component each time. Here each distinct parent folder is resolved (and
    checked) once per instance, and each file costs one ``lstat`` (a symlink is resolved and
    checked in full). Use one instance for one commit: a folder checked earlier in it is
    trusted, as the single writer holding the archive lock never makes a folder a symlink.

    ``fresh=True``: the caller has just created ``root`` itself (it did not exist), so
    nothing under it can be a symlink and the lexical checks suffice: no ``lstat`` at all.
    """

    __slots__ = ("_base", "_checked", "_fresh", "root")

    def __init__(self, root: Path, *, fresh: bool = False) -> None:
        self.root = root
        self._fresh = fresh
        self._base = (
            root if fresh else _resolved_root(root) if root.is_absolute() else root.resolve()
        )
        self._checked: set[Path] = set()

    def join(self, *parts: str) -> Path:
        """The confined path of ``parts`` under the root (StoreError when it would leave)."""
        _check_parts(self.root, parts)
        candidate = self.root.joinpath(*parts)
        if self._fresh:
            return candidate
        parent = candidate.parent
        if parent not in self._checked:
            _check_resolved(self.root, self._base, parent)
            self._checked.add(parent)
        if candidate.is_symlink():
            _check_resolved(self.root, self._base, candidate)
        return candidate

    def key(self, key: str) -> Path:
        """The path of a ``/``-separated archive file key (``turns/001.md``)."""
        return self.join(*key.split("/"))
