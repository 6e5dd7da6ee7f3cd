"""A second, naive implementation of sub-agent placement and interruptions, from the contract.

It reads the raw page JSON only (no core value, no core function) and follows the rules as
docs/rendering.md ("Sub-agent placement", "Interruptions") and docs/dev/api.md §6 state them:

- a *payload* is a top-level ``WORKFLOW_ITEM_WORKFLOW`` of a background entry's workflow; an
  entry without any is one payload of its own;
- it is *anchored* in the first turn whose workflow holds its id at any depth; a payload whose
  id sits in another payload's workflow (and in no turn) lands with that payload;
- else the ``subagent_result`` stub turn (one without workflow steps of its own) created
  within 10 s of its completion time (``completed_at``, else the entry's update time),
  closest pairs first over the thread; the stub turn's lock reason counts for the run and
  for the runs landing with it (shown inside its block);
- else the appendix.

Every annotated workflow is one ``interruptions`` record at one of the contract's locations.
Hypothesis generates threads with nested anchors, stubs at the window's edges, runs with and
without completion times and step-less workflows, and compares the oracle with the core.
"""

from __future__ import annotations

import collections
import datetime
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.model import RawPage, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from tests.core import builders as b

LIMIT = "spending_limit_exceeded"
STATUSES = (
    "WORKFLOW_COMPLETED",
    "WORKFLOW_AWAITING_NEXT_STEPS",
    "WORKFLOW_CANCELED",
    "WORKFLOW_AWAITING_USER",
)
POOL = ("p0", "p1", "p2", "p3", "p4")
BASE = datetime.datetime(2026, 7, 20, 8, 0, tzinfo=datetime.UTC)
WINDOW_US = 10_000_000
# offsets of a run's time from a stub's creation: inside, on and just past the window's edge
EDGES = (0, 600_000, -600_000, WINDOW_US, -WINDOW_US, WINDOW_US + 1, -WINDOW_US - 1, 45_000_000)


def _iso(us: int) -> str:
    return (BASE + datetime.timedelta(microseconds=us)).isoformat(timespec="microseconds")


# --- the oracle ------------------------------------------------------------------------------


def _kind(status: str, locked: str) -> str | None:
    if status == "WORKFLOW_AWAITING_NEXT_STEPS":
        return "limit_interrupted" if locked == LIMIT else "interrupted"
    return "canceled" if status == "WORKFLOW_CANCELED" else None


def _root(entry: dict[str, Any]) -> dict[str, Any] | None:
    for block in entry.get("blocks") or []:
        if block.get("intended_usage") == "workflow_root":
            return dict(block["workflow_block"])
    return None


def _nested(item: dict[str, Any]) -> dict[str, Any] | None:
    if item.get("type") != "WORKFLOW_ITEM_WORKFLOW":
        return None
    payload = item.get("payload") or {}
    return payload.get("workflow_payload")


def _ids(workflow: dict[str, Any] | None) -> set[str]:
    """Every sub-agent id held anywhere in a workflow."""
    found: set[str] = set()
    for step in (workflow or {}).get("steps") or []:
        if step["id"].endswith(":workflow"):
            found.add(step["id"].removesuffix(":workflow"))
        for item in step["items"]:
            inner = _nested(item)
            if inner is not None:
                found.add(inner.get("id") or item["id"])
                found |= _ids(inner)
    return found


def _is_stub(entry: dict[str, Any]) -> bool:
    """A ``subagent_result`` turn without workflow steps of its own."""
    return entry.get("trigger") == "subagent_result" and not (_root(entry) or {}).get("steps")


def _payloads(background: list[dict[str, Any]]) -> list[dict[str, Any]]:
    runs = []
    for entry in background:
        root = _root(entry)
        mine = []
        for step in (root or {}).get("steps") or []:
            for item in step["items"]:
                inner = _nested(item)
                if inner is not None:
                    mine.append({"id": inner.get("id") or item["id"], "wf": inner, "entry": entry})
        runs += mine or [{"id": entry["backend_uuid"], "wf": root, "entry": entry}]
    return runs


def _us(text: str) -> int:
    when = datetime.datetime.fromisoformat(text)
    return (when - BASE) // datetime.timedelta(microseconds=1)


def _hosts(runs: list[dict[str, Any]], turn_of: dict[str, int]) -> dict[int, int]:
    """run index → the first other run whose workflow holds its id (runs anchored in no turn)."""
    host: dict[int, int] = {}
    for i, run in enumerate(runs):
        if run["id"] in turn_of:
            continue
        for j, other in enumerate(runs):
            if j != i and run["id"] in _ids(other["wf"]):
                host[i] = j
                break
    return host


