"""The writer process: the same archive as a writer thread, errors and events brought back."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from pplx_archiver.core.archive.writes import ThreadCommit
from pplx_archiver.core.thread.model import ListingRow
from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.run.run_types import GROUP_COMMIT_SECONDS, GROUP_COMMIT_SIZE
from pplx_archiver.shell.writer import frames, writer_child, writer_process
from pplx_archiver.shell.writer.offload import offload_for
from pplx_archiver.shell.writer.writer_process import OffloadedStore
from tests.shell.store_helpers import raw, result

UUIDS = [f"0a1b2c3d-0000-4000-8000-00000000000{i}" for i in range(1, 5)]
VARIANT = {"thread_uuid": UUIDS[0], "entry_uuid": "e1", "sibling_uuid": "e2", "uuid8": "0a1b2c3d"}


def _plans() -> list[ThreadCommit]:
    plans = []
    for n, uuid in enumerate(UUIDS):
        res = result(uuid, title=f"Thread {n}", turns=n + 1)
        row = ListingRow(thread_id=uuid, title=f"Thread {n}", updated_at=f"2026-07-2{n}")
        plans.append(ThreadCommit("acct", res, raw(b'{"entries":[]}'), None, row, row.updated_at))
    return plans


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "index" not in p.relative_to(root).parts
    }


def _run(store: OffloadedStore | Archive) -> None:
    for plan in _plans():
        store.commit(plan)
    store.register_variants([VARIANT], "online", None)
    store.fail("0a1b2c3d-0000-4000-8000-00000000000f", "FetchError: boom", None, 1)
    store.flush_done()


def test_the_child_writes_the_archive_a_writer_thread_writes(tmp_path: Path) -> None:
    """Commits, a variant and a failure sent to the child leave the same files, the same
    index rows and the same registry as the same calls made in this process."""
    with Archive(tmp_path / "a", group_commit=True) as here:
        _run(here)
    with Archive(tmp_path / "b", group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        _run(store)
        assert store.unsynced == 0
        store.close()
        assert local.get(UUIDS[3]) is not None and local.get(UUIDS[3]).status == "done"  # type: ignore[union-attr]
        assert [r["entry_uuid"] for r in local.registry.current().values()] == ["e1"]
    assert _files(tmp_path / "a") == _files(tmp_path / "b") != {}
    with Archive(tmp_path / "a") as a, Archive(tmp_path / "b") as b:
        rows_a = {r.uuid: (r.status, r.path, r.files) for r in a.iter_threads()}
        rows_b = {r.uuid: (r.status, r.path, r.files) for r in b.iter_threads()}
        assert rows_a == rows_b and len(rows_a) == 5


def test_an_error_in_the_child_is_raised_here_and_the_child_goes_on(tmp_path: Path) -> None:
    """A refused commit comes back as the StoreError it raised; later calls still work."""
    plan = _plans()[0]
    bad = ThreadCommit("acct", result(UUIDS[0]), plan.raw_entries, None, plan.listing)
    bad.result.files["../escape.md"] = b"x"  # type: ignore[index]
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        try:
            with pytest.raises(StoreError, match="escape"):
                store.commit(bad)
            store.commit(plan)
            store.flush_done()
        finally:
            store.close()
        row = local.get(UUIDS[0])
        assert row is not None and row.status == "done"
    assert not (tmp_path.parent / "escape.md").exists()


def test_the_childs_log_events_are_logged_by_the_run(tmp_path: Path) -> None:
    """An event the archive logs in the child (a search update that failed: its table is
    gone) reaches this process's log with its fields, and the thread is still done."""
    first, second = _plans()[:2]
    with Archive(tmp_path, group_commit=True) as local:
        local.commit(first)
        local.flush_done()  # creates the search tables
        local.index._db.execute("DROP TABLE search_tri")
        store = OffloadedStore(local, local.out)
        try:
            with capture_logs() as logs:
                store.commit(second)
                store.flush_done()
        finally:
            store.close()
        row = local.get(UUIDS[1])
        assert row is not None and row.status == "done"
    failed = [e for e in logs if e.get("event") == "SEARCH_INDEX_FAILED"]
    assert [e["thread_uuid"] for e in failed] == [UUIDS[1]]
    assert failed[0]["log_level"] == "warning" and "search_tri" in failed[0]["error"]


