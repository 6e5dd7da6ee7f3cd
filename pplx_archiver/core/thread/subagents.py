"""Sub-agent payloads and the one place each lands: anchored turn, stub turn or appendix.

A *payload* is a top-level nested ``workflow_payload`` of a background entry
(docs/dev/api.md §6). It is (1) *anchored* when a main entry's workflow carries the same
payload id anywhere in its workflow (nested workflows included), else (2) placed on a
``subagent_result`` *stub* turn created within 10 s of its completion time (``completed_at``,
else its background entry's update time; global greedy by smallest delta; each payload once; a
stub may take several), else (3) left for the thread *appendix*. Never twice, never dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from pplx_archiver.core.thread.values import Entry, Workflow

STUB_WINDOW_US = 10_000_000
STUB_TRIGGER = "subagent_result"


@dataclasses.dataclass(frozen=True, slots=True)
class Payload:
    """One background sub-agent run: its id, workflow and the background entry holding it."""

    id: str
    workflow: Workflow | None
    entry: Entry
    index: int

    @property
    def status(self) -> str:
        """The authoritative (background-side) workflow status."""
        return self.workflow.status if self.workflow is not None else ""

    @property
    def locked_reason(self) -> str:
        """The lock reason of the payload, else of its background entry."""
        own = self.workflow.locked_reason if self.workflow is not None else ""
        return own or self.entry.locked_reason

    @property
    def headline(self) -> str:
        """The payload's headline (may be empty)."""
        return self.workflow.headline if self.workflow is not None else ""

    @property
    def completed_us(self) -> int | None:
        """Completion time: payload ``completed_at``, else the entry's update time."""
        if self.workflow is not None and self.workflow.completed_us is not None:
            return self.workflow.completed_us
        return self.entry.updated_us


@dataclasses.dataclass(frozen=True, slots=True)
class Placement:
    """Where every payload landed; ``landing`` lists (payload, kind, turn index or None)."""

    anchored: dict[int, tuple[Payload, ...]]
    stubs: dict[int, tuple[Payload, ...]]
    appendix: tuple[Payload, ...]
    landing: tuple[tuple[Payload, str, int | None], ...]
    by_id: dict[str, tuple[Payload, ...]]
    inside: dict[int, tuple[Payload, ...]] = dataclasses.field(default_factory=dict)
    # payload index → the lock reason of the stub turn it lands on (a run shown inside another
    # run's block on a stub included): the stub turn is the notification of every run it shows
    notices: dict[int, str] = dataclasses.field(default_factory=dict)

    def allowed(self, placed: Sequence[Payload]) -> frozenset[int]:
        """The payload indexes that may be shown where ``placed`` land (their families): an
        anchor met there for any other run shows nothing, that run being shown elsewhere."""
        return frozenset(p.index for payload in placed for p in self.family(payload))

    def family(self, payload: Payload) -> tuple[Payload, ...]:
        """A payload and the payloads shown inside its block (anchored in its workflow)."""
        return (payload, *self.inside.get(payload.index, ()))


def run_lock(payload: Payload, notices: Mapping[int, str]) -> str:
    """The lock reason that counts for a run: its own, else its background entry's, else the
    stub turn's it lands on (``notices``); the thread's lock is the caller's last fallback."""
    return payload.locked_reason or notices.get(payload.index, "")


def is_stub(entry: Entry) -> bool:
    """A stub turn: ``trigger: subagent_result`` and no workflow steps of its own (a turn
    that works itself is no notification, and takes no background run)."""
    workflow = entry.blocks.workflow
    return entry.trigger == STUB_TRIGGER and (workflow is None or not workflow.steps)


def payload_id(step_id: str, item_id: str, workflow: Workflow | None) -> str:
    """The id linking anchor and background: payload id, item id, or step id sans suffix."""
    if workflow is not None and workflow.id:
        return workflow.id
    if item_id:
        return item_id
    return step_id.removesuffix(":workflow")


def collect_payloads(background: Sequence[Entry]) -> tuple[Payload, ...]:
    """Every top-level nested workflow payload of the background entries, in order.

    A background entry without any nested payload counts as one payload (its own id).
    """
    found: list[Payload] = []
    for entry in background:
        workflow = entry.blocks.workflow
        before = len(found)
        if workflow is not None:
            for step in workflow.steps:
                for item in step.items:
                    if item.type == "WORKFLOW_ITEM_WORKFLOW" and item.workflow is not None:
                        pid = payload_id(step.id, item.id, item.workflow)
                        found.append(Payload(pid, item.workflow, entry, len(found)))
        if len(found) == before:
            for plain in entry.steps:
                for item in plain.items:
                    if item.type == "WORKFLOW_ITEM_WORKFLOW" and item.workflow is not None:
                        pid = payload_id("", item.id, item.workflow)
                        found.append(Payload(pid, item.workflow, entry, len(found)))
        if len(found) == before:
            found.append(Payload(entry.key, workflow, entry, len(found)))
    return tuple(found)


def anchor_ids(entry: Entry) -> list[str]:
    """Payload ids anchored in a main entry's workflow (blocks or plain), at any depth.

    The renderer shows an anchored payload wherever its anchor sits, nested workflows
    included (a sub-agent or council member holding another sub-agent), so every level
    counts: an anchor found only at the top would leave a nested one for the appendix too.
    """
    ids: list[str] = []
    nested: list[Workflow] = []
    for plain in entry.steps:
        for item in plain.items:
            if item.type == "WORKFLOW_ITEM_WORKFLOW":
                ids.append(payload_id("", item.id, item.workflow))
                if item.workflow is not None:
                    nested.append(item.workflow)
    if entry.blocks.workflow is not None:
        nested.append(entry.blocks.workflow)
    seen: set[int] = set()
    while nested:
        workflow = nested.pop(0)
        if id(workflow) in seen:
            continue
        seen.add(id(workflow))
        _workflow_anchors(workflow, ids, nested)
    return ids


