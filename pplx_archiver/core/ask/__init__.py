"""Asking: the request an ask sends (models, modes) and the answer stream it reads back."""

from __future__ import annotations

from pplx_archiver.core.ask.asking import (
    ASK_PATH,
    PINNED_CONFIG,
    RECENCY,
    SOURCES,
    FollowUp,
    ModelChoice,
    ModelTable,
    ask_body,
    follow_up_members,
    follow_up_of,
    mode_of_entry,
    parse_models_config,
    refuse_computer_follow_up,
    resolve_models,
    table_lines,
)
from pplx_archiver.core.ask.stream import AskResult, AskStream, replay

__all__ = [
    "ASK_PATH",
    "PINNED_CONFIG",
    "RECENCY",
    "SOURCES",
    "AskResult",
    "AskStream",
    "FollowUp",
    "ModelChoice",
    "ModelTable",
    "ask_body",
    "follow_up_members",
    "follow_up_of",
    "mode_of_entry",
    "parse_models_config",
    "refuse_computer_follow_up",
    "replay",
    "resolve_models",
    "table_lines",
]
