"""The files a render writes into a thread folder: one declared table.

The render (``core/thread/render.py``) names what it writes from these rows; the shell records the
size and hash of exactly these files (``shell/archive/files.py`` ``recorded_file_keys``), finds
them in a folder (``derived_files_on_disk``) and removes the ones a new render no longer
produces; ``verify`` requires the ones every thread has. Everything else in a thread folder
(raw pages, assets, history, a user's own files) is never touched as a derived file. Adding an
output file is adding a row here and producing it in the render (docs/dev/architecture.md,
"Tables"); ``tests/core/thread/test_output_files.py`` fails when the two disagree.
"""

from __future__ import annotations

import dataclasses
import re

TURN_FIELD = "{turn:04d}"  # where a per-turn file's path holds the turn number


@dataclasses.dataclass(frozen=True, slots=True)
class OutputFile:
    """One derived file of a thread folder."""

    path: str  # relative to the thread folder, ``/``-separated; per turn: holds TURN_FIELD
    holds: str  # what it holds
    always: bool = True  # every thread has it (False: only some, e.g. the report)

    @property
    def per_turn(self) -> bool:
        """One file per turn (the path holds the turn number)."""
        return TURN_FIELD in self.path

    def at(self, turn: int) -> str:
        """The path of a per-turn file for turn ``turn`` (1-based)."""
        return self.path.format(turn=turn)

    def pattern(self) -> re.Pattern[str]:
        """What its paths look like: a per-turn file with any turn number of 4+ digits."""
        head, _, tail = self.path.partition(TURN_FIELD)
        number = r"\d{4,}" if self.per_turn else ""
        return re.compile(f"^{re.escape(head)}{number}{re.escape(tail)}$")


CONVERSATION = OutputFile("conversation.md", "the whole thread: every turn and the appendix")
TURN = OutputFile(f"turns/turn_{TURN_FIELD}.md", "one turn: question, steps, answer, sources")
SOURCES_JSON = OutputFile("sources.json", "the cited sources, deduplicated, as JSON")
SOURCES_MD = OutputFile("sources.md", "the cited sources, deduplicated, as Markdown")
REPORT = OutputFile("report.md", "a deep-research report", always=False)
THREAD_JSON = OutputFile("thread.json", "the thread's record: mode, counts, signals, variants")

OUTPUTS = (CONVERSATION, TURN, SOURCES_JSON, SOURCES_MD, REPORT, THREAD_JSON)

TOP_FILES = frozenset(f.path for f in OUTPUTS if "/" not in f.path)  # at the folder's top
SUB_DIRS = frozenset(f.path.split("/")[0] for f in OUTPUTS if "/" in f.path)  # e.g. turns/
REQUIRED = tuple(f.path for f in OUTPUTS if f.always and not f.per_turn)  # every thread's
_PATTERNS = tuple(f.pattern() for f in OUTPUTS)


def is_output(rel: str) -> bool:
    """True for a relative path a render may write (``turns/turn_0003.md``, ``sources.md``)."""
    return rel in TOP_FILES or any(p.match(rel) for p in _PATTERNS)
