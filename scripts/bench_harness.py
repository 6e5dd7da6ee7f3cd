"""Benchmark plumbing: the archiver as a measured child process, the simulator's CPU and stats.

The archiver always runs as its own process (``.venv/bin/pplx-export …``), the simulator in
another (``serve_subprocess``), so client and server never share an interpreter or an event
loop. :func:`run_archiver` reaps the child with ``os.wait4`` to get its own user+sys CPU
seconds and peak RSS (``ru_maxrss``; worker processes it waited for are folded in by the
kernel). :class:`SimProbe` samples the simulator process's CPU from ``/proc`` while a
scenario runs, so a result can say whether the server saturated a core.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CLK_TCK = os.sysconf("SC_CLK_TCK")


def pplx_export() -> list[str]:
    """The command that starts the archiver (the venv's console script)."""
    script = BIN / "pplx-export"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "pplx_archiver"]


@dataclasses.dataclass(frozen=True, slots=True)
class ChildRun:
    """What one archiver process did: exit code, wall clock, own CPU, peak RSS, its log."""

    returncode: int
    wall_s: float
    cpu_user_s: float
    cpu_sys_s: float
    peak_rss_mb: float
    events: list[dict[str, Any]]
    stdout: str

    @property
    def cpu_s(self) -> float:
        """User + system CPU seconds of the archiver process."""
        return self.cpu_user_s + self.cpu_sys_s

    def summary(self) -> dict[str, Any]:
        """The ``RUN_SUMMARY`` event of the run (empty when the run logged none)."""
        found = [e for e in self.events if e.get("event") == "RUN_SUMMARY"]
        return found[-1] if found else {}

    def named(self, event: str) -> list[dict[str, Any]]:
        """Every log event with that name."""
        return [e for e in self.events if e.get("event") == event]


def _read_events(path: Path) -> list[dict[str, Any]]:
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def _spawn_and_reap(
    argv: list[str], env: dict[str, str], out_path: str, err_path: str
) -> tuple[int, float, float, float, float]:
    """In a small process (forked from the forkserver): run ``argv``, reap it with
    ``os.wait4``; (exit code, wall, user, sys, ru_maxrss in kB)."""
    with open(err_path, "wb") as err, open(out_path, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=str(ROOT))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    return code, wall, usage.ru_utime, usage.ru_stime, float(usage.ru_maxrss)


_LAUNCHER: Any = None


def _launcher() -> Any:
    """One worker process at a time, each forked from multiprocessing's forkserver (a fresh
    interpreter of a few MB). A child's ``ru_maxrss`` starts from the peak of the process
    that started it (exec records the old address space's high-water mark): started by this
    process after it had read a 20,000-thread run's log, every command's peak RSS read as
    this process's 155 MB."""
    global _LAUNCHER
    if _LAUNCHER is None:
        import concurrent.futures

        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([])  # not even this script's main module
        _LAUNCHER = concurrent.futures.ProcessPoolExecutor(
            max_workers=1, mp_context=context, max_tasks_per_child=1
        )
    return _LAUNCHER


def run_archiver(
    args: Sequence[str], *, env: dict[str, str] | None = None, workdir: Path
) -> ChildRun:
    """Run ``pplx-export ARGS`` as a child process; measure wall, CPU and peak RSS."""
    workdir.mkdir(parents=True, exist_ok=True)
    err_path = workdir / f"stderr-{time.monotonic_ns()}.jsonl"
    out_path = err_path.with_suffix(".out")
    # Every event on stderr (the console shows only warnings by default): the figures read
    # RUN_SUMMARY, THREAD_ARCHIVED and the like from there.
    child_env = dict(os.environ) | {"PPLX_CONSOLE_LEVEL": "info"}
    child_env.update(env or {})
    argv = [*pplx_export(), *args]
    job = _launcher().submit(_spawn_and_reap, argv, child_env, str(out_path), str(err_path))
    code, wall, user, system, maxrss_kb = job.result()
    events = _read_events(err_path)
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    err_path.unlink()
    out_path.unlink()
    return ChildRun(
        returncode=code,
        wall_s=wall,
        cpu_user_s=user,
        cpu_sys_s=system,
        peak_rss_mb=maxrss_kb / 1024.0,
        events=events,
        stdout=stdout,
    )


