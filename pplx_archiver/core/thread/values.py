"""The decoded, typed and frozen view of one thread that every render step reads.

Built once by :mod:`pplx_archiver.core.thread.decode` from the raw pages; never mutated. Times are
integer microseconds since the epoch (UTC) or None; ``path`` fields keep the JSON path of
the value for findings and error messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pplx_archiver.core.thread.frozen import fast_init
from pplx_archiver.core.thread.model import SpaceRef
from pplx_archiver.core.thread.node import Node


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class WebResult:
    """One cited or consulted web page."""

    name: str
    url: str
    snippet: str = ""
    timestamp: str = ""


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class TodoItem:
    """One line of a to-do list or of its diff."""

    status: str
    description: str


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class Item:
    """One ``WORKFLOW_ITEM_*`` of a workflow step; the fields of its kind are filled."""

    id: str
    type: str
    where: Node
    text: str = ""
    variant: str = ""
    header: str = ""
    sources: tuple[WebResult, ...] = ()
    queries: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    title: str = ""
    todo: tuple[TodoItem, ...] = ()
    todo_diff: tuple[TodoItem, ...] = ()
    questions: tuple[str, ...] = ()
    responses: tuple[tuple[str, str], ...] = ()
    entities: tuple[str, ...] = ()
    workflow: Workflow | None = None
    raw: Any = None

    @property
    def path(self) -> str:
        """The JSON path of this value (computed on demand)."""
        return self.where.path


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One step of a workflow: a tool call, a search, a sub-agent container …"""

    id: str
    title: str
    status: str
    tool_name: str
    items: tuple[Item, ...]
    where: Node

    @property
    def path(self) -> str:
        """The JSON path of this value (computed on demand)."""
        return self.where.path


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class Workflow:
    """A ``workflow_block`` or a nested ``workflow_payload`` (sub-agent, council member)."""

    id: str
    status: str
    headline: str
    mode: str
    model: str
    objective: str
    is_anchor: bool
    completed_us: int | None
    steps: tuple[Step, ...]
    where: Node
    locked_reason: str = ""

    @property
    def path(self) -> str:
        """The JSON path of this value (computed on demand)."""
        return self.where.path


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class Blocks:
    """What the schematized ``blocks[]`` of an entry hold, by use."""

    answer: str | None = None
    sections: tuple[str, ...] = ()
    workflow: Workflow | None = None
    web_results: tuple[WebResult, ...] = ()
    goals: tuple[str, ...] = ()
    asset_nodes: tuple[Node, ...] = ()
    count: int = 0
    problems: tuple[tuple[str, str], ...] = ()


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class PlainStep:
    """One step of the plain ``text`` JSON: its type and raw content object."""

    step_type: str
    uuid: str
    content: Mapping[str, Any]
    where: Node
    items: tuple[Item, ...] = ()

    @property
    def path(self) -> str:
        """The JSON path of this value (computed on demand)."""
        return self.where.path


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class SideBySide:
    """``side_by_side_metadata`` of an entry (answer rewrite / A-B experiment)."""

    sibling_uuid: str
    selection_status: str
    experiment_role: str
    experiment_override: Any = None


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    """One turn (or background entry) with its plain and schematized halves joined."""

    key: str
    uuid: str
    where: Node
    query: str
    created_us: int | None
    updated_us: int | None
    updated_raw: str
    search_mode: str
    display_model: str
    user_model: str
    status: str
    trigger: str
    is_background: bool
    locked_reason: str
    thread_title: str
    slug: str
    context_uuid: str
    author: str
    space: SpaceRef | None
    side_by_side: SideBySide | None
    steps: tuple[PlainStep, ...]
    final_answer: str | None
    final_web_results: tuple[WebResult, ...]
    sources: tuple[WebResult, ...]
    blocks: Blocks
    has_text: bool = False
    related: tuple[str, ...] = ()
    # (JSON path, reason) of each value that could not be decoded: the entry is degraded
    problems: tuple[tuple[str, str], ...] = ()

    @property
    def path(self) -> str:
        """The JSON path of this value (computed on demand)."""
        return self.where.path


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class PageInfo:
    """What one fetched page says about paging."""

    flavour: str
    cursor: str | None
    next_cursor: str | None
    has_next_page: bool
    entries: int
    background_entries: int


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class Thread:
    """A whole decoded thread: turns in creation order, background entries, metadata."""

    entries: tuple[Entry, ...]
    background: tuple[Entry, ...]
    title: str
    created_us: int | None
    updated_raw: str
    metadata_mode: str
    locked_reason: str
    space: SpaceRef | None
    shared_nodes: tuple[Node, ...]
    pages: tuple[PageInfo, ...]
    # (JSON path, reason) of thread metadata that could not be read (left out)
    problems: tuple[tuple[str, str], ...] = ()
