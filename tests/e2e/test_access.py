"""Real-world access against the simulator: eras, sessions, rotation, challenges, listers, pacing.

Small accounts (20–30 threads) keep every run a few seconds long. Command-line runs go
through `pplx-export` in-process; the two challenge tests drive the run in virtual time
(the pauses are 15 s and more) with the simulator mounted in-process.
"""

from __future__ import annotations

import json
import stat
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
import structlog

from pplx_archiver.errors import ChallengeAbort, ForbiddenError
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.net.auth import Credential, open_session
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.shell.net.listing import iter_threads
from pplx_archiver.shell.run.scheduler import Run, RunOptions
from pplx_archiver.sim.config import LIBRARY_PAGINATION_HASH, LIBRARY_ROOT_HASH, SimConfig
from pplx_archiver.sim.faults import FaultMiddleware
from pplx_archiver.sim.runner import RunningSim, login_for, serve_in_thread
from pplx_archiver.sim.server import create_app
from pplx_archiver.sim.sessions import token_for
from pplx_archiver.sim.state import AccountState
from tests.e2e.conftest import run_cli, sim_get
from tests.shell.fake_time import VirtualTime
from tests.shell.helpers import settings

FAST = ("--concurrency", "4", "--rate", "1000", "--burst", "100")


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    """CLI runs point the log sink at their own files; later tests must not inherit it."""
    yield
    structlog.reset_defaults()


def _cookie_file(path: Path, cookies: dict[str, str]) -> Path:
    items = [{"name": k, "value": v, "domain": "127.0.0.1"} for k, v in cookies.items()]
    path.write_text(json.dumps(items))
    return path


def _base(sim: RunningSim, out: Path, *extra: str) -> list[str]:
    return ["--out", str(out), "--base-url", sim.base_url, "--log-format", "json", *extra]


def _archived(out: Path) -> dict[str, Path]:
    """Thread uuid → thread folder, for every thread.json under any account folder."""
    found = {}
    for path in out.glob("*/*/*/thread.json"):
        found[orjson.loads(path.read_bytes())["uuid"]] = path.parent
    return found


def _truth(sim: RunningSim) -> dict[str, dict[str, Any]]:
    return {t["uuid"]: t for t in sim_get(sim, "/__sim/truth")["threads"]}


def _events(result: Any, name: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["event"] == name]


def _log_bytes(out: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((out / "index" / "logs").glob("*.jsonl")))


# --------------------------------------------------------------------------- eras


def test_era_c_archives_completely_and_the_header_is_what_makes_it_work(tmp_path: Path) -> None:
    """Era C: the run finds the account id and archives every thread; without the header the
    same cookies list nothing and are refused thread detail."""
    with serve_in_thread(SimConfig(threads=30, era="c")) as sim:
        cookies = _cookie_file(tmp_path / "cookies.json", sim.cookies)
        out = tmp_path / "archive"
        result = run_cli(["batch", *_base(sim, out, "--cookies", str(cookies), *FAST)], out)
        assert result.exit_code == 0, result.output
        truth = _truth(sim)
        assert set(_archived(out)) == set(truth) and len(truth) == 30
        checked = _events(result, "SESSION_CHECKED")
        assert checked[0]["account_id"] == sim.account_id and checked[0]["era"] == "C"

        async def without_then_with() -> tuple[Any, str, Any]:
            thread = next(iter(truth))
            body = {"limit": 5, "offset": 0}
            plain = settings(base_url=sim.base_url)
            async with ApiClient(plain, cookies=sim.cookies, account_id=None) as bare:
                listed, _ = await bare.post_json("/rest/thread/list_ask_threads", body)
                try:
                    await bare.get_json(f"/rest/thread/{thread}")
                    refused = "answered"
                except ForbiddenError as exc:
                    refused = exc.code
            async with ApiClient(plain, cookies=sim.cookies, account_id=sim.account_id) as ok:
                with_header, _ = await ok.post_json("/rest/thread/list_ask_threads", body)
                await ok.get_json(f"/rest/thread/{thread}")
            return listed, refused, with_header

        listed, refused, with_header = anyio.run(without_then_with)
    assert listed == [] and refused == "VIEW_THREAD_NOT_ALLOWED"
    assert len(with_header) == 5


# --------------------------------------------------------------------------- sessions