def sim_pid() -> int:
    """Process id of the running simulator (a ``serve_subprocess`` child of this process)."""
    found = [c.pid for c in multiprocessing.active_children() if c.name == "pplx-sim"]
    if len(found) != 1 or found[0] is None:
        raise RuntimeError(f"expected one running simulator process, found {found}")
    return int(found[0])


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far (from ``/proc/PID/stat``)."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class SimProbe:
    """Samples the simulator's CPU every ``interval`` s; reports the mean and the busiest 2 s."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid = pid
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sim-probe", daemon=True)

    def _sample(self) -> None:
        try:
            self.samples.append((time.perf_counter(), proc_cpu_s(self.pid)))
        except (OSError, ValueError):
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> SimProbe:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def report(self) -> dict[str, Any]:
        """Server CPU seconds, mean share of one core, busiest 2 s window, saturation flag."""
        if len(self.samples) < 2:
            return {"sim_cpu_s": None, "sim_core_share": None, "sim_peak_core_share": None}
        (t0, c0), (t1, c1) = self.samples[0], self.samples[-1]
        peak = 0.0
        step = max(1, round(2.0 / self.interval))
        for i in range(len(self.samples) - step):
            (ta, ca), (tb, cb) = self.samples[i], self.samples[i + step]
            if tb > ta:
                peak = max(peak, (cb - ca) / (tb - ta))
        mean = (c1 - c0) / (t1 - t0) if t1 > t0 else 0.0
        return {
            "sim_cpu_s": round(c1 - c0, 2),
            "sim_core_share": round(mean, 3),
            "sim_peak_core_share": round(peak, 3),
            "sim_saturated": peak >= 0.9,
        }


def sim_get(base_url: str, path: str, method: str = "GET", body: Any = None) -> Any:
    """Call a simulator control endpoint (``/__sim/…``) and decode its JSON answer."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base_url + path, data=data, method=method)
    if data is not None:
        req.add_header("content-type", "application/json")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def reset_stats(base_url: str) -> None:
    """Zero the simulator's request counters."""
    sim_get(base_url, "/__sim/stats", method="DELETE")


def snapshot_mtimes(root: Path) -> dict[str, int]:
    """Relative path → mtime (ns) of every file under ``root``."""
    out: dict[str, int] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            try:
                out[str(path.relative_to(root))] = path.stat().st_mtime_ns
            except FileNotFoundError:
                continue
    return out


def changed_files(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """Files added or whose mtime moved between two snapshots."""
    return sorted(p for p, m in after.items() if before.get(p) != m)


@contextmanager
def isolated_env(tmp: Path, sim: Any) -> Iterator[dict[str, str]]:
    """Environment for an archiver child: the simulator's session, no user config."""
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    yield {
        "PPLX_SESSION_TOKEN": sim.session_token,
        "PPLX_BASE_URL": sim.base_url,
        "XDG_CONFIG_HOME": str(home / ".config"),
        "HOME": str(home),
        "PYTHONHASHSEED": "0",
    }


def machine() -> dict[str, Any]:
    """What the benchmark ran on: CPU model, cores, memory, load, Python."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": sys.version.split()[0],
        "platform": sys.platform,
    }


def inode_create_ms(where: Path, count: int = 3000) -> float:
    """CPU milliseconds this machine's file system takes to create one file or folder.

    Files of 4 KB in folders of 12 (about a thread folder's shape), created as the writer
    does (exclusive create, write, rename); a folder and a file cost about the same where
    creating an inode is what costs. Every file and folder of an archive is one such cost,
    paid by the writer process: it bounds what a zero-latency run can reach on the machine.
    The files stay (under ``where``, which the caller deletes at the end): deleting them now
    would slow every creation that follows for minutes on a file system without a journal.
    """
    probe = Path(tempfile.mkdtemp(prefix="inode-probe-", dir=where))
    started = time.process_time()
    for n in range(count):
        folder = probe / f"d{n // 12}"
        if n % 12 == 0:
            folder.mkdir()
        tmp = folder / f"f{n}.tmp"
        with open(tmp, "xb") as fh:
            fh.write(b"x" * 4096)
        tmp.replace(folder / f"f{n}")
    created = count + (count + 11) // 12
    return round(1000 * (time.process_time() - started) / created, 4)


def archive_entries(out: Path) -> int:
    """Files and folders under an archive (each one inode the writer created)."""
    return sum(len(dirs) + len(files) for _root, dirs, files in os.walk(out))
