"""The run's writer in a process of its own, so fetching and writing use two cores.

A large run's client is CPU-bound: the event loop fetches and renders while the writer
(files, index, search rows, group commit) works in a thread of the same interpreter, and the
two take turns holding the GIL. :class:`OffloadedStore` moves the writer into a child
interpreter (``python -m pplx_archiver.shell.run.writer_process <out>``): the scheduler's
store calls that change the archive — ``commit``, ``fail``, ``terminal``,
``register_variants``, ``confirm_not_found``, ``flush_done`` — are sent to the child, one at a
time and in order, as pickled frames over its stdin and answered over its stdout; the reads
(``stored_state``, ``kept_record``) stay in this process, on its own index connection (the
index is SQLite in WAL mode: readers see the last committed state).

The child is still the one writer: it opens the same :class:`Archive` this process would,
while this process holds the archive's writer lock and writes nothing itself until the child
has finished. Log events the child emits travel back with each answer and are logged here,
so the run's log holds them as before. An exception is re-raised here (as itself when it can
be pickled, else as a :class:`StoreError` naming it). The child ignores SIGINT and SIGTERM: an
interrupted run lets it finish what it was sent, then ``close`` marks done (one sync) the
threads it wrote. When its stdin ends without ``close`` (the run was killed) it leaves those
threads pending, as a writer thread dying with its process would, and exits.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import structlog

from pplx_archiver.core import plan as planning
from pplx_archiver.core.writes import ThreadCommit
from pplx_archiver.errors import StoreError

log = structlog.get_logger()

# Below this many threads to fetch a run keeps its writer in a thread: starting the child
# (an interpreter and its imports, ~0.3 s of CPU) pays only on a run of some size.
OFFLOAD_MIN_THREADS = 150
MODULE = "pplx_archiver.shell.run.writer_process"
_HEADER = struct.Struct("!Q")


def write_frame(stream: IO[bytes], value: Any) -> None:
    """One pickled value, length first."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next value, or raise EOFError when the other side has gone."""
    head = _read_exactly(stream, _HEADER.size)
    return pickle.loads(_read_exactly(stream, _HEADER.unpack(head)[0]))  # frames of our own child


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise EOFError("the archive writer process closed its pipe")
    return data


def _portable(exc: BaseException) -> BaseException:
    """The exception itself when it survives pickling, else a StoreError naming it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # any pickling failure: send a plain error instead
        return StoreError(f"{type(exc).__name__}: {exc}")
    return exc


class WriterProcess:
    """The child process and its pipes; :meth:`call` is one request and its answer."""

    def __init__(self, out_dir: Path, *, wait: bool = True) -> None:
        env = dict(os.environ)
        # The child imports this very package: the path this process found it on.
        root = str(Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        try:
            self._proc = subprocess.Popen(  # our own interpreter and module
                [sys.executable, "-m", MODULE, str(out_dir)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                start_new_session=False,
            )
        except OSError as exc:
            raise StoreError(f"the archive writer process did not start: {exc}") from None
        self._lock = threading.Lock()
        self._ready = False
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

    def discard(self) -> None:
        """End a child that was started and never used (it has written nothing)."""
        if self._proc.stdin is not None:  # the end of its stdin: it leaves, nothing pending
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        self._reap()  # its "ready" waits in the pipe, which stays open until it has gone
        self._close_pipes()

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run ``Archive.<name>(*args, **kwargs)`` in the child; its result or its error."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with self._lock:
            try:
                write_frame(self._proc.stdin, (name, args, kwargs))
                status, value, self.unsynced, events = read_frame(self._proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError) as exc:
                code = self._proc.poll()
                raise StoreError(
                    f"the archive writer process ended unexpectedly (exit {code}): {exc}"
                ) from None
        for level, event, fields in events:
            getattr(log, level, log.info)(event, **fields)
        if status == "error":
            raise value
        return value

    def close(self) -> None:
        """Ask the child to finish (mark done what it wrote) and wait for it."""
        if self._proc.poll() is None:
            try:
                self.call("close")
            except StoreError:
                pass
        self._close_pipes()
        code, cpu_s = self._reap()
        log.info("WRITER_PROCESS_ENDED", exit_code=code, cpu_s=cpu_s)
        if code != 0:
            raise StoreError(f"the archive writer process failed (exit {code})")

    def _close_pipes(self) -> None:
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # a child that died: a broken pipe
                    stream.close()

    def _reap(self) -> tuple[int, float | None]:
        """Wait for the child; its exit code and the CPU seconds it used (None if unknown)."""
        if self._proc.returncode is not None:
            return self._proc.returncode, None
        try:
            _pid, status, usage = os.wait4(self._proc.pid, 0)
        except ChildProcessError:
            return self._proc.wait(), None
        self._proc.returncode = os.waitstatus_to_exitcode(status)
        return self._proc.returncode, round(usage.ru_utime + usage.ru_stime, 3)


class OffloadedStore:
    """The scheduler's store with every change made by a :class:`WriterProcess`."""

    def __init__(self, local: Any, out_dir: Path, process: WriterProcess | None = None) -> None:
        self.local = local
        self.process = process or WriterProcess(out_dir)
        self.process.wait_ready()

    # reads: this process's index connection
    def stored_state(self, thread_uuid: str) -> planning.StoredState | None:
        state: planning.StoredState | None = self.local.stored_state(thread_uuid)
        return state

    def kept_record(self, thread_uuid: str) -> dict[str, Any]:
        record: dict[str, Any] = self.local.kept_record(thread_uuid)
        return record

    # changes: the child
    def commit(self, plan: ThreadCommit) -> Mapping[str, Any]:
        fields: Mapping[str, Any] = self.process.call("commit", plan)
        return fields

    def fail(self, thread_uuid: str, error: str, error_path: str | None, run_id: int) -> None:
        self.process.call("fail", thread_uuid, error, error_path, run_id)

    def terminal(self, thread_uuid: str, state: str, run_id: int) -> None:
        self.process.call("terminal", thread_uuid, state, run_id)

    def register_variants(self, records: Any, source: str, run_id: int | None = None) -> list[Any]:
        new: list[Any] = self.process.call("register_variants", list(records), source, run_id)
        return new

    def confirm_not_found(self, uuid: str, error: str, run_id: int, immediate: bool) -> bool:
        return bool(self.process.call("confirm_not_found", uuid, error, run_id, immediate))

    def flush_done(self) -> int:
        return int(self.process.call("flush_done"))

    @property
    def unsynced(self) -> int:
        return self.process.unsynced

    def close(self) -> None:
        """End the child; then re-read what it appended to the variant registry."""
        try:
            self.process.close()
        finally:
            reload = getattr(self.local, "reload_registry", None)
            if reload is not None:
                reload()