def _workflow_anchors(workflow: Workflow, ids: list[str], nested: list[Workflow]) -> None:
    """The anchor ids of one workflow's steps; its nested workflows go to ``nested``."""
    for step in workflow.steps:
        for item in step.items:
            if item.type == "WORKFLOW_ITEM_WORKFLOW":
                ids.append(payload_id(step.id, item.id, item.workflow))
                if item.workflow is not None:
                    nested.append(item.workflow)
        if step.id.endswith(":workflow"):
            ids.append(step.id.removesuffix(":workflow"))


def place(entries: Sequence[Entry], payloads: Sequence[Payload]) -> Placement:
    """Assign each payload to exactly one place (anchor → stub window → appendix).

    A payload whose anchor sits inside another payload's workflow is shown inside that
    payload's block, so it lands where that payload lands (never a second time elsewhere).
    """
    anchor_turn: dict[str, int] = {}
    for turn, entry in enumerate(entries):
        for pid in anchor_ids(entry):
            anchor_turn.setdefault(pid, turn)
    host = _hosts(payloads, anchor_turn)
    anchored: dict[int, list[Payload]] = {}
    landing: dict[int, tuple[str, int | None]] = {}
    loose: list[Payload] = []
    for payload in payloads:
        at = anchor_turn.get(payload.id)
        if at is not None:
            anchored.setdefault(at, []).append(payload)
            landing[payload.index] = ("anchored", at)
        elif payload.index not in host:
            loose.append(payload)
    on_stub = _match_stubs(entries, loose, landing)
    appendix = tuple(p for p in loose if p.index not in landing)
    for payload in appendix:
        landing[payload.index] = ("appendix", None)
    for payload in payloads:
        if payload.index not in landing:  # shown inside its host payload's block
            landing[payload.index] = landing[_root(payload.index, host)]
    by_id: dict[str, list[Payload]] = {}
    inside: dict[int, list[Payload]] = {}
    for payload in payloads:
        by_id.setdefault(payload.id, []).append(payload)
        if payload.index in host:
            inside.setdefault(_root(payload.index, host), []).append(payload)
    return Placement(
        anchored={t: tuple(ps) for t, ps in anchored.items()},
        stubs={t: tuple(sorted(ps, key=lambda p: p.index)) for t, ps in on_stub.items()},
        appendix=appendix,
        landing=tuple((p, *landing[p.index]) for p in payloads),
        by_id={k: tuple(v) for k, v in by_id.items()},
        inside={k: tuple(v) for k, v in inside.items()},
        notices=_notices(entries, payloads, landing),
    )


def _notices(
    entries: Sequence[Entry],
    payloads: Sequence[Payload],
    landing: Mapping[int, tuple[str, int | None]],
) -> dict[int, str]:
    """payload index → the lock reason of the stub turn it lands on (hosted runs, landing with
    their host, included): the stub turn is the notification of every run it shows."""
    notices: dict[int, str] = {}
    for payload in payloads:
        kind, turn = landing[payload.index]
        if kind == "stub" and turn is not None and entries[turn].locked_reason:
            notices[payload.index] = entries[turn].locked_reason
    return notices


def _hosts(payloads: Sequence[Payload], anchor_turn: Mapping[str, int]) -> dict[int, int]:
    """payload index → index of the payload whose workflow anchors it (not anchored in a turn;
    the first host wins; a chain that loops back is no host, so nothing is lost)."""
    host: dict[int, int] = {}
    for payload in payloads:
        if payload.workflow is None:
            continue
        found: list[str] = []
        nested = [payload.workflow]
        while nested:
            _workflow_anchors(nested.pop(0), found, nested)
        ids = set(found)
        for other in payloads:
            if other.id in ids and other.id not in anchor_turn and other.index != payload.index:
                host.setdefault(other.index, payload.index)
    for index in list(host):
        if _root(index, host) == -1:
            del host[index]
    return host


def _root(index: int, host: Mapping[int, int]) -> int:
    """The outermost host of a payload (itself when it has none), -1 on a loop."""
    seen = {index}
    while index in host:
        index = host[index]
        if index in seen:
            return -1
        seen.add(index)
    return index


def _match_stubs(
    entries: Sequence[Entry], loose: Sequence[Payload], landing: dict[int, tuple[str, int | None]]
) -> dict[int, list[Payload]]:
    """Loose payloads onto stub turns within the window, globally greedy by smallest delta."""
    stubs: list[tuple[int, int]] = []
    for position, e in enumerate(entries):
        if is_stub(e) and e.created_us is not None:
            stubs.append((position, e.created_us))
    pairs: list[tuple[int, int, int, Payload]] = []
    for payload in loose:
        # ``completed_at``, else the background entry's update time: a run interrupted before
        # completing has no completion time, and a stub created near its entry's last update
        # is that run's notification (docs/dev/api.md §6)
        done = payload.completed_us
        if done is None:
            continue
        for turn, created in stubs:
            delta = abs(created - done)
            if delta <= STUB_WINDOW_US:
                pairs.append((delta, payload.index, turn, payload))
    pairs.sort(key=lambda p: (p[0], p[1], p[2]))
    on_stub: dict[int, list[Payload]] = {}
    for _delta, index, turn, payload in pairs:
        if index in landing:
            continue
        landing[index] = ("stub", turn)
        on_stub.setdefault(turn, []).append(payload)
    return on_stub
