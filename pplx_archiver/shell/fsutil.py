"""Crash-safe file writes and confined path joins for the archive.

:func:`write_atomic` writes a file so that a crash at any instant leaves either the old bytes or
the new bytes, never a mix: a temp file named ``.<name>.tmp-<random>`` in the same directory,
write, fsync, ``os.replace``, fsync of the directory. Identical bytes are not rewritten, so the
file's mtime tells when its content last changed. :data:`TEMP_PATTERN` matches those temp names
(``verify`` reports leftovers). :func:`safe_join` refuses any path that would leave its root.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from pathlib import Path

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


def write_atomic(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; return False (file untouched) when already equal."""
    if same_bytes(path, data):
        return False
    parent = path.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / temp_name(path.name)
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise StoreError(f"{path}: cannot write: {exc}") from exc
        raise
    fsync_dir(parent)
    return True


def safe_join(root: Path, *parts: str) -> Path:
    """``root / parts…``, refusing absolute parts, ``..``, NUL bytes and anything outside root."""
    for part in parts:
        if not part or "\x00" in part:
            raise StoreError(f"refusing empty or NUL-bearing path part {part!r} under {root}")
        pieces = part.replace("\\", "/").split("/")
        if part.startswith(("/", "\\")) or any(p in ("..",) for p in pieces):
            raise StoreError(f"refusing path part {part!r}: it would leave {root}")
        if re.match(r"^[A-Za-z]:", part):
            raise StoreError(f"refusing path part {part!r}: drive-qualified")
    candidate = root.joinpath(*parts)
    base = root.resolve()
    resolved = candidate.resolve()
    if resolved != base and not resolved.is_relative_to(base):
        raise StoreError(f"refusing path {candidate}: it resolves outside {root}")
    return candidate
