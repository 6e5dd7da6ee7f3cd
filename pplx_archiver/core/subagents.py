"""Sub-agent payloads and the one place each lands: anchored turn, stub turn or appendix.

A *payload* is a top-level nested ``workflow_payload`` of a background entry
(docs/dev/api.md §6). It is (1) *anchored* when a main entry's workflow carries the same
payload id, else (2) placed on a ``subagent_result`` *stub* turn created within 10 s of its
completion time (global greedy by smallest delta; each payload once; a stub may take
several), else (3) left for the thread *appendix*. Never twice, never dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pplx_archiver.core.values import Entry, Workflow

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
    """Payload ids anchored in a main entry's workflow (top-level sub-agent items)."""
    workflow = entry.blocks.workflow
    ids: list[str] = []
    for plain in entry.steps:
        for item in plain.items:
            if item.type == "WORKFLOW_ITEM_WORKFLOW":
                ids.append(payload_id("", item.id, item.workflow))
    if workflow is None:
        return ids
    for step in workflow.steps:
        for item in step.items:
            if item.type == "WORKFLOW_ITEM_WORKFLOW":
                ids.append(payload_id(step.id, item.id, item.workflow))
        if step.id.endswith(":workflow"):
            ids.append(step.id.removesuffix(":workflow"))
    return ids


def place(entries: Sequence[Entry], payloads: Sequence[Payload]) -> Placement:
    """Assign each payload to exactly one place (anchor → stub window → appendix)."""
    anchor_turn: dict[str, int] = {}
    for turn, entry in enumerate(entries):
        for pid in anchor_ids(entry):
            anchor_turn.setdefault(pid, turn)
    anchored: dict[int, list[Payload]] = {}
    landing: dict[int, tuple[str, int | None]] = {}
    loose: list[Payload] = []
    for payload in payloads:
        at = anchor_turn.get(payload.id)
        if at is not None:
            anchored.setdefault(at, []).append(payload)
            landing[payload.index] = ("anchored", at)
        else:
            loose.append(payload)
    stubs: list[tuple[int, int]] = []
    for position, e in enumerate(entries):
        if e.trigger == STUB_TRIGGER and e.created_us is not None:
            stubs.append((position, e.created_us))
    pairs: list[tuple[int, int, int, Payload]] = []
    for payload in loose:
        # only a run that completed (``completed_at``) is time-matched: the entry's update
        # time of a run that never completed says nothing about when its stub came
        done = payload.workflow.completed_us if payload.workflow is not None else None
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
    appendix = tuple(p for p in loose if p.index not in landing)
    for payload in appendix:
        landing[payload.index] = ("appendix", None)
    by_id: dict[str, list[Payload]] = {}
    for payload in payloads:
        by_id.setdefault(payload.id, []).append(payload)
    return Placement(
        anchored={t: tuple(ps) for t, ps in anchored.items()},
        stubs={t: tuple(sorted(ps, key=lambda p: p.index)) for t, ps in on_stub.items()},
        appendix=appendix,
        landing=tuple((p, *landing[p.index]) for p in payloads),
        by_id={k: tuple(v) for k, v in by_id.items()},
    )
