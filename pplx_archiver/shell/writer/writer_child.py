"""The writer process itself: the child a :class:`~pplx_archiver.shell.writer.writer_process.
WriterProcess` starts (``python -m pplx_archiver.shell.writer.writer_child <out>``).

It opens the archive as the run would, then answers the store calls it reads on stdin, in
order, each with its result (or its error), the number of threads written but not yet marked
done, and the log events it emitted. The run does not wait for each answer (it sends a
window of calls ahead), so the child makes its own group commits: after a commit, once
``GROUP_COMMIT_SIZE`` threads await theirs or ``GROUP_COMMIT_SECONDS`` have passed since the
last one, it syncs the file system and marks them done, as the run's scheduler does for a
writer thread. ``flush_done`` forces one. It ignores SIGINT and SIGTERM (an interrupted run
lets it finish what it was sent; ``close`` marks done what it wrote); when its stdin ends
without ``close``, or its parent is gone (the run was killed), it applies none of the calls
still queued, leaves those threads pending and exits. It holds the archive's writer lock
with the run (an inherited descriptor), so no other run can start writing before it has gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import IO, Any

import structlog

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.run.run_types import GROUP_COMMIT_SECONDS, GROUP_COMMIT_SIZE
from pplx_archiver.shell.writer.frames import COMMIT_ONLINE, portable, read_frame, write_frame

ALLOWED = frozenset(
    {
        "commit",
        COMMIT_ONLINE,
        "fail",
        "terminal",
        "register_variants",
        "confirm_not_found",
        "remember_modes",
        "flush_done",
    }
)
COMMITS = frozenset({"commit", COMMIT_ONLINE})


def _capture(events: list[tuple[str, str, dict[str, Any]]]) -> Any:
    """A structlog processor keeping each event for the answer instead of printing it."""

    def processor(_logger: Any, method: str, event_dict: Any) -> Any:
        fields = dict(event_dict)
        event = str(fields.pop("event", ""))
        events.append((method, event, fields))
        raise structlog.DropEvent

    return processor


class _GroupCommit:
    """When the child marks done what it has written (see the module docstring)."""

    def __init__(self, archive: Any) -> None:
        self.archive = archive
        self.last = time.monotonic()

    def after(self, name: str) -> None:
        if name == "flush_done":
            self.last = time.monotonic()
        elif name in COMMITS and self.archive.unsynced:
            due = time.monotonic() - self.last >= GROUP_COMMIT_SECONDS
            if due or self.archive.unsynced >= GROUP_COMMIT_SIZE:
                self.archive.flush_done()
                self.last = time.monotonic()


def child_main(out_dir: Path, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Serve store calls on ``stdin``/``stdout`` until ``close`` or the end of ``stdin``."""
    from pplx_archiver.shell.archive.store import Archive

    events: list[tuple[str, str, dict[str, Any]]] = []
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, _capture(events)],
        cache_logger_on_first_use=False,
    )
    archive = Archive(out_dir, group_commit=True)
    group = _GroupCommit(archive)
    parent = os.getppid()
    write_frame(stdout, ("ready", os.getpid()))
    try:
        while True:
            try:
                name, args, kwargs = read_frame(stdin)
            except EOFError:
                name = ""
            if not name or os.getppid() != parent:
                # The run has gone (killed): nothing more is written, even of the calls
                # still in the pipe. As with a writer thread dying with it, the threads
                # not yet synced stay pending, to be fetched again by the next run.
                archive.writer.drop_unsynced()
                return
            if name == "close":
                try:
                    archive.flush_done()
                    answer: tuple[Any, ...] = ("ok", None)
                except Exception as exc:  # a full disk: the run reports it, nothing is lost
                    archive.writer.drop_unsynced()  # written, not marked done: fetched again
                    answer = ("error", portable(exc))
                write_frame(stdout, (*answer, archive.unsynced, events))
                return
            try:
                if name in ALLOWED:
                    answer = ("ok", getattr(archive, name)(*args, **kwargs))
                else:
                    raise StoreError(f"the archive writer does not do {name!r}")
                group.after(name)
            except Exception as exc:  # every error goes back to the run
                answer = ("error", portable(exc))
            try:
                write_frame(stdout, (*answer, archive.unsynced, list(events)))
            except BrokenPipeError:  # the run died after the check above: stop here too
                archive.writer.drop_unsynced()
                return
            events.clear()
    finally:
        archive.close()


def main() -> None:  # pragma: no cover (the child; tests/shell/writer/test_writer_process.py)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Frames go over a private copy of stdout; anything printed goes to stderr instead.
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    child_main(Path(sys.argv[1]), sys.stdin.buffer, frames)
    with contextlib.suppress(OSError):  # the run may have gone: nothing left to tell it
        frames.close()


if __name__ == "__main__":  # pragma: no cover
    main()