def oracle_landing(
    entries: list[dict[str, Any]], background: list[dict[str, Any]]
) -> list[tuple[str, str, int | None]]:
    """(payload id, landing, 1-based turn or None) for each payload, in payload order."""
    runs = _payloads(background)
    turn_of: dict[str, int] = {}
    for turn, entry in enumerate(entries, 1):
        for pid in _ids(_root(entry)):
            turn_of.setdefault(pid, turn)
    host = _hosts(runs, turn_of)
    landing: dict[int, tuple[str, int | None]] = {
        i: ("anchored", turn_of[r["id"]]) for i, r in enumerate(runs) if r["id"] in turn_of
    }
    pairs = []
    for i, run in enumerate(runs):
        if i in landing or i in host:
            continue
        done = (run["wf"] or {}).get("completed_at") or run["entry"]["entry_updated_datetime"]
        for turn, entry in enumerate(entries, 1):
            if _is_stub(entry):
                delta = abs(_us(entry["entry_created_datetime"]) - _us(done))
                if delta <= WINDOW_US:
                    pairs.append((delta, i, turn))
    for _delta, i, turn in sorted(pairs):
        landing.setdefault(i, ("stub", turn))
    for i in range(len(runs)):
        if i not in host:
            landing.setdefault(i, ("appendix", None))
    for i in range(len(runs)):
        j = i
        while j in host:
            j = host[j]
        landing.setdefault(i, landing[j])
    return [(run["id"], *landing[i]) for i, run in enumerate(runs)]


def _place(kind: str, turn: int | None) -> str:
    if kind == "appendix":
        return "background_unassigned"
    return f"turn_{turn:04d}/{'subagent' if kind == 'anchored' else 'subagent_stub'}"


def _walk(
    workflow: dict[str, Any], at: str, placed: set[str], thread_lock: str
) -> list[tuple[str, str, str]]:
    """Records of the workflows rendered inside ``workflow`` (shown at location ``at``): a
    council member at ``at/council_member``; another sub-agent at the enclosing sub-agent's
    location; an anchor of a run shows that run (recorded by the run), nothing of its own."""
    found = []
    for step in workflow.get("steps") or []:
        for item in step["items"]:
            inner = _nested(item)
            if inner is None:
                continue
            if inner.get("mode") == "LLM_COUNCIL":
                where = f"{at}/council_member"
            elif (inner.get("id") or item["id"]) in placed:
                continue
            else:
                where = at if "/" in at or at == "background_unassigned" else f"{at}/subagent"
            kind = _kind(inner["status"], inner.get("locked_reason") or thread_lock)
            if kind:
                found.append((where, kind, inner["status"]))
            # a member's own items are shown at the member's enclosing place
            found += _walk(
                inner, at if where.endswith("/council_member") else where, placed, thread_lock
            )
    return found


def oracle_interruptions(
    entries: list[dict[str, Any]], background: list[dict[str, Any]], thread_lock: str
) -> collections.Counter[tuple[str, str, str]]:
    """(location, kind, status) of every annotated workflow, counted."""
    runs = _payloads(background)
    landing = oracle_landing(entries, background)
    placed = {r["id"] for r in runs}
    found: list[tuple[str, str, str]] = []
    for turn, entry in enumerate(entries, 1):
        root = _root(entry)
        if root is None:
            continue
        locked = root.get("locked_reason") or entry.get("locked_reason") or thread_lock
        kind = _kind(root["status"], locked)
        if kind:
            found.append((f"turn_{turn:04d}", kind, root["status"]))
        found += _walk(root, f"turn_{turn:04d}", placed, thread_lock)
    for run, (_pid, kind, landed) in zip(runs, landing, strict=True):
        at = _place(kind, landed)
        wf = run["wf"]
        if wf is None:
            continue
        locked = wf.get("locked_reason") or run["entry"].get("locked_reason")
        if kind == "stub":  # the stub turn is the run's notification: its lock counts too
            assert landed is not None
            locked = locked or entries[landed - 1].get("locked_reason")
        annotated = _kind(wf["status"], locked or thread_lock)
        if annotated:
            found.append((at, annotated, wf["status"]))
        found += _walk(wf, at, placed, thread_lock)
    return collections.Counter(found)


# --- generated threads ------------------------------------------------------------------------


@st.composite
def _workflow(draw: st.DrawFn, wid: str, depth: int, anchors: tuple[str, ...]) -> dict[str, Any]:
    """A nested workflow payload with its own steps (sub-agents, anchors, members inside)."""
    return {
        "id": wid,
        "status": draw(st.sampled_from(STATUSES)),
        "headline": f"Agent {wid}",
        "locked_reason": draw(st.sampled_from(("", LIMIT))),
        "completed_at": "",
        "objective_chunks": [f"Do {wid}"],
        "steps": draw(_steps(depth + 1, anchors, wid)),
    }