@pytest.mark.parametrize("how", ["logged_out", "wrong_token"])
def test_logged_out_session_exits_3_before_any_thread_request(tmp_path: Path, how: str) -> None:
    """A logged-out session (or an unknown token) stops with exit 3 and advice, before any
    list or thread request, and writes no thread folder."""
    config = SimConfig(threads=20, logged_in=how != "logged_out")
    with serve_in_thread(config) as sim:
        token = sim.session_token if how == "logged_out" else "eyJ-not-a-session-of-this-server"
        out = tmp_path / "archive"
        result = run_cli(["batch", *_base(sim, out, "--session-token", token)], out)
        stats = sim_get(sim, "/__sim/stats")
    assert result.exit_code == 3, result.output
    assert "logged out" in result.output
    assert "auth save --cookies" in result.output and "--session-token" in result.output
    assert stats["requests"] == {"session": 1}
    assert [p.name for p in out.iterdir()] == ["index"]
    assert _events(result, "AUTH_FAILED")[0]["reason"] == "logged_out"


def test_rotated_cookie_is_used_for_the_rest_and_persisted_0600(tmp_path: Path) -> None:
    """Era B from the stored credential: rotations every few requests with a short grace do
    not break the run; the newest cookie is written back (0600); no secret reaches a log."""
    config = SimConfig(threads=30, rotate_session_every=7, rotation_grace=3)
    with serve_in_thread(config) as sim:
        cookies = _cookie_file(tmp_path / "cookies.json", sim.cookies)
        save = run_cli(["auth", "save", "--base-url", sim.base_url, "--cookies", str(cookies),
                        "--log-format", "json"])  # fmt: skip
        assert save.exit_code == 0, save.output
        stored = tmp_path / "config" / "credentials.json"
        out = tmp_path / "archive"
        fast = ("--concurrency", "3", "--rate", "1000", "--burst", "100")
        result = run_cli(["batch", *_base(sim, out, *fast)], out)
        assert result.exit_code == 0, result.output
        assert set(_archived(out)) == set(_truth(sim))
        rotations = _events(result, "SESSION_COOKIE_ROTATED")
        assert len(rotations) >= 5
        assert all(e["cookie_names"] == ["__Secure-next-auth.session-token"] for e in rotations)
        saved = json.loads(stored.read_bytes())["cookies"]["__Secure-next-auth.session-token"]
        generations = [token_for(config.seed, g) for g in range(200)]
        assert saved in generations and generations.index(saved) >= len(rotations)
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
        assert _events(result, "CREDENTIAL_SAVED")
        # The stored cookie is the live one: a later run with nothing else still works.
        check = run_cli(["auth", "check", "--base-url", sim.base_url, "--log-format", "json"])
        assert check.exit_code == 0, check.output
    assert "s***@example.invalid" in check.output and "sim@example.invalid" not in check.output
    logs = _log_bytes(out) + save.output.encode() + result.output.encode()
    for secret in generations[: generations.index(saved) + 1]:
        assert secret.encode() not in logs
        assert secret.split(".")[-1].encode() not in logs
    assert b"sim@example.invalid" not in logs and b"credentials.json" in logs


# --------------------------------------------------------------------------- challenges


