"""One writer per archive: an exclusive ``fcntl.flock`` on ``index/write.lock``.

Every command that writes into an archive holds :func:`writer_lock` for its whole run. The
lock is the kernel's: it is released when the holding process exits, however it exits
(SIGKILL included), so a stale lock file never blocks anybody. The file's content — the
holder's PID and command, one JSON object — is for the message a second writer prints
(:class:`~pplx_archiver.errors.ArchiveBusyError`, exit code 6); the lock itself is the
``flock``, not the file's presence. Read-only commands take no lock.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from pplx_archiver.errors import ArchiveBusyError, StoreError

LOCK_NAME = "write.lock"


def lock_path(out: Path) -> Path:
    """Where the writer lock of the archive at ``out`` lives."""
    return Path(out) / "index" / LOCK_NAME


def holder(out: Path) -> dict[str, object]:
    """The PID and command written by the current (or last) holder; {} when unknown."""
    try:
        data = orjson.loads(lock_path(out).read_bytes() or b"{}")
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def pid_alive(pid: int) -> bool:
    """True when a process with this PID exists (signal 0 probe)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# The descriptor of each lock this process holds, by archive: a writer process inherits it,
# so the lock stays held until that child has gone too (it never outlives its lock).
_HELD: dict[Path, int] = {}


def held_lock_fd(out: Path) -> int | None:
    """The descriptor of the writer lock this process holds on ``out`` (None when none)."""
    return _HELD.get(Path(out).resolve())


@contextmanager
def writer_lock(out: Path, command: str) -> Iterator[Path]:
    """Hold the archive's writer lock for the block, or raise ArchiveBusyError at once."""
    path = lock_path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot open the archive's lock file: {exc.strerror or exc}; "
            "check that --out is a writable folder"
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = holder(out)
            pid = who.get("pid", "?")
            cmd = who.get("command", "?")
            raise ArchiveBusyError(
                f"archive {out} is busy: PID {pid} ({cmd}) is writing it "
                f"(lock {path}); try again when it has finished"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, orjson.dumps({"pid": os.getpid(), "command": command}) + b"\n", 0)
        key = Path(out).resolve()
        _HELD[key] = fd
        try:
            yield path
        finally:
            _HELD.pop(key, None)
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