def test_a_writer_process_that_dies_is_a_clear_error(tmp_path: Path) -> None:
    """A child killed mid-run: the next call fails with a StoreError that says so."""
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        store.commit(_plans()[0])
        os.kill(store.process._proc.pid, signal.SIGKILL)
        store.process._proc.wait()
        with pytest.raises(StoreError, match="writer process ended unexpectedly"):
            store.commit(_plans()[1])
        with pytest.raises(StoreError, match="failed"):
            store.close()


def test_offload_only_for_runs_large_enough_unless_asked(tmp_path: Path) -> None:
    """``auto`` offloads a run of 150 threads or more (on several cores), ``on`` any run,
    ``off`` none."""
    with Archive(tmp_path, group_commit=True) as local:
        assert offload_for(local, "off")(10_000) is None
        assert offload_for(local, "auto")(10) is None
        for setting, size in (("on", 1), ("auto", 150)):
            if setting == "auto" and (os.cpu_count() or 1) < 2:
                continue
            store = offload_for(local, setting)(size)
            assert isinstance(store, OffloadedStore)
            store.close()


def test_an_early_writer_process_is_started_at_once_and_used_or_ended(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """``early`` (a first archive) starts the child when the offloader is made: the first ask,
    however small, gets that very child; an offloader never asked ends its child, which
    leaves cleanly (exit 0, nothing on stderr)."""
    with Archive(tmp_path, group_commit=True) as local:
        used = offload_for(local, "on", early=True)
        assert used.min_threads == 1 and used._spare is not None
        pid = used._spare._proc.pid
        store = used(1)
        assert isinstance(store, OffloadedStore) and store.process._proc.pid == pid
        store.commit(_plans()[0])
        store.close()
        assert local.get(UUIDS[0]) is not None
        unused = offload_for(local, "on", early=True)
        assert unused._spare is not None
        child = unused._spare._proc
        unused.discard()
        assert child.returncode == 0 and child.stdout is not None and child.stdout.closed
        assert "Traceback" not in capfd.readouterr().err
        assert offload_for(local, "auto").min_threads == 150  # not a first archive: 150
        assert offload_for(local, "off", early=True)._spare is None
        many = (os.cpu_count() or 1) > 1
        auto = offload_for(local, "auto", early=True)  # on one core: no child, 150
        assert (auto._spare is not None, auto.min_threads) == (many, 1 if many else 150)
        auto.discard()


def test_a_writer_process_that_cannot_start_leaves_the_run_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the child cannot start (here: its module cannot be found) the run is told so in
    one warning and writes in a thread: ``offload`` answers None."""
    monkeypatch.setattr(writer_process, "MODULE", "pplx_archiver.no_such_module")
    with Archive(tmp_path, group_commit=True) as local, capture_logs() as logs:
        assert offload_for(local, "on")(500) is None
    warned = [e for e in logs if e["event"] == "WRITER_PROCESS_UNAVAILABLE"]
    assert len(warned) == 1 and "did not start" in warned[0]["error"]


def test_posted_commits_are_answered_later_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``commit_then`` returns before the child has written: the follow-ups run in the
    order sent, each with its thread's fields, when later calls take the answers; never more
    than WINDOW calls are unanswered."""
    monkeypatch.setattr(writer_process, "WINDOW", 2)
    answered: list[str] = []
    seen: list[int] = []
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        try:
            for plan in _plans():
                store.commit_then(plan, lambda info: answered.append(info["path"]))
                seen.append(store.process.in_flight)
            assert max(seen) <= 2 and store.process.in_flight >= 1
            store.flush_done()  # waits for every answer before its own
            assert store.process.in_flight == 0
        finally:
            store.close()
        paths = [local.get(u).path for u in UUIDS]  # type: ignore[union-attr]
        assert all(local.get(u).status == "done" for u in UUIDS)  # type: ignore[union-attr]
    assert answered == paths and len(set(paths)) == 4


def test_a_posted_commit_that_fails_fails_a_later_call_and_the_rest_are_written(
    tmp_path: Path,
) -> None:
    """The error of a commit sent without waiting is raised by the call that takes its
    answer; the commits sent after it are still carried out, each thread whole."""
    plans = _plans()
    bad = ThreadCommit("acct", result(UUIDS[0]), plans[0].raw_entries, None, plans[0].listing)
    bad.result.files["../escape.md"] = b"x"  # type: ignore[index]
    done: list[str] = []
    errors: list[str] = []
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        try:
            for plan in [bad, *plans[1:]]:
                try:  # the error comes with the first call that finds its answer here
                    store.commit_then(plan, lambda info: done.append(info["path"]))
                except StoreError as exc:
                    errors.append(str(exc))
            try:
                store.flush_done()
            except StoreError as exc:
                errors.append(str(exc))
            store.flush_done()  # the error was raised once: the store works on
        finally:
            store.close()
        assert len(errors) == 1 and "escape" in errors[0]
        assert done == [local.get(u).path for u in UUIDS[1:]]  # type: ignore[union-attr]
        assert all(local.get(u).status == "done" for u in UUIDS[1:])  # type: ignore[union-attr]
        assert local.get(UUIDS[0]) is None
    assert not (tmp_path.parent / "escape.md").exists()


def test_answers_left_at_close_are_taken_and_an_error_among_them_logged(
    tmp_path: Path,
) -> None:
    """A run that fails leaves commits unanswered: close takes them (their threads are
    done) and logs an error answer as WRITER_CALL_FAILED instead of raising it."""
    plans = _plans()
    bad = ThreadCommit("acct", result(UUIDS[0]), plans[0].raw_entries, None, plans[0].listing)
    bad.result.files["../escape.md"] = b"x"  # type: ignore[index]
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        raised: list[str] = []
        with capture_logs() as logs:
            for plan in (bad, plans[1]):
                try:  # raised here when its answer came before close (a loaded machine)
                    store.commit_then(plan, lambda info: None)
                except StoreError as exc:
                    raised.append(str(exc))
            store.close()
        row = local.get(UUIDS[1])
        assert row is not None and row.status == "done"
    failed = [e["error"] for e in logs if e["event"] == "WRITER_CALL_FAILED"]
    reported = failed + raised  # once, one way or the other: never lost, never twice
    assert len(reported) == 1 and "escape" in reported[0]


def test_the_child_makes_its_own_group_commits(tmp_path: Path) -> None:
    """Without a ``flush_done`` from the run, the child marks its threads done once
    GROUP_COMMIT_SIZE of them await it (the run reads that from its own connection)."""
    res = [result(f"0a1b2c3d-0000-4000-8000-{n:012x}") for n in range(GROUP_COMMIT_SIZE)]
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        try:
            for r in res:
                row = ListingRow(thread_id=r.thread_uuid, title="t", updated_at="2026-07-20")
                plan = ThreadCommit("acct", r, raw(b'{"entries":[]}'), None, row, row.updated_at)
                store.commit_then(plan, lambda info: None)
            store.process.drain()
            assert store.unsynced == 0  # the run is never asked to flush
            states = {local.get(r.thread_uuid).status for r in res}  # type: ignore[union-attr]
            assert states == {"done"}
        finally:
            store.close()


def test_the_group_commit_rule_of_the_child() -> None:
    """After a commit: a group commit when GROUP_COMMIT_SIZE threads wait or a second has
    passed since the last one; none with nothing waiting; ``flush_done`` restarts the clock."""

    class Fake:
        unsynced = 0
        flushes = 0

        def flush_done(self) -> None:
            self.flushes += 1
            self.unsynced = 0

    fake = Fake()
    group = writer_child._GroupCommit(fake)
    fake.unsynced = GROUP_COMMIT_SIZE - 1
    group.after("commit")
    assert fake.flushes == 0
    fake.unsynced += 1
    group.after("commit")
    assert (fake.flushes, fake.unsynced) == (1, 0)
    group.after("commit")  # nothing waits: nothing to do, even when due
    group.last -= 2 * GROUP_COMMIT_SECONDS
    group.after("commit")
    assert fake.flushes == 1
    fake.unsynced = 1
    group.after("fail")  # only a commit decides
    assert fake.flushes == 1
    group.after("commit")  # due
    assert fake.flushes == 2
    fake.unsynced = 1
    group.after("flush_done")
    group.after("commit")  # the clock restarted: not due, 1 < size
    assert fake.flushes == 2


def test_a_posted_commit_registers_its_variants_before_any_group_commit(tmp_path: Path) -> None:
    """A fetched thread's variants are registered by the child with its commit, not by a
    later call: a group commit can never mark the thread done without its records (the
    next run would skip it and the records would be lost)."""
    res = result(UUIDS[0], variants=(VARIANT,))
    row = ListingRow(thread_id=UUIDS[0], title="t", updated_at="2026-07-20")
    plan = ThreadCommit("acct", res, raw(b'{"entries":[]}'), None, row, row.updated_at, run_id=3)
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        try:
            store.commit_then(plan, lambda info: None)
            store.flush_done()
        finally:
            store.close()
        records = list(local.registry.current().values())
        assert [r["entry_uuid"] for r in records] == ["e1"]  # no register_variants call
        assert local.get(UUIDS[0]).status == "done"  # type: ignore[union-attr]


def test_the_pipe_to_the_child_holds_several_threads(tmp_path: Path) -> None:
    """The pipe to the child is widened (a thread's frame is ~175 KB; a pipe keeps 64 KB)
    unless the system caps pipes lower: then it is as wide as the cap allows."""
    cap = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        try:
            stdin = store.process._proc.stdin
            assert stdin is not None
            size = fcntl.fcntl(stdin.fileno(), fcntl.F_GETPIPE_SZ)
        finally:
            store.close()
    assert size >= min(writer_process.PIPE_BYTES, max(cap, 65536)) > 65536 or cap <= 65536


def test_posting_returns_while_the_child_is_busy_and_the_pipe_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frames wait in this process for a sending thread: with the child stopped (as during
    a long group commit) more than the pipe holds is posted without waiting, ``can_post``
    says no once the queue is full, and everything is written when the child goes on."""
    monkeypatch.setattr(writer_process, "QUEUED", 1)
    big = "x" * 400_000
    done: list[str] = []
    with Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        stdin = store.process._proc.stdin
        assert stdin is not None

        # Whole frames in the pipe, one the sending thread is stuck in, one in the queue.
        def plan(n: int) -> ThreadCommit:
            u = f"0a1b2c3d-0000-4000-8000-{n:012d}"
            row = ListingRow(thread_id=u, title=f"T{n}")
            return ThreadCommit("acct", result(u, title=f"T{n}", answer=big), raw(b"{}"), None, row)

        size = len(frames.frame((frames.COMMIT_ONLINE, (plan(0),), {})))
        count = fcntl.fcntl(stdin.fileno(), fcntl.F_GETPIPE_SZ) // size + 2
        plans = [plan(n) for n in range(count)]
        uuids = [p.result.thread_uuid for p in plans]
        os.kill(store.process._proc.pid, signal.SIGSTOP)

        def post_all() -> None:
            for p in plans:
                store.commit_then(p, lambda i: done.append(i["path"]))

        try:
            posted = threading.Thread(target=post_all)
            posted.start()
            posted.join(timeout=20)
            assert not posted.is_alive(), "posting waited for the stopped child"
            assert store.process.in_flight == count and done == []
            assert not store.can_post()  # the queue is full: a post would wait
        finally:
            os.kill(store.process._proc.pid, signal.SIGCONT)
        store.flush_done()
        assert store.can_post()
        store.close()
        assert len(done) == count
        assert all(local.get(u).status == "done" for u in uuids)  # type: ignore[union-attr]


ORPHAN = """
import os, signal, sys, time
from pathlib import Path
from pplx_archiver.shell.archive.lock import writer_lock
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.writer.writer_process import WINDOW, OffloadedStore
from tests.shell.writer.test_writer_process import many_plans
out, n, applied = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
with writer_lock(out, "batch"):
    local = Archive(out, group_commit=True)
    store = OffloadedStore(local, local.out)
    child = store.process._proc.pid
    print(child, flush=True)
    plans = many_plans(n)
    for plan in plans[:applied]:  # written and answered
        store.commit_then(plan, lambda info: None)
    store.process.drain()
    os.kill(child, signal.SIGSTOP)  # the rest stay queued, whatever the child's speed
    for plan in plans[applied : applied + WINDOW - 1]:
        store.commit_then(plan, lambda info: None)
    deadline = time.monotonic() + 2
    while not store.process._outbox.empty() and time.monotonic() < deadline:
        time.sleep(0.01)  # the sending thread fills the child's pipe
    os._exit(9)  # killed with commits queued for the child
"""


def many_plans(n: int) -> list[ThreadCommit]:
    """``n`` small thread commits (the orphan test's run)."""
    plans = []
    for i in range(n):
        uuid = f"0a1b2c3d-0000-4000-8000-{i:012d}"
        row = ListingRow(thread_id=uuid, title=f"Thread {i}", updated_at="2026-07-20")
        res = result(uuid, title=f"Thread {i}", turns=2)
        plans.append(ThreadCommit("acct", res, raw(b'{"entries":[]}'), None, row, row.updated_at))
    return plans


def _ended(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_a_writer_process_whose_run_was_killed_writes_nothing_more(tmp_path: Path) -> None:
    """The run dies with commits queued for its child (the child is stopped while they are
    sent, so they are still queued whatever the machine's speed): the child applies none of
    them (it stops before its next write), holds the lock until it has gone, and a new run
    then leaves the archive a clean run leaves."""
    import subprocess
    import sys

    n, applied = 200, 100
    out = tmp_path / "killed"
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        [sys.executable, "-c", ORPHAN, str(out), str(n), str(applied)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=root,
    )
    assert proc.stdout is not None
    child = int(proc.stdout.readline().split()[0])
    try:
        assert proc.wait(timeout=120) == 9
    finally:  # it wakes with its run gone and commits queued (and ends the stderr we read)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGCONT)
    _, stderr = proc.communicate(timeout=60)
    assert _ended(child, 15)
    # the child saw its run gone before writing again: no write into a dead pipe
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr, stderr.decode()
    with Archive(out) as archive:
        rows = list(archive.iter_threads())
        assert len(rows) <= applied  # none of the queued commits was applied
        for plan in many_plans(n):  # the next run: every thread again
            archive.commit(plan)
    with Archive(tmp_path / "clean") as clean:
        for plan in many_plans(n):
            clean.commit(plan)
    assert _files(out) == _files(tmp_path / "clean")


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc (Linux)")
def test_the_writer_process_holds_the_run_s_lock(tmp_path: Path) -> None:
    """The child inherits the archive's writer lock: it is held while the child lives."""
    from pplx_archiver.shell.archive.lock import lock_path, writer_lock

    with writer_lock(tmp_path, "batch"), Archive(tmp_path, group_commit=True) as local:
        store = OffloadedStore(local, local.out)
        pid = store.process._proc.pid
        fds = Path(f"/proc/{pid}/fd")
        links = {os.readlink(fds / name) for name in os.listdir(fds)}
        assert str(lock_path(tmp_path).resolve()) in links
        store.close()


def test_the_child_applies_nothing_once_its_run_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calls still in the pipe when the run died are not applied (the parent changed)."""
    import io

    plans = many_plans(3)
    stdin = io.BytesIO(b"".join(frames.frame(("commit", (p,), {})) for p in plans))
    parents = iter([100, 100, 1, 1, 1])  # at start, first call; then the run is gone
    monkeypatch.setattr(writer_child.os, "getppid", lambda: next(parents))
    writer_child.child_main(tmp_path, stdin, io.BytesIO())
    with Archive(tmp_path) as archive:
        assert [r.uuid for r in archive.iter_threads()] == [plans[0].thread_uuid]
