"""Chaos: a run against a misbehaving server, plus at most one rerun, archives every thread.

The simulator answers 10 % of requests with a 5xx, drops 2 % of connections after the
headers, truncates 1 % of bodies, rate-limits with 429 bursts and shows the Cloudflare
challenge page to a window of requests. Two flavours:

- virtual time: the whole ``run_command`` (listing, workers, assets, writer) against the
  simulator mounted in-process, every pause and backoff (15 s per challenge, API and CDN)
  taken on one :class:`~tests.shell.fake_time.VirtualTime` clock (it jumps to the next
  wake-up once every task waits), the simulator's own token bucket on the same clock;
- real sockets: ``pplx-export batch`` against the simulator on loopback in real time (the
  Cloudflare window only under ``PPLX_SOAK=1``, its pause costing 15 s of wall time).

Both check the archive against ``/__sim/truth``, ``pplx-export verify`` and the variant
registry (no (thread, entry) key twice).
"""

from __future__ import annotations

import dataclasses
import io
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx

from pplx_archiver.cli._run import CommonOptions, run_logging
from pplx_archiver.errors import PplxError
from pplx_archiver.shell.run.runner import run_command
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.faults import FaultMiddleware, SimulatedDisconnect
from pplx_archiver.sim.runner import login_for, serve_in_thread
from pplx_archiver.sim.server import create_app
from pplx_archiver.sim.state import AccountState
from tests.reliability.conftest import (
    SOAK,
    archived_records,
    index_statuses,
    registry_lines,
    run_cli,
    sim_args,
    sim_get,
    size,
    truth_uuids,
)
from tests.shell.fake_time import VirtualTime

# 13 % faults in these proportions: 10 % 5xx, 2 % dropped connections, 1 % truncated bodies.
CHAOS_KINDS = ("500",) * 4 + ("502",) * 3 + ("503",) * 3 + ("drop",) * 2 + ("truncate",)
CHAOS_RATE = 0.13
# Real seconds one virtual-time run may take before the test fails instead of hanging.
RUN_DEADLINE_S = size(120, 900)


def chaos_config(threads: int, *, challenge: bool) -> SimConfig:
    """The misbehaving simulator: faults, a token bucket below the client's ceiling, a window."""
    window = ((threads // 2, 2),) if challenge else ()
    return SimConfig(
        threads=threads,
        fault_rate=CHAOS_RATE,
        fault_kinds=CHAOS_KINDS,
        fault_seed=11,
        rate=25.0,
        burst=8,
        challenge_windows=window,
    )


def check_archive(out: Path, truth: dict[str, dict[str, Any]]) -> None:
    """Every truth thread is done and agrees with the truth; the registry has no duplicate."""
    assert index_statuses(out) == dict.fromkeys(truth, "done")
    records = archived_records(out)
    assert set(records) == set(truth)
    for uuid, want in truth.items():
        assert records[uuid]["mode"] == want["mode"], uuid
        assert records[uuid]["counts"]["turns"] == want["turns"], uuid
    keys = [(r["thread_uuid"], r["entry_uuid"]) for r in registry_lines(out)]
    assert len(keys) == len(set(keys))
    assert sorted(keys) == sorted((u, e) for u, t in truth.items() for e in t["variants"])
    verified = run_cli(["verify", "--out", str(out)])
    assert verified.exit_code == 0, verified.output


# --------------------------------------------------------------------------- virtual time


class DroppingTransport(httpx.AsyncBaseTransport):
    """The in-process simulator; a dropped connection surfaces as httpx's protocol error."""

    def __init__(self, app: Any) -> None:
        self.inner = httpx.ASGITransport(app=app)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self.inner.handle_async_request(request)
        except SimulatedDisconnect as exc:
            raise httpx.RemoteProtocolError("peer closed connection", request=request) from exc


async def virtual_batch(config: SimConfig, out: Path, app: Any, vt: VirtualTime) -> int:
    """One ``batch`` through ``run_command`` under virtual time; returns its exit status."""
    _, _, token = login_for(config)
    opts = CommonOptions(
        out=out,
        base_url="http://sim.test",
        session_token=token,
        concurrency=4,
        rate=100.0,
        burst=20,
        asset_rate=1000.0,
        log_format="json",
    )
    settings = opts.settings()
    codes: list[int] = []

    async def batch() -> None:
        try:
            summary = await run_command(
                settings,
                opts.run_options("batch"),
                transport=DroppingTransport(app),
                stdout=io.StringIO(),
                handle_signals=False,
                sleep=vt.sleep,
                clock=vt.clock,
            )
        except PplxError:
            codes.append(2)
        else:
            codes.append(1 if summary.failed or summary.incomplete else 0)

    with run_logging(settings, "batch"), anyio.fail_after(RUN_DEADLINE_S):
        await vt.run(batch)
    return codes[0]


def test_chaos_in_virtual_time_archives_everything_within_one_rerun(tmp_path: Path) -> None:
    """5xx, drops, truncation, 429s and a challenge window: ≤ 1 rerun archives all, verify 0."""
    config = chaos_config(size(80, 1500), challenge=True)
    vt = VirtualTime()
    sim_app = create_app(config)
    app = FaultMiddleware(sim_app.app, config, sim_app.sim.stats, clock=vt.clock)
    out = tmp_path / "archive"
    codes = [anyio.run(virtual_batch, config, out, app, vt)]
    if codes[0] != 0:
        codes.append(anyio.run(virtual_batch, config, out, app, vt))
    stats = sim_app.sim.stats.as_json()
    assert codes[-1] == 0, codes
    faults = Counter(stats["faults"])
    assert {"500", "502", "503", "drop", "truncate"} <= set(faults), faults
    assert stats["rate_limited"] > 0 and stats["challenges"] == 2
    truth = {t["uuid"]: t for t in AccountState(config).truth()["threads"]}
    check_archive(out, truth)


# --------------------------------------------------------------------------- real sockets


def test_chaos_over_loopback_archives_everything_within_one_rerun(tmp_path: Path) -> None:
    """The real command line over sockets under faults and 429s: ≤ 1 rerun, verify passes."""
    # A bucket well below the client's ceiling, so that 429s happen however fast (or slow,
    # on a loaded machine) the client is: the test must not depend on wall-clock speed.
    config = dataclasses.replace(chaos_config(size(30, 400), challenge=SOAK), rate=10.0)
    out = tmp_path / "archive"
    with serve_in_thread(config) as sim:
        args = ["batch", *sim_args(sim, out, "--concurrency", "4", "--rate", "100")]
        results = [run_cli(args, out)]
        if results[0].exit_code != 0:
            results.append(run_cli(args, out))
        stats = sim_get(sim, "/__sim/stats")
        truth = {t["uuid"]: t for t in sim_get(sim, "/__sim/truth")["threads"]}
        assert set(truth) == truth_uuids(sim)
    assert results[-1].exit_code == 0, results[-1].output
    assert sum(stats["faults"].values()) > 0 and stats["rate_limited"] > 0
    assert stats["challenges"] == (2 if SOAK else 0)
    retried = [e for r in results for e in r.events if e["event"] == "REQUEST_RETRY"]
    assert retried
    check_archive(out, truth)
