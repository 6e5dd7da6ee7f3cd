"""The run's writer in a process of its own, so fetching and writing use two cores.

A large run's client is CPU-bound: the event loop fetches and renders while the writer
(files, index, search rows, group commit) works in a thread of the same interpreter, and the
two take turns holding the GIL. :class:`OffloadedStore` moves the writer into a child
interpreter (:mod:`~pplx_archiver.shell.writer.writer_child`): the scheduler's store calls that
change the archive — ``commit``, ``fail``, ``terminal``, ``register_variants``,
``confirm_not_found``, ``flush_done`` — are sent to the child in order, as pickled frames over
its stdin, and answered in the same order over its stdout; the reads (``stored_state``,
``kept_record``) stay in this process, on its own index connection (the index is SQLite in
WAL mode: readers see the last committed state).

**A window of calls in flight.** A commit is *posted*: its frame is sent and the run goes on
to the next thread while the child writes; the answer is taken later, in order, and what
the run does with it (``THREAD_ARCHIVED``, the counters, the progress line) happens then.
Up to :data:`WINDOW` calls are unanswered at a time; a thread of this process reads the
answers as they come, so neither side can block the other on a full pipe. A posted call is
pickled by the caller and
queued (at most :data:`QUEUED` frames) for a sending thread, which alone writes into the
pipe: when the child is busy (a group commit) and the pipe full, that thread waits, not the
run; while there is room (:meth:`WriterProcess.can_post`) the run's event loop posts a
thread itself instead of handing it to a worker thread. The child makes its own group commits
(:mod:`~pplx_archiver.shell.writer.writer_child`); ``flush_done`` and the calls whose answer the
run needs at once (``confirm_not_found``) wait for every answer before theirs.

The child is still the one writer: it opens the same :class:`Archive` this process would,
while this process holds the archive's writer lock and writes nothing itself until the child
has finished. Log events the child emits travel back with each answer and are logged here,
so the run's log holds them. An exception is re-raised here when its answer is
taken (as itself when it can be pickled, else as a :class:`StoreError` naming it): a failed
commit fails the run at its next call; the calls already sent after it are still carried
out, each thread whole. Why a window, and what it bought: docs/dev/performance.md, "The
writer process pipelined, through a pipe wide enough".
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import structlog

from pplx_archiver.core.archive import plan as planning
from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.lock import held_lock_fd
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.writer.frames import COMMIT_ONLINE, frame, read_frame

try:
    import fcntl
except ImportError:  # pragma: no cover (not on Windows)
    fcntl = None  # type: ignore[assignment]

log = structlog.get_logger()

MODULE = "pplx_archiver.shell.writer.writer_child"
PIPE_BYTES = 1 << 20  # the pipe to the child (at most /proc/sys/fs/pipe-max-size, 1 MiB)
WINDOW = 64  # calls sent and not yet answered, at most (queued, in the pipe, in the child)
QUEUED = 48  # frames waiting for the sending thread, at most (~175 KB a thread: ~8 MB)


def _widen(stream: IO[bytes] | None) -> None:
    """Give the pipe to the child room for several threads' frames (Linux; elsewhere, or
    when the system refuses, it keeps its size).

    A thread's frame is ~175 KB: a 64 KB pipe took it in three writes, each waiting for the
    child to read it and then for this process's GIL (the event loop renders meanwhile).
    """
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if stream is None or setsize is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(stream.fileno(), setsize, PIPE_BYTES)


@dataclasses.dataclass(frozen=True, slots=True)
class _Gone:
    """Put in the answers by the reading thread when the child's stdout ends."""

    error: BaseException


