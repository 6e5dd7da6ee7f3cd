"""Bad input: mutated real and simulated payloads never escape as anything but PayloadError.

Each layer is tested where it owns the input: the render core gets decoded JSON with keys
dropped, types swapped, huge strings and deep nesting (``render_thread``, ``needs_blocks``,
``extract_assets``); raw-file bytes with invalid UTF-8 or cut short go through
``rawfile.decode_raw_pages``; response bytes go through the shell's ``map_response``, which
turns a non-JSON body into a retryable ``TransientError``. A batch whose server answers one
thread with JSON of which nothing can be read records that thread as failed with its JSON
path and archives every other one; damaged entries only degrade their turns.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.core.thread.model import RawPage, RenderContext, ThreadInput
from pplx_archiver.core.thread.rawfile import decode_raw_pages, encode_raw_pages
from pplx_archiver.core.thread.render import needs_blocks, render_thread
from pplx_archiver.errors import PayloadError, TransientError
from pplx_archiver.shell.net.http import map_response
from pplx_archiver.sim.config import SimConfig
from tests.core.simcorpus import account
from tests.reliability.conftest import index_statuses, run_cli, size
from tests.samples import REAL

EXAMPLES = size(40, 1500)
HYPO = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CTX = RenderContext(exported_at="2026-01-01T00:00:00Z")
REAL_THREADS = ("thread_search_1.json", "thread_research_1.json")
REAL_BLOCKS = (
    "thread_blocks_computer_sim_2_trimmed.json",
    "thread_blocks_council_sim_1_prefix.json",
)


def _real_input(name: str) -> ThreadInput:
    body = orjson.loads((REAL / name).read_bytes())
    page = RawPage({"method": "GET", "path": "/rest/thread/x", "params": []}, body)
    if name in REAL_BLOCKS:
        plain = copy.deepcopy(body)
        return ThreadInput("x", (page,), (RawPage(page.request, plain),))
    return ThreadInput("x", (page,))


@functools.cache
def corpus() -> tuple[ThreadInput, ...]:
    """Real captured threads plus a slice of the simulated account (every mode)."""
    sim = [inp for inp, _truth in account(threads=size(40, 300), seed=7)]
    return (*(_real_input(n) for n in (*REAL_THREADS, *REAL_BLOCKS)), *sim)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(_paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.extend(_paths(child, (*prefix, index)))
    return out


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.just("\U0001f600" * 100_000),  # huge string
    st.just("\ud800 lone surrogate"),
    st.just([]),
    st.just({}),
    st.just(_deep(400)),  # deep nesting
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)


def _mutate(root: dict[str, Any], paths: list[tuple[Any, ...]], action: str, value: Any) -> None:
    """Drop or replace the value at each path (paths a previous mutation removed are skipped)."""
    for path in paths:
        parent: Any = root
        try:
            for key in path[:-1]:
                parent = parent[key]
            if action == "replace":
                parent[path[-1]] = copy.deepcopy(value)
            elif isinstance(parent, dict):
                del parent[path[-1]]
            elif parent:
                del parent[path[-1] % len(parent)]
        except (KeyError, IndexError, TypeError):
            continue


@HYPO
@given(
    which=st.integers(min_value=0),
    picks=st.lists(st.integers(min_value=0), min_size=1, max_size=3),
    action=st.sampled_from(["drop", "replace"]),
    value=WRONG_VALUES,
)
# An answer text that is no JSON and holds a lone surrogate (orjson refuses to encode it).
@example(which=137, picks=[1222], action="replace", value="\ud800 lone surrogate")
def test_mutated_payloads_render_or_raise_payload_error(
    which: int, picks: list[int], action: str, value: Any
) -> None:
    """Dropped keys, wrong types, huge strings, deep nesting: a rendering or a PayloadError."""
    inp = corpus()[which % len(corpus())]
    root = {
        "plain": [copy.deepcopy(p.body) for p in inp.plain_pages],
        "blocks": [copy.deepcopy(p.body) for p in inp.blocks_pages],
    }
    paths = [p for p in _paths(root) if len(p) > 2]  # inside a page body, pages kept
    _mutate(root, [paths[pick % len(paths)] for pick in picks], action, value)
    mutated = ThreadInput(
        inp.thread_id,
        tuple(RawPage(p.request, b) for p, b in zip(inp.plain_pages, root["plain"], strict=True)),
        tuple(RawPage(p.request, b) for p, b in zip(inp.blocks_pages, root["blocks"], strict=True)),
        inp.listing,
    )
    try:
        needs_blocks(mutated.plain_pages, mutated.listing)
        extract_assets(mutated)
        result = render_thread(mutated, CTX)
    except PayloadError as exc:
        assert exc.path and str(exc)
    else:
        assert "thread.json" in result.files and "conversation.md" in result.files


@HYPO
@given(
    which=st.integers(min_value=0),
    cut=st.floats(min_value=0.0, max_value=0.999),
    bad=st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]),
    where=st.floats(min_value=0.0, max_value=1.0),
)
def test_corrupt_raw_file_bytes_raise_payload_error(
    which: int, cut: float, bad: bytes, where: float
) -> None:
    """A raw file cut short or holding invalid UTF-8 fails to decode with a PayloadError only."""
    inp = corpus()[which % len(corpus())]
    data = encode_raw_pages([(p.request, orjson.dumps(p.body)) for p in inp.plain_pages])
    assert decode_raw_pages(data)  # the untouched file reads back
    truncated = data[: int(len(data) * cut)]
    at = int(len(data) * where)
    invalid = data[:at] + bad + data[at:]
    for broken in (truncated, invalid):
        try:
            pages = decode_raw_pages(broken)
        except PayloadError as exc:
            assert exc.path == "raw_entries.json" or exc.path.startswith("pages")
        else:  # the bad byte landed where JSON allows it? only inside a string is impossible
            pytest.fail(f"decoded {len(pages)} pages from corrupt bytes")


@HYPO
@given(
    which=st.integers(min_value=0),
    cut=st.floats(min_value=0.0, max_value=0.999),
    bad=st.sampled_from([b"\xff\xfe", b"\xc3\x28", b"\x80"]),
)
def test_corrupt_response_bodies_are_transient_in_the_shell(
    which: int, cut: float, bad: bytes
) -> None:
    """A 200 answer that is cut short or not UTF-8 becomes a retryable TransientError."""
    inp = corpus()[which % len(corpus())]
    body = orjson.dumps(inp.plain_pages[0].body)
    request = httpx.Request("GET", "http://sim.test/rest/thread/x")
    headers = {"content-type": "application/json"}
    for broken in (body[: int(len(body) * cut)], body[: len(body) // 2] + bad):
        response = httpx.Response(200, content=broken, headers=headers, request=request)
        with pytest.raises(TransientError, match="expected JSON"):
            map_response(response)


# --------------------------------------------------------------------------- in a batch


class WrongShapeForOne(httpx.AsyncBaseTransport):
    """The in-process simulator, except one thread's detail pages get a wrong-shaped body.

    ``unreadable=True`` makes the page's ``entries`` an object (nothing can be read);
    otherwise the entries are damaged one by one (a bad ``text``/``blocks``, a bad status,
    a number among them) and the rest stays readable.
    """

    def __init__(self, app: Any, victim: str, unreadable: bool) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.victim = victim
        self.unreadable = unreadable

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path != f"/rest/thread/{self.victim}":
            return response
        body = json.loads(await response.aread())
        if self.unreadable:
            body["entries"] = {"x": 1}
        else:
            body["entries"][0]["blocks" if "blocks" in body["entries"][0] else "text"] = {"x": 1}
            body["entries"][-1]["status"] = ["COMPLETED"]
            body["entries"] = [body["entries"][0], 42, *body["entries"][1:]]
        return httpx.Response(
            200, json=body, headers={"content-type": "application/json"}, request=request
        )


def _batch_with_one_bad(tmp_path: Path, unreadable: bool) -> tuple[Any, str, list[str], Path]:
    """Run a batch against the simulator with one damaged thread; (summary, victim, all, out)."""
    import anyio

    from pplx_archiver.cli._run import CommonOptions, run_logging
    from pplx_archiver.shell.run.runner import run_command
    from pplx_archiver.sim.runner import login_for
    from pplx_archiver.sim.server import create_app
    from pplx_archiver.sim.state import AccountState

    config = SimConfig(threads=size(25, 300))
    truth = AccountState(config).truth()["threads"]
    victim = truth[len(truth) // 2]["uuid"]
    out = tmp_path / "archive"
    opts = CommonOptions(
        out=out,
        base_url="http://sim.test",
        session_token=login_for(config)[2],
        concurrency=4,
        rate=1000.0,
        burst=100,
        log_format="json",
    )
    settings_ = opts.settings()
    transport = WrongShapeForOne(create_app(config), victim, unreadable)

    async def job() -> Any:
        return await run_command(
            settings_, opts.run_options("batch"), transport=transport, handle_signals=False
        )

    with run_logging(settings_, "batch"):
        summary = anyio.run(job)
    return summary, victim, [t["uuid"] for t in truth], out


def _logged(out: Path) -> list[dict[str, Any]]:
    return [
        orjson.loads(line)
        for path in (out / "index" / "logs").glob("batch-*.jsonl")
        for line in path.read_bytes().splitlines()
    ]


def test_one_unreadable_thread_fails_with_its_json_path_and_the_rest_archive(
    tmp_path: Path,
) -> None:
    """A thread of which nothing can be read is failed with a JSON path; exit 1; others done."""
    summary, victim, uuids, out = _batch_with_one_bad(tmp_path, unreadable=True)
    assert summary.failed == 1
    assert [f["thread_uuid"] for f in summary.failures] == [victim]
    status = run_cli(["status", "--out", str(out), "--json"])
    report = json.loads(status.output)
    (failure,) = report["failures"]
    assert failure["thread_uuid"] == victim
    assert failure["json_path"] == "plain_pages[0].entries"
    assert failure["error"].startswith("PayloadError")
    statuses = index_statuses(out)
    assert statuses.pop(victim) == "failed"
    assert statuses == {u: "done" for u in uuids if u != victim}
    logged = _logged(out)
    (summary_event,) = [e for e in logged if e["event"] == "RUN_SUMMARY"]
    assert summary_event["exit_code"] == 1
    (failed_event,) = [e for e in logged if e["event"] == "THREAD_FAILED"]
    assert failed_event["json_path"] == failure["json_path"]


def test_damaged_entries_degrade_turns_and_the_thread_archives(tmp_path: Path) -> None:
    """Damaged entries are degraded turns: thread done, ENTRY_DEGRADED logged, status counts."""
    summary, victim, uuids, out = _batch_with_one_bad(tmp_path, unreadable=False)
    assert summary.failed == 0
    assert index_statuses(out) == dict.fromkeys(uuids, "done")
    degraded = [e for e in _logged(out) if e["event"] == "ENTRY_DEGRADED"]
    assert degraded and {e["thread_uuid"] for e in degraded} == {victim}
    paths = {e["json_path"] for e in degraded}
    assert "plain_pages[0].entries[1]" in paths  # the number among the entries
    assert all(e["reason"] and isinstance(e["entry_index"], int) for e in degraded)
    report = json.loads(run_cli(["status", "--out", str(out), "--json"]).output)
    turns = {e["turn"] for e in degraded}
    assert report["degraded_turns"] == len(turns) >= 2
    assert report["degraded_threads"] == 1
    (row,) = report["degraded"]
    record = json.loads((out / row["path"] / "thread.json").read_bytes())
    assert record["counts"]["degraded_turns"] == len(turns)
    turn_file = (out / row["path"] / "turns" / f"turn_{min(turns):04d}.md").read_text()
    assert "⚠ Partly unreadable" in turn_file.splitlines()[2]
    verify = run_cli(["verify", "--out", str(out), "--jobs", "1"])
    assert verify.exit_code == 0, verify.output
    assert f"{len(turns)} degraded turns in 1 threads" in verify.output
