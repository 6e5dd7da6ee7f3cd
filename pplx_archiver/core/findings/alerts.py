"""Findings as facts: the kinds of alert, and the key that makes a finding the same fact.

A finding (an answer variant, a rewrite, a model substitution, an interruption, a degraded
entry, a missing report, a vanished listing…) is recorded once per new fact in the index's
``alerts`` table. :data:`KINDS` is the one table of the alert kinds (the event name, what it
means); :func:`fact_key` names the fact a finding states, from the fields that identify it —
the same finding met again on a refetch has the same key and is not reported again.

Pure: values in, strings out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

# kind -> what it says (the alerts command and docs/events.md list them)
KINDS: Mapping[str, str] = {
    "ANSWER_VARIANT_DETECTED": "the service showed two answers to one query (A/B)",
    "ANSWER_REWRITTEN": "an answer's text or sources changed under the same entry id",
    "MODEL_SUBSTITUTED": "a turn was served by another model than the one chosen",
    "WORKFLOW_INTERRUPTED": "a workflow stopped before it finished",
    "MODE_SWITCH": "a thread changed mode between turns",
    "MODE_SIGNAL_CONFLICT": "the mode signals of a thread disagree",
    "UNKNOWN_STEP_TYPE": "a step type the renderer does not know",
    "REPORT_SKIPPED": "a report version was empty or binary",
    "ENTRY_DEGRADED": "part of a turn could not be read",
    "THREAD_INCOMPLETE": "a report or an asset could not be fetched",
    "LISTING_SHRANK": "a complete listing lacked many known threads; nothing was deleted",
    "ARCHIVE_ONLY_COPY": "a thread deleted upstream: the archive holds its only copy",
    "THREAD_RETURNED": "a tombstoned thread (deleted, expired, not found) answered again",
}

# Fields that describe a finding without changing which fact it states.
_NOT_IDENTIFYING = frozenset(
    {"thread_uuid", "title", "uuid8", "source", "change", "registered_at", "silent", "path"}
)


def fact_key(kind: str, fields: Mapping[str, Any]) -> str:
    """A short stable key of the fact a finding states (kind and identifying fields)."""
    facts = {k: v for k, v in fields.items() if k not in _NOT_IDENTIFYING}
    data = orjson.dumps([kind, facts], option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.sha256(data).hexdigest()[:24]