class WriterProcess:
    """The child process and its pipes: :meth:`post` sends a call, :meth:`call` waits too."""

    def __init__(self, out_dir: Path, *, wait: bool = True) -> None:
        env = dict(os.environ)
        # The child imports this very package: the path this process found it on.
        root = str(Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        # The child inherits the archive's writer lock: were this process killed, the lock
        # stays held until the child has gone (it stops before its next write, see there).
        lock_fd = held_lock_fd(out_dir)
        try:
            self._proc = subprocess.Popen(  # our own interpreter and module
                [sys.executable, "-m", MODULE, str(out_dir)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                start_new_session=False,
                pass_fds=(lock_fd,) if lock_fd is not None else (),
            )
        except OSError as exc:
            raise StoreError(f"the archive writer process did not start: {exc}") from None
        _widen(self._proc.stdin)
        self._lock = threading.RLock()  # an answer's follow-up may post another call
        self._ready = False
        self._pending: collections.deque[Callable[[Any], None] | None] = collections.deque()
        self._answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._outbox: queue.Queue[bytes | None] = queue.Queue(QUEUED)
        self._sender: threading.Thread | None = None
        self._send_error: OSError | None = None
        self._broken: StoreError | None = None
        self.unsynced = 0
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait until the child has opened the archive (at once when it already said so)."""
        if self._ready:
            return
        try:
            assert self._proc.stdout is not None
            read_frame(self._proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            self._proc.kill()
            self._close_pipes()
            self._proc.wait()
            raise StoreError(f"the archive writer process did not start: {exc}") from None
        self._ready = True
        reader = threading.Thread(target=self._read_answers, name="writer-answers", daemon=True)
        reader.start()
        self._sender = threading.Thread(target=self._send_frames, name="writer-frames", daemon=True)
        self._sender.start()

    def _send_frames(self) -> None:
        """The sending thread: each queued frame into the pipe, in order, until the end mark.

        A full pipe (the child busy with a group commit) blocks this thread only: the run
        keeps fetching and rendering while up to :data:`QUEUED` frames wait here. After a
        failed write the rest are dropped (the next :meth:`post` raises the error).
        """
        assert self._proc.stdin is not None
        while (data := self._outbox.get()) is not None:
            if self._send_error is not None:
                continue
            try:
                self._proc.stdin.write(data)
                self._proc.stdin.flush()
            except (OSError, ValueError) as exc:
                self._send_error = exc if isinstance(exc, OSError) else OSError(str(exc))

    def _read_answers(self) -> None:
        """The reading thread: every answer into the queue, in order, until the pipe ends."""
        assert self._proc.stdout is not None
        while True:
            try:
                answer = read_frame(self._proc.stdout)
            except (EOFError, OSError, ValueError, pickle.UnpicklingError) as exc:
                self._answers.put(_Gone(exc))
                return
            self._answers.put(answer)

    def discard(self) -> None:
        """End a child that was started and never used (it has written nothing)."""
        if self._proc.stdin is not None:  # the end of its stdin: it leaves, nothing pending
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        self._reap()  # its "ready" waits in the pipe, which stays open until it has gone
        self._close_pipes()

    @property
    def in_flight(self) -> int:  # calls sent and not yet answered
        return len(self._pending)

    def can_post(self) -> bool:
        """True when :meth:`post` would return at once: room in the window and the queue,
        and no error to raise (so the run's event loop may post itself, without a thread)."""
        return (
            self._broken is None
            and self._send_error is None
            and len(self._pending) < WINDOW
            and not self._outbox.full()
        )

    def post(
        self, name: str, *args: Any, then: Callable[[Any], None] | None = None, **kwargs: Any
    ) -> None:
        """Send ``Archive.<name>(*args, **kwargs)`` to the child without waiting for it.

        ``then(result)`` runs when its answer is taken (by this or a later :meth:`post`,
        :meth:`call` or :meth:`drain`, in this thread); an error answer is raised there
        instead. With :data:`WINDOW` calls unanswered, this waits for the oldest first.
        """
        data = frame((name, args, kwargs))  # pickled here: the sending thread only writes
        with self._lock:
            while len(self._pending) >= WINDOW:
                self._take()
            if self._broken is None and self._send_error is not None:
                self._broken = self._gone(self._send_error)
            if self._broken is not None:
                raise self._broken
            self._outbox.put(data)
            self._pending.append(then)
            # Answers already here are taken at once (timely log lines); an error among
            # them is raised after this call was sent: it is carried out all the same.
            while self._pending and not self._answers.empty():
                self._take()

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run ``Archive.<name>(*args, **kwargs)`` in the child; its result or its error
        (after every call sent before it has been answered)."""
        box: list[Any] = []
        with self._lock:
            self.post(name, *args, then=box.append, **kwargs)
            self.drain()
        return box[0]

    def drain(self) -> None:
        """Take every answer still due (an error answer is raised: see :meth:`post`)."""
        with self._lock:
            while self._pending:
                self._take()

    def _take(self) -> None:
        """Take the oldest call's answer: its events, its follow-up or its error."""
        then = self._pending.popleft()
        if self._broken is not None:
            raise self._broken
        answer = self._answers.get()
        if isinstance(answer, _Gone):
            self._broken = self._gone(answer.error)
            raise self._broken
        status, value, self.unsynced, events = answer
        for level, event, fields in events:
            getattr(log, level, log.info)(event, **fields)
        if status == "error":
            raise value
        if then is not None:
            then(value)

    def _gone(self, exc: BaseException) -> StoreError:
        code = self._proc.poll()
        return StoreError(f"the archive writer process ended unexpectedly (exit {code}): {exc}")

    def close(self) -> None:
        """Take the answers still due, ask the child to finish (mark done what it wrote)
        and wait for it.

        A run that ends well has taken every answer (its last ``flush_done``); answers left
        here belong to a run already failing, and an error among them is logged
        (``WRITER_CALL_FAILED``) rather than raised over the run's own error.
        """
        with self._lock:
            while self._pending and self._broken is None:
                try:
                    self._take()
                except Exception as exc:  # logged: the run reports its first error
                    if self._broken is None:
                        log.error("WRITER_CALL_FAILED", error=f"{type(exc).__name__}: {exc}")
            closing: StoreError | None = None
            if self._broken is None and self._proc.poll() is None:
                try:
                    self.call("close")
                except StoreError as exc:  # its last group commit failed (a full disk)
                    closing = exc
        self._close_pipes()
        code, cpu_s, rss_mb = self._reap()
        log.info("WRITER_PROCESS_ENDED", exit_code=code, cpu_s=cpu_s, peak_rss_mb=rss_mb)
        if code != 0:
            raise StoreError(f"the archive writer process failed (exit {code})")
        if closing is not None:
            raise closing

    def _close_pipes(self) -> None:
        sender, self._sender = self._sender, None
        if sender is not None:  # every queued frame written (or dropped) first
            self._outbox.put(None)
            sender.join()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # a child that died: a broken pipe
                    stream.close()

    def _reap(self) -> tuple[int, float | None, float | None]:
        """Wait for the child; its exit code, CPU seconds and peak RSS in MB (None if unknown)."""
        if self._proc.returncode is not None:
            return self._proc.returncode, None, None
        try:
            _pid, status, usage = os.wait4(self._proc.pid, 0)
        except ChildProcessError:
            return self._proc.wait(), None, None
        self._proc.returncode = os.waitstatus_to_exitcode(status)
        cpu_s = round(usage.ru_utime + usage.ru_stime, 3)
        return self._proc.returncode, cpu_s, round(usage.ru_maxrss / 1024, 1)


class OffloadedStore:
    """The scheduler's store with every change made by a :class:`WriterProcess`."""

    def __init__(self, local: Archive, out_dir: Path, process: WriterProcess | None = None) -> None:
        self.local = local
        self.process = process or WriterProcess(out_dir)
        self.process.wait_ready()

    # reads: this process's index connection
    def stored_state(self, thread_uuid: str) -> planning.StoredState | None:
        return self.local.stored_state(thread_uuid)

    def kept_record(self, thread_uuid: str) -> dict[str, Any]:
        return self.local.kept_record(thread_uuid)

    def mode_memo(self, key: str) -> planning.ModeMemo | None:
        return self.local.mode_memo(key)

    # changes: the child
    def commit(self, plan: ThreadCommit) -> Mapping[str, Any]:
        fields: Mapping[str, Any] = self.process.call("commit", plan)
        return fields

    def can_post(self) -> bool:
        """True when :meth:`commit_then` would return at once (see
        :meth:`WriterProcess.can_post`)."""
        return self.process.can_post()

    def commit_then(self, plan: ThreadCommit, then: Callable[[Mapping[str, Any]], None]) -> None:
        """Send a fetched thread's commit and go on: the child writes it, then registers its
        answer variants (``plan.result.variants``, source ``online``); ``then(fields)`` runs
        when that is answered (see :meth:`WriterProcess.post`)."""
        self.process.post(COMMIT_ONLINE, plan, then=then)

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None:
        self.process.call("fail", thread_uuid, error, error_path, run_id)

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None:
        self.process.call("terminal", thread_uuid, state, run_id)

    def register_variants(self, records: Any, source: str, run_id: int | None = None) -> list[Any]:
        new: list[Any] = self.process.call("register_variants", list(records), source, run_id)
        return new

    def confirm_not_found(self, uuid: str, error: str, run_id: int, immediate: bool) -> bool:
        return bool(self.process.call("confirm_not_found", uuid, error, run_id, immediate))

    def remember_modes(self, memos: Sequence[tuple[str, planning.ModeMemo]], run_id: int) -> int:
        return int(self.process.call("remember_modes", list(memos), run_id))

    def flush_done(self) -> int:
        """A group commit now, once every call sent before it is answered."""
        return int(self.process.call("flush_done"))

    @property
    def unsynced(self) -> int:
        """Always 0: the child makes its own group commits (the run need not ask for one)."""
        return 0

    def close(self) -> None:
        """End the child; then re-read what it appended to the variant registry."""
        try:
            self.process.close()
        finally:
            self.local.reload_registry()