@st.composite
def _steps(
    draw: st.DrawFn, depth: int, anchors: tuple[str, ...], prefix: str
) -> list[dict[str, Any]]:
    if depth > 2:
        return [b.step([b.text_item("deepest", "thought")], id=f"{prefix}-s")]
    steps: list[dict[str, Any]] = []
    for n in range(draw(st.integers(0, 3))):
        choice = draw(st.sampled_from(("text", "anchor", "subagent", "member")))
        if choice == "anchor" and anchors:
            pid = draw(st.sampled_from(anchors))
            steps.append(b.payload(pid, draw(st.sampled_from(STATUSES)), anchor=True))
            continue
        if choice in ("subagent", "member"):
            wid = f"{prefix}-n{n}"
            inner = draw(_workflow(wid, depth, anchors))
            if choice == "member":
                inner.update(mode="LLM_COUNCIL", model="gpt55_thinking")
            item = {"id": wid, "type": "WORKFLOW_ITEM_WORKFLOW"}
            steps.append(b.step([{**item, "payload": {"workflow_payload": inner}}], id=wid))
            continue
        steps.append(b.step([b.text_item(f"text {prefix} {n}", "thought")], id=f"{prefix}-{n}"))
    return steps


@st.composite
def threads(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(entries, background entries, thread lock) of one generated thread."""
    ids = list(draw(st.permutations(POOL)))[: draw(st.integers(0, len(POOL)))]
    entries = []
    at = 0
    stubs: list[int] = []
    for n in range(draw(st.integers(1, 4))):
        at += draw(st.integers(1, 40)) * 1_000_000
        extra: dict[str, Any] = {"entry_created_datetime": _iso(at)}
        extra["entry_updated_datetime"] = _iso(at + 2_000_000)
        if n and draw(st.booleans()):
            stubs.append(at)
            lock = draw(st.sampled_from(("", LIMIT)))
            working = draw(st.sampled_from((False, False, True)))  # a stub that works itself
            own: list[dict[str, Any]] = [b.workflow([b.step([b.text_item("own")])])]
            stub_blocks = own if working else []
            stub = b.entry(
                f"e{n}", 0, query="", trigger="subagent_result", blocks=stub_blocks, **extra
            )
            entries.append({**stub, "locked_reason": lock})
            continue
        blocks: list[dict[str, Any]] = [b.answer_block(f"answer {n}")]
        if draw(st.booleans()):
            root = draw(_workflow(f"t{n}", 0, tuple(POOL)))
            blocks.append(
                b.workflow(root["steps"], root["status"], locked_reason=root["locked_reason"])
            )
        lock = draw(st.sampled_from(("", LIMIT)))
        entries.append(b.entry(f"e{n}", 0, blocks=blocks, locked_reason=lock, **extra))

    def near() -> int:
        anchor = draw(st.sampled_from(stubs)) if stubs else at
        return anchor + draw(st.sampled_from(EDGES))

    background = []
    chunks = [ids[i : i + 2] for i in range(0, len(ids), 2)]
    for n, chunk in enumerate(chunks + ([[]] if draw(st.booleans()) else [])):
        runs = []
        for pid in chunk:
            later = tuple(POOL[POOL.index(pid) + 1 :])  # a run holds only later ones: no loops
            run = draw(_workflow(pid, 0, later))
            if draw(st.booleans()):
                run["completed_at"] = _iso(near())
            item = {"id": pid, "type": "WORKFLOW_ITEM_WORKFLOW"}
            runs.append(
                b.step([{**item, "payload": {"workflow_payload": run}}], id=f"{pid}:workflow")
            )
        status = draw(st.sampled_from(STATUSES))
        root = b.workflow(runs or [b.step([b.text_item("own work")])], status)
        extra = {
            "entry_created_datetime": _iso(1),
            "entry_updated_datetime": _iso(near()),
            "locked_reason": draw(st.sampled_from(("", LIMIT))),
        }
        background.append(b.entry(f"bg{n}", 0, is_background=True, blocks=[root], **extra))
    return entries, background, draw(st.sampled_from(("", LIMIT)))


def _run_item(wf: dict[str, Any]) -> dict[str, Any]:
    """A background run's step (``<id>:workflow``) holding the run's workflow payload."""
    item = {"id": wf["id"], "type": "WORKFLOW_ITEM_WORKFLOW", "payload": {"workflow_payload": wf}}
    return b.step([item], id=f"{wf['id']}:workflow")


def _run(pid: str, status: str = "WORKFLOW_COMPLETED", **extra: Any) -> dict[str, Any]:
    """A run's workflow payload as the generator draws it (no completion time)."""
    wf = {"id": pid, "status": status, "headline": f"Agent {pid}", "locked_reason": ""}
    return {**wf, "completed_at": "", "objective_chunks": [f"Do {pid}"], "steps": [], **extra}


def _nested_on_locked_stub() -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """A run shown inside another run's block on a locked stub turn (a saved failure).

    Every run ends 0 s from the stub of turn 2 (``spending_limit_exceeded``) and 1 s from the
    stub of turn 3; p3 (awaiting next steps, no lock of its own) is anchored in p1's workflow,
    so it is shown inside p1's block on turn 2 and the stub's lock counts for it too.
    """
    times: dict[str, Any] = {"entry_created_datetime": _iso(1)}
    times["entry_updated_datetime"] = _iso(2_000_000)

    def bg(uid: str, *runs: dict[str, Any]) -> dict[str, Any]:
        root = b.workflow([_run_item(r) for r in runs])
        return b.entry(uid, 0, is_background=True, blocks=[root], locked_reason="", **times)

    def turn(n: int, **extra: Any) -> dict[str, Any]:
        at: dict[str, Any] = {"entry_created_datetime": _iso(n * 1_000_000 + 1_000_000)}
        at["entry_updated_datetime"] = _iso(n * 1_000_000 + 3_000_000)
        return b.entry(f"e{n}", 0, **at, **extra)

    stub = {"query": "", "trigger": "subagent_result", "blocks": []}
    entries = [
        turn(0, blocks=[b.answer_block("answer 0")], locked_reason=""),
        turn(1, **stub, locked_reason=LIMIT),
        turn(2, **stub, locked_reason=""),
    ]
    anchor = b.payload("p3", is_background_anchor=True)
    background = [
        bg("bg0", _run("p0"), _run("p2")),
        bg("bg1", _run("p4"), _run("p3", "WORKFLOW_AWAITING_NEXT_STEPS")),
        bg("bg2", _run("p1", steps=[anchor])),
    ]
    return entries, background, ""


@pytest.mark.heavy  # pure CPU: run untraced (docs/dev/architecture.md, the gate)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads())
@example(_nested_on_locked_stub())
def test_core_places_and_records_as_the_naive_oracle(
    thread: tuple[list[dict[str, Any]], list[dict[str, Any]], str],
) -> None:
    """Landing of every payload and every interruption record agree with the oracle; each
    payload's block is shown exactly once over all Markdown files."""
    entries, background, lock = thread
    page = b.page(entries, background, locked_reason=lock or None)
    result = render_thread(ThreadInput("t", (RawPage({}, page),), (RawPage({}, page),)), b.CTX)
    got = [(x["payload_id"], x["landing"], x["turn"]) for x in result.record.get("background", [])]
    assert got == oracle_landing(entries, background)
    records = collections.Counter(
        (r["location"], r["kind"], r["status"]) for r in result.record.get("interruptions", [])
    )
    assert records == oracle_interruptions(entries, background, lock)
    logged = [f for f in result.findings if f.event == "WORKFLOW_INTERRUPTED"]
    assert len(logged) == sum(records.values())
    turns = "".join(v.decode() for k, v in result.files.items() if k.startswith("turns/"))
    conversation = result.files["conversation.md"].decode()
    expected = {"anchored": (1, 0), "stub": (1, 1), "appendix": (0, 1)}
    for pid, kind, _turn in got:
        if pid not in POOL:
            continue
        heading = f"#### Sub-agent: Agent {pid}"
        counts = tuple(
            text.count(heading + " ") + text.count(heading + "\n") for text in (turns, conversation)
        )
        assert counts == expected[kind], (pid, kind, counts)


def test_oracle_agrees_on_the_issue_capture() -> None:
    """The oracle itself places the issue's capture (0.6 s from the stub) on the stub."""
    stub = b.entry(
        "s", 0, query="", trigger="subagent_result", entry_created_datetime=_iso(100_000_000)
    )
    first = b.entry("e", 0, entry_created_datetime=_iso(1_000_000))
    run = b.payload("toolu_X", "WORKFLOW_AWAITING_NEXT_STEPS", steps=[b.step([b.text_item("x")])])
    bg = b.entry(
        "bg",
        0,
        is_background=True,
        blocks=[b.workflow([run])],
        entry_updated_datetime=_iso(100_600_000),
    )
    assert oracle_landing([first, stub], [bg]) == [("toolu_X", "stub", 2)]
    assert list(itertools.chain(oracle_landing([first], [bg]))) == [("toolu_X", "appendix", None)]