class Offloader:
    """The run's ``offload``: a writer process for ``archive`` when the run is worth one.

    ``setting`` ``on`` always, ``off`` never, ``auto`` on a machine of several cores when the
    run fetches at least :data:`OFFLOAD_MIN_THREADS` threads — or at once when ``early`` (a
    first archive of an account: every listed thread is new, so the run is as large as the
    account): the child is then started right away, its start-up overlapping the session check
    and the listing, and takes over from the first write (:attr:`min_threads` 1). A child
    started early and never used is ended by :meth:`discard`.
    """

    def __init__(self, archive: Any, setting: str = "auto", *, early: bool = False) -> None:
        self._archive = archive
        self._setting = setting
        cores = (os.cpu_count() or 1) > 1
        early = early and (setting == "on" or (setting == "auto" and cores))
        self.min_threads = 1 if early else OFFLOAD_MIN_THREADS
        self._spare: WriterProcess | None = None
        if early:
            try:
                self._spare = WriterProcess(archive.out, wait=False)
            except StoreError as exc:
                log.warning("WRITER_PROCESS_UNAVAILABLE", error=str(exc))

    def __call__(self, to_fetch: int) -> OffloadedStore | None:
        spare, self._spare = self._spare, None
        wanted = spare is not None or self._setting == "on"
        if self._setting == "auto" and not wanted:
            wanted = to_fetch >= OFFLOAD_MIN_THREADS and (os.cpu_count() or 1) > 1
        if not wanted:
            return None
        try:
            return OffloadedStore(self._archive, self._archive.out, spare)
        except StoreError as exc:  # the run still works: it writes in a thread instead
            log.warning("WRITER_PROCESS_UNAVAILABLE", error=str(exc))
            return None

    def discard(self) -> None:
        """End the child started early if the run never wrote anything."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.discard()


def offload_for(archive: Any, setting: str = "auto", *, early: bool = False) -> Offloader:
    """The run's :class:`Offloader` (see there)."""
    return Offloader(archive, setting, early=early)


# -- the child ---------------------------------------------------------------------------------

_ALLOWED = frozenset(
    {"commit", "fail", "terminal", "register_variants", "confirm_not_found", "flush_done"}
)


def _capture(events: list[tuple[str, str, dict[str, Any]]]) -> Any:
    """A structlog processor keeping each event for the answer instead of printing it."""

    def processor(_logger: Any, method: str, event_dict: Any) -> Any:
        fields = dict(event_dict)
        event = str(fields.pop("event", ""))
        events.append((method, event, fields))
        raise structlog.DropEvent

    return processor


def child_main(out_dir: Path, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Serve store calls on ``stdin``/``stdout`` until ``close`` or the end of ``stdin``."""
    from pplx_archiver.shell.archive.store import Archive

    events: list[tuple[str, str, dict[str, Any]]] = []
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, _capture(events)],
        cache_logger_on_first_use=False,
    )
    archive = Archive(out_dir, group_commit=True)
    write_frame(stdout, ("ready", os.getpid()))
    try:
        while True:
            try:
                name, args, kwargs = read_frame(stdin)
            except EOFError:
                # The run has gone (killed): as with a writer thread dying with it, the
                # threads not yet synced stay pending, to be fetched again by the next run.
                archive.writer.drop_unsynced()
                return
            if name == "close":
                archive.flush_done()
                write_frame(stdout, ("ok", None, archive.unsynced, events))
                return
            try:
                if name not in _ALLOWED:
                    raise StoreError(f"the archive writer does not do {name!r}")
                answer: tuple[Any, ...] = ("ok", getattr(archive, name)(*args, **kwargs))
            except Exception as exc:  # every error goes back to the run
                answer = ("error", _portable(exc))
            write_frame(stdout, (*answer, archive.unsynced, list(events)))
            events.clear()
    finally:
        archive.close()


def main() -> None:  # pragma: no cover (runs as the child; tests/shell/test_writer_process.py)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Frames go over a private copy of stdout; anything printed goes to stderr instead.
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    child_main(Path(sys.argv[1]), sys.stdin.buffer, frames)
    frames.close()


if __name__ == "__main__":  # pragma: no cover
    main()
