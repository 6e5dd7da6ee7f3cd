"""The searchable prose of a thread, taken from the decoded values the render core reads.

The search index holds prose only: the title, and per turn the query, the answer, the
conclusions of the sub-agents shown in that turn and the titles and URLs of its sources.
Values come straight from the decoded thread (never from rendered Markdown, never raw
JSON). Turn ``0`` stands for the thread itself: its title and the conclusions of
background sub-agents that landed on no turn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from pplx_archiver.core.thread.values import WebResult

FIELDS = ("title", "query", "answer", "subagents", "sources")


@dataclasses.dataclass(frozen=True, slots=True)
class TurnProse:
    """The prose of one turn (``turn`` 1-based; 0 is the thread row), one value per field."""

    turn: int
    created: str
    title: str = ""
    query: str = ""
    answer: str = ""
    subagents: str = ""
    sources: str = ""

    def values(self) -> tuple[str, str, str, str, str]:
        """The field values in :data:`FIELDS` order."""
        return (self.title, self.query, self.answer, self.subagents, self.sources)


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadProse:
    """Every searchable row of one thread: the thread row first, then one per turn."""

    rows: tuple[TurnProse, ...]


def sources_text(results: Iterable[WebResult]) -> str:
    """Source titles and URLs, one per line."""
    lines: list[str] = []
    for result in results:
        lines.extend(v for v in (result.name.strip(), result.url.strip()) if v)
    return "\n".join(lines)


def joined(texts: Iterable[str]) -> str:
    """Non-empty texts separated by blank lines."""
    return "\n\n".join(t for t in texts if t.strip())