class _Recorder(httpx.AsyncBaseTransport):
    """Passes requests to the in-process simulator; notes (virtual time, path, status)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, time: VirtualTime) -> None:
        self.inner = inner
        self.time = time
        self.sent: list[float] = []
        self.challenged: list[float] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(self.time.now)
        response = await self.inner.handle_async_request(request)
        if response.headers.get("cf-mitigated") == "challenge":
            self.challenged.append(self.time.now)
        return response


async def _virtual_run(config: SimConfig, out: Path, **setting: Any) -> tuple[Any, _Recorder]:
    """A whole batch run against the in-process simulator, every wait in virtual time.

    Returns ``[summary or the run's error, client stats]`` and the recorder.
    """
    vt = VirtualTime()
    app = create_app(config)
    recorder = _Recorder(httpx.ASGITransport(app=app), vt)
    cookies, _, _ = login_for(config)
    run_settings = settings(base_url="http://sim.test", concurrency=4, **setting)
    summary: list[Any] = []

    async def job() -> None:
        async with open_session(run_settings, credential=Credential(cookies, "sim"),
                                transport=recorder, sleep=vt.sleep,
                                clock=vt.clock) as (client, _info):  # fmt: skip
            with Archive(out) as archive:
                run = Run(client, archive, lambda: iter_threads(client),
                          RunOptions(full=True, concurrency=4), handle_signals=False)  # fmt: skip
                try:
                    summary.append(await run.execute())
                except ChallengeAbort as exc:
                    summary.append(exc)
                summary.append(client.stats())

    await vt.run(job)
    return summary, recorder


def test_challenge_windows_pause_every_worker_and_lose_nothing(tmp_path: Path) -> None:
    """Two challenge windows: every worker waits out a growing pause, then all threads land."""
    config = SimConfig(threads=24, challenge_windows=((12, 2), (30, 2)))
    out = tmp_path / "archive"
    (summary, stats), rec = anyio.run(_virtual_run, config, out)
    truth = {t["uuid"] for t in AccountState(config).truth()["threads"]}
    assert summary.archived == 24 and summary.failed == 0
    assert set(_archived(out)) == truth
    assert 2 <= stats.challenges == len(rec.challenged) <= 4
    assert stats.limiter.pauses >= 2
    first, last = rec.challenged[0], rec.challenged[-1]
    # Nothing is sent while a pause lasts: 15 s after the first challenge, longer later.
    after_first = [t for t in rec.sent if t > first]
    assert after_first and min(after_first) >= first + 15.0
    after_last = [t for t in rec.sent if t > last]
    assert after_last and min(after_last) >= last + 30.0


def test_persistent_challenge_stops_after_the_budget_with_growing_pauses(tmp_path: Path) -> None:
    """A challenge that never ends stops the run at the fifth challenge (ChallengeAbort)."""
    config = SimConfig(threads=20, challenge_windows=((8, 10**9),))
    out = tmp_path / "archive"
    (error, stats), rec = anyio.run(_virtual_run, config, out)
    assert isinstance(error, ChallengeAbort)
    assert stats.challenges == len(rec.challenged) >= 5  # in-flight ones may add one
    gaps = [b - a for a, b in zip(rec.challenged, rec.challenged[1:], strict=False)]
    pauses = [g for g in gaps if g > 1]
    assert len(pauses) == 4
    for gap, pause in zip(pauses, (15, 30, 60, 120), strict=True):
        assert pause <= gap < pause + 5
    message = str(error)
    assert "--rate" in message and "--impersonate chrome" in message and "auth save" in message


def test_persistent_challenge_cli_exit_5_with_the_explanation(tmp_path: Path) -> None:
    """On the command line a persistent challenge ends with exit 5, the explanation, and an
    archive whose finished threads are complete."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text("max_challenges = 1\n")
    with serve_in_thread(SimConfig(threads=20, challenge_windows=((12, 10**9),))) as sim:
        out = tmp_path / "archive"
        token = ("--session-token", sim.session_token)
        result = run_cli(["batch", *_base(sim, out, *token, *FAST)], out)
    assert result.exit_code == 5, result.output
    assert "Cloudflare challenged" in result.output and "--impersonate chrome" in result.output
    challenge = _events(result, "CLOUDFLARE_CHALLENGE")
    assert challenge and challenge[-1]["aborting"] is True
    index = Index(out / "index" / "archive.sqlite")
    try:
        done = [row for row in index.iter_threads() if row.status == "done"]
    finally:
        index.close()
    for row in done:
        assert row.path and (out / row.path / "thread.json").is_file()
        assert (out / row.path / "conversation.md").is_file()
    assert len(_archived(out)) == len(done) < 20


# --------------------------------------------------------------------------- listers


def test_graphql_with_stale_hashes_falls_back_and_archives_the_same_threads(
    tmp_path: Path,
) -> None:
    """`--lister graphql` with hashes the server no longer knows logs LISTER_FALLBACK and
    archives the same set as REST; with configured current hashes GraphQL lists alone."""
    with serve_in_thread(SimConfig(threads=30, era="c")) as sim:
        cookies = _cookie_file(tmp_path / "cookies.json", sim.cookies)
        out = tmp_path / "archive"
        args = ["batch", *_base(sim, out, "--cookies", str(cookies), "--lister", "graphql", *FAST)]
        result = run_cli(args, out)
        assert result.exit_code == 0, result.output
        fallback = _events(result, "LISTER_FALLBACK")
        assert fallback and fallback[0]["reason"] == "PERSISTED_QUERY_NOT_FOUND"
        assert fallback[0]["fallback"] == "rest"
        assert set(_archived(out)) == set(_truth(sim))

        (tmp_path / "config").mkdir(exist_ok=True)
        (tmp_path / "config" / "config.toml").write_text(
            "[graphql_hashes]\n"
            f'LibraryThreadsRelayQuery = "{LIBRARY_ROOT_HASH}"\n'
            f'LibraryRecentThreadsPaginationQuery = "{LIBRARY_PAGINATION_HASH}"\n'
        )
        before = sim_get(sim, "/__sim/stats")["requests"]
        fresh = tmp_path / "fresh"
        args = ["batch", *_base(sim, fresh, "--cookies", str(cookies), "--lister", "graphql",
                                "--dry-run")]  # fmt: skip
        dry = run_cli(args, fresh)
        after = sim_get(sim, "/__sim/stats")["requests"]
    assert dry.exit_code == 0, dry.output
    assert not _events(dry, "LISTER_FALLBACK")
    assert after.get("list_ask_threads", 0) == before.get("list_ask_threads", 0)
    assert after["graphql"] > before.get("graphql", 0)
    assert _events(dry, "RUN_PLAN")[0]["listed"] == 30


# --------------------------------------------------------------------------- pacing


async def test_rate_limited_server_run_settles_near_its_rate() -> None:
    """Server limit R=20/s (burst 10, 10–30 ms latency), client ceiling 2R: under 3 % of the
    requests are answered 429 and the client's pace ends up near R.

    Client and server share one virtual clock (the server's bucket and latency included), so
    the pace measured does not depend on how busy the machine is.
    """
    rate = 20.0
    config = SimConfig(threads=30, rate=rate, burst=10, latency_ms=10, jitter_ms=20)
    vt = VirtualTime()
    sim_app = create_app(config)
    stats = sim_app.sim.stats
    app = FaultMiddleware(sim_app.app, config, stats, clock=vt.clock, sleep=vt.sleep)
    ids = [t["uuid"] for t in AccountState(config).truth()["threads"]]
    cookies, _, _ = login_for(config)
    run_settings = settings(base_url="http://sim.test", rate=2 * rate, burst=4, concurrency=4)
    measured: list[Any] = []

    async def fetch_all() -> None:
        todo = list(range(150))
        async with open_session(run_settings, credential=Credential(cookies, "sim"),
                                transport=httpx.ASGITransport(app=app), sleep=vt.sleep,
                                clock=vt.clock) as (client, _info):  # fmt: skip
            stats.reset()
            started = vt.now

            async def worker() -> None:
                while todo:
                    n = todo.pop()
                    await client.get_json(f"/rest/thread/{ids[n % len(ids)]}", {"limit": 1})

            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(worker)
            measured.extend([vt.now - started, client.stats()])

    with anyio.fail_after(120):
        await vt.run(fetch_all)
    elapsed, client_stats = measured
    served = stats.as_json()
    assert served["statuses"].get("200") == 150
    assert served["rate_limited"] / served["total_requests"] < 0.03
    assert client_stats.rate_limited == served["rate_limited"] >= 1  # the ceiling was too high
    achieved = 150 / elapsed
    assert 0.6 * rate <= achieved <= 1.1 * rate


# --------------------------------------------------------------------------- spaces


def test_include_spaces_archives_shared_threads_under_their_author(tmp_path: Path) -> None:
    """`--include-spaces` archives another user's shared threads under their (sanitized)
    account folder and writes deterministic space pages linking into the archive."""
    config = SimConfig(threads=24, shared_space_threads=4)
    with serve_in_thread(config) as sim:
        out = tmp_path / "archive"
        token = ("--session-token", sim.session_token)
        plain = run_cli(["batch", *_base(sim, out, *token, *FAST)], out)
        assert plain.exit_code == 0, plain.output
        truth = _truth(sim)
        shared = set(list(truth)[-4:])  # the oldest generated threads are the shared ones
        (shared_slug,) = {truth[u]["space"] for u in shared}
        assert set(_archived(out)) == set(truth) - shared

        with_spaces = run_cli(["batch", *_base(sim, out, *token, *FAST, "--include-spaces")], out)
        assert with_spaces.exit_code == 0, with_spaces.output
        first_pages = {p.name: p.read_bytes() for p in (out / "spaces").iterdir()}
        again = run_cli(["sync", *_base(sim, out, *token, *FAST, "--include-spaces")], out)
        assert again.exit_code == 0, again.output
    archived = _archived(out)
    assert set(archived) == set(truth)
    owner = config.shared_space_owner
    for uuid in shared:
        folder = archived[uuid].relative_to(out)
        assert folder.parts[0] == "Ana Ñ-other-user"
        assert orjson.loads((archived[uuid] / "thread.json").read_bytes())["author"] == owner
    assert {archived[u].relative_to(out).parts[0] for u in set(truth) - shared} == {"simuser"}
    assert with_spaces.events and _events(with_spaces, "RUN_SUMMARY")[0]["archived"] == 4
    assert _events(again, "RUN_SUMMARY")[0]["archived"] == 0

    index = json.loads((out / "spaces" / "spaces.json").read_bytes())
    by_slug = {s["slug"]: s for s in index["spaces"]}
    page_doc = by_slug[shared_slug]
    assert page_doc["owner"] == owner and page_doc["members"] == [owner, "simuser"]
    assert {t["uuid"] for t in page_doc["threads"]} == shared
    page = (out / page_doc["page"]).read_text()
    assert page.startswith("# Shared with you: team notes\n")
    assert f"- owner: {owner}" in page and "Cite | sources." in page
    for t in page_doc["threads"]:
        quoted = "/".join(urllib.parse.quote(part, safe="") for part in t["path"].split("/"))
        assert f"(../{quoted}/conversation.md)" in page
        assert (out / "spaces" / f"../{t['path']}/conversation.md").resolve().is_file()
    assert {p.name: p.read_bytes() for p in (out / "spaces").iterdir()} == first_pages
    assert not list((out / "spaces").glob(".*"))
