"""Interrupted workflows: the three kinds, their inline annotation and their records.

``WORKFLOW_AWAITING_NEXT_STEPS`` with ``locked_reason=spending_limit_exceeded`` is
*limit_interrupted*, without a reason *interrupted*; ``WORKFLOW_CANCELED`` is *canceled*.
``WORKFLOW_COMPLETED``, ``WORKFLOW_AWAITING_USER`` and unknown statuses stay silent.
"""

from __future__ import annotations

from pplx_archiver.core.thread.labels import label

AWAITING = "WORKFLOW_AWAITING_NEXT_STEPS"
CANCELED = "WORKFLOW_CANCELED"
SPENDING_LIMIT = "spending_limit_exceeded"


def kind_of(status: str, locked_reason: str) -> str | None:
    """The interruption kind of a workflow status, or None when it is not interrupted."""
    if status == AWAITING:
        return "limit_interrupted" if locked_reason == SPENDING_LIMIT else "interrupted"
    if status == CANCELED:
        return "canceled"
    return None


def annotation(kind: str | None, lang: str) -> str:
    """The inline annotation text for a kind (" ⏸ …"), or '' for a healthy workflow."""
    if kind is None:
        return ""
    return " " + label(kind, lang)


def record(location: str, kind: str, headline: str, status: str) -> dict[str, str]:
    """One ``thread.json.interruptions`` record."""
    return {"location": location, "kind": kind, "headline": headline, "status": status}
