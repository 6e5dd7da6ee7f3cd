"""Crash-resume: SIGKILL the archiving process at seeded random moments, restart, compare.

The archiver runs as a real child process (``python -m pplx_archiver batch``) against the
simulator served from the test process. Each kill moment is drawn from a seeded
``random.Random``: a number of thread-detail requests the child must have made (0 = as soon as
the listing started), plus a sub-second offset. After five kills the last restart runs to the
end, and the archive must equal an uninterrupted run's byte for byte (``thread.json`` compared
without ``exported_at``, the time of the run that wrote it), hold no temp file, and pass
``pplx-export verify``.
"""

from __future__ import annotations

import random
import re
import signal
import time
from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.shell.archive.fsutil import TEMP_PATTERN
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.reliability.conftest import (
    index_statuses,
    registry_lines,
    run_cli,
    sim_args,
    sim_get,
    size,
    spawn_cli,
    truth_uuids,
)

THREADS = size(40, 600)
KILLS = 5
SEED = size(20260, 4242)
RUN_OPTS = ("--concurrency", "4", "--rate", "1000", "--burst", "100")


def derived_view(out: Path) -> dict[str, bytes]:
    """Every file outside ``index/`` by relative path; thread.json without ``exported_at``;
    raw files with their signed links' expiry times blanked (the simulator signs for the
    current 15-minute window, so two runs on each side of a window's end differ only there,
    which the archive itself counts as the same content)."""
    files: dict[str, bytes] = {}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out)
        if not path.is_file() or rel.parts[0] == "index":
            continue
        data = path.read_bytes()
        if path.name == "thread.json":
            record = orjson.loads(data)
            record.pop("exported_at")
            data = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
        elif path.name.startswith("raw_"):
            data = re.sub(rb"Expires=\d+", b"Expires=0", data)
        files[rel.as_posix()] = data
    return files


def registry_view(out: Path) -> list[dict[str, Any]]:
    """Registry records without the time they were registered, in file order."""
    return [{k: v for k, v in line.items() if k != "registered_at"} for line in registry_lines(out)]


def temp_files(out: Path) -> list[Path]:
    """Leftovers of interrupted atomic writes anywhere under ``out``."""
    return [p for p in out.rglob("*") if TEMP_PATTERN.match(p.name)]


def detail_requests(sim: RunningSim) -> int:
    """Thread-detail requests the simulator has answered so far."""
    return int(sim_get(sim, "/__sim/stats")["requests"].get("thread_detail", 0))


def kill_at(sim: RunningSim, args: list[str], env_dir: Path, target: int, extra_s: float) -> int:
    """Run the archiver until it has made ``target`` more detail requests, then SIGKILL it."""
    start = detail_requests(sim)
    listed = int(sim_get(sim, "/__sim/stats")["requests"].get("list_ask_threads", 0))
    proc = spawn_cli(args, env_dir, output=False)  # its output is never read
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            stats = sim_get(sim, "/__sim/stats")["requests"]
            started = stats.get("list_ask_threads", 0) > listed
            if started and stats.get("thread_detail", 0) - start >= target:
                time.sleep(extra_s)
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    return proc.returncode


def test_five_sigkills_then_resume_equal_an_uninterrupted_run(tmp_path: Path) -> None:
    """Five SIGKILLs at seeded moments, then a full run: same bytes, no temp file, verify 0."""
    rng = random.Random(SEED)
    with serve_in_thread(SimConfig(threads=THREADS, latency_ms=3)) as sim:
        reference = tmp_path / "reference"
        before = detail_requests(sim)
        ref = run_cli(["batch", *sim_args(sim, reference, *RUN_OPTS)], reference)
        assert ref.exit_code == 0, ref.output
        per_run = detail_requests(sim) - before
        want = truth_uuids(sim)

        out = tmp_path / "crashed"
        args = ["batch", *sim_args(sim, out, *RUN_OPTS)]
        codes = []
        for _ in range(KILLS):
            done = sum(s == "done" for s in index_statuses(out).values()) if out.exists() else 0
            remaining = per_run * max(0, THREADS - done) // THREADS
            target = rng.randint(0, max(1, remaining // 2))
            codes.append(kill_at(sim, args, tmp_path / "config", target, rng.uniform(0, 0.2)))
        final = spawn_cli(args, tmp_path / "config")
        output, _ = final.communicate(timeout=300)

    assert codes == [-signal.SIGKILL] * KILLS
    assert final.returncode == 0, output.decode()
    statuses = index_statuses(out)
    assert set(statuses.items()) == {(u, "done") for u in want}, (statuses, output.decode())
    got, expected = derived_view(out), derived_view(reference)
    assert sorted(set(got) - set(expected)) == []
    assert sorted(set(expected) - set(got)) == []
    differing = [rel for rel in expected if got[rel] != expected[rel]]
    assert differing == []
    assert temp_files(out) == []
    assert registry_view(out) == registry_view(reference)
    verified = run_cli(["verify", "--out", str(out)])
    assert verified.exit_code == 0, verified.output
