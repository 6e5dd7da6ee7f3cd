"""Answer variants (A/B rewrites) under the narrowed criterion of docs/dev/api.md §6.

A hit is an entry whose ``side_by_side_metadata`` has a non-empty ``sibling_uuid`` AND
either a ``selection_status`` that is set and not ``SELECTION_STATUS_UNSPECIFIED`` or an
``experiment_role`` that does not start with ``[control]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pplx_archiver.core.thread.layout import uuid8
from pplx_archiver.core.thread.values import Entry, SideBySide

UNSPECIFIED = "SELECTION_STATUS_UNSPECIFIED"


def is_variant(meta: SideBySide | None) -> bool:
    """Whether side-by-side metadata is a real answer variant."""
    if meta is None or not meta.sibling_uuid.strip():
        return False
    status_set = bool(meta.selection_status) and meta.selection_status != UNSPECIFIED
    treatment = not meta.experiment_role.startswith("[control]")
    return status_set or treatment


def variant_records(
    thread_uuid: str, title: str, entries: Sequence[Entry]
) -> tuple[dict[str, Any], ...]:
    """Registry records of every hit, in turn order (deduplicated by entry)."""
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in entries:
        meta = entry.side_by_side
        if meta is None or not is_variant(meta) or entry.key in seen:
            continue
        seen.add(entry.key)
        rec: dict[str, Any] = {
            "thread_uuid": thread_uuid,
            "uuid8": uuid8(thread_uuid),
            "title": title,
            "entry_uuid": entry.key,
            "sibling_uuid": meta.sibling_uuid,
            "selection_status": meta.selection_status,
            "experiment_role": meta.experiment_role,
        }
        if meta.experiment_override is not None:
            rec["experiment_override"] = meta.experiment_override
        records.append(rec)
    return tuple(records)
