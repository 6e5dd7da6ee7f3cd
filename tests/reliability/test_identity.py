"""Identity is checked: a payload answering for another thread fails, touching nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.reliability.conftest import index_statuses, run_cli, sim_args, sim_get


class Spoof:
    """ASGI middleware: detail requests for one thread are answered with another's payload."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.swap: dict[str, str] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        head, _, last = path.rpartition("/")
        if scope["type"] == "http" and head == "/rest/thread" and last in self.swap:
            scope = {**scope, "path": f"{head}/{self.swap[last]}", "raw_path": None}
        await self.app(scope, receive, send)


@pytest.fixture
def spoof_sim() -> Iterator[tuple[RunningSim, Spoof]]:
    """A small simulated account behind the spoofing middleware."""
    holder: list[Spoof] = []

    def wrap(app: Any) -> Any:
        holder.append(Spoof(app))
        return holder[0]

    with serve_in_thread(SimConfig(threads=20, seed=17), wrap=wrap) as sim:
        yield sim, holder[0]


def _files(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and p.relative_to(out).parts[0] != "index"
    }


def test_identity_spoof_fails_the_thread(
    spoof_sim: tuple[RunningSim, Spoof], tmp_path: Path
) -> None:
    """A thread whose payload is another thread's fails with identity_mismatch; no file of
    any folder changes and verify stays ok."""
    sim, spoof = spoof_sim
    out = tmp_path / "a"
    fast = ("--rate", "1000", "--burst", "100")
    assert run_cli(["batch", *sim_args(sim, out, *fast)], out).exit_code == 0
    threads = [t for t in sim_get(sim, "/__sim/truth")["threads"] if t["era_state"] == "ok"]
    victim, claimed = threads[2], threads[5]
    spoof.swap = {victim["uuid"]: claimed["uuid"], victim["slug"]: claimed["slug"]}
    before = _files(out)
    result = run_cli(["export", victim["uuid"], *sim_args(sim, out)], out)
    assert result.exit_code == 1, result.output
    failed = [e for e in result.events if e["event"] == "THREAD_FAILED"]
    assert len(failed) == 1 and failed[0]["thread_uuid"] == victim["uuid"]
    assert failed[0]["error"].startswith("identity_mismatch")
    assert _files(out) == before
    assert index_statuses(out)[claimed["uuid"]] == "done"
    assert not [e for e in result.events if e["event"] == "THREAD_ARCHIVED"]


def test_summary_lists_failed_titles_and_the_log_file(
    spoof_sim: tuple[RunningSim, Spoof], tmp_path: Path
) -> None:
    """The console shows no per-thread events by default; the summary lists the failed
    thread with its title and names the log file; --verbose shows the events."""
    sim, spoof = spoof_sim
    out = tmp_path / "a"
    fast = ("--rate", "1000", "--burst", "100", "--log-format", "console")
    threads = [t for t in sim_get(sim, "/__sim/truth")["threads"] if t["era_state"] == "ok"]
    titled = [t for t in threads if t.get("title") and t["title"].isascii()]
    victim, claimed = titled[0], titled[1]
    spoof.swap = {victim["uuid"]: claimed["uuid"], victim["slug"]: claimed["slug"]}
    quiet = run_cli(["batch", *sim_args(sim, out, *fast)], out)
    assert quiet.exit_code == 1
    assert "THREAD_ARCHIVED" not in quiet.output
    assert "THREAD_FAILED" in quiet.output  # errors are shown
    assert victim["title"][:30] in quiet.output
    logs = sorted((out / "index" / "logs").glob("batch-*.jsonl"))
    assert f"log: {logs[-1]}" in quiet.output
    assert any(e["event"] == "THREAD_ARCHIVED" for e in quiet.events)  # all in the file
    verbose = run_cli(["sync", *sim_args(sim, out, *fast, "--verbose", "--force")], out)
    assert "THREAD_ARCHIVED" in verbose.output
    errors_only = run_cli(["sync", *sim_args(sim, out, *fast, "--quiet", "--force")], out)
    assert "THREAD_ARCHIVED" not in errors_only.output
    assert "THREAD_FAILED" in errors_only.output
