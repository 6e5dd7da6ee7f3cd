"""Progress with counts and a time estimate on the long commands (issue 40 item 4): the
listing phase of a run, verify, relations, usage-backfill, site and reindex."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import anyio

from pplx_archiver.settings import load_settings
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.care import relations as relations_mod
from pplx_archiver.shell.care import verify as verify_mod
from pplx_archiver.shell.care.reindex import reindex
from pplx_archiver.shell.care.usage import backfill_usage
from pplx_archiver.shell.net.auth import open_session
from pplx_archiver.shell.run.progress import Meter, ProgressView, meter_text
from pplx_archiver.shell.run.scheduler import RunSummary
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from pplx_archiver.site.build import build_site
from tests.e2e.conftest import run_cli, sim_args


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_meter_text_counts_rate_and_eta() -> None:
    assert meter_text("verify", 30, 120, 10.0) == "verify: 30/120 (25 %) · 3.0/s · ETA 0:30"
    assert meter_text("x", 1, 4000, 1.0).endswith("ETA 1:06:39")
    assert meter_text("listing", 7, None, 2.0) == "listing: 7 · 3.5/s"
    assert meter_text("x", 0, 5, 1.0).endswith("ETA ?")


def test_meter_on_a_terminal_only() -> None:
    ticks = iter(float(n) for n in range(100))
    term = _Terminal()
    with Meter("usage-backfill", stream=term, clock=lambda: next(ticks), every=0) as meter:
        for done in range(1, 4):
            meter(done, 3)
    shown = term.getvalue()
    assert shown.startswith("\rusage-backfill: 1/3") and shown.endswith("\n")
    assert "3/3 (100 %)" in shown and "ETA 0:00" in shown
    plain = io.StringIO()
    with Meter("site", stream=plain) as meter:
        meter(1, 2)
    assert plain.getvalue() == ""


def test_listing_phase_shows_on_the_bar() -> None:
    term = _Terminal()
    summary = RunSummary(command="batch")
    with ProgressView(enabled=True, stream=term) as view:
        summary.listed = 42
        view.update("listed", summary)
    assert "listed 42" in term.getvalue()


def test_long_commands_report_progress(tmp_path: Path) -> None:
    out = tmp_path / "a"
    calls: dict[str, list[tuple[int, int]]] = {}

    def hook(name: str) -> Callable[[int, int], None]:
        return lambda done, total: calls.setdefault(name, []).append((done, total))

    with serve_in_thread(SimConfig(threads=8)) as sim:
        fast = ("--rate", "1000", "--burst", "100")  # the pacing is not what is tested
        assert run_cli(["batch", *sim_args(sim, out, *fast)], out).exit_code == 0
        settings = load_settings({"out_dir": out, "base_url": sim.base_url,
                                  "session_token": sim.session_token})  # fmt: skip

        async def usage() -> None:
            with Archive(out) as archive:
                async with open_session(settings) as (client, _info):
                    await backfill_usage(archive, client, progress=hook("usage"))

        anyio.run(usage)
    with Archive(out) as archive:
        assert verify_mod.verify(archive, progress=hook("verify")) == []
        relations_mod.build(archive, progress=hook("relations"))
        build_site(archive, tmp_path / "site", progress=hook("site"))
    reindex(out, search_progress=hook("reindex"))
    for name in ("usage", "verify", "relations", "site", "reindex"):
        assert calls.get(name), name
        done, total = calls[name][-1]
        assert done == total > 0, (name, calls[name][-3:])
        assert [d for d, _ in calls[name]] == sorted(d for d, _ in calls[name])
