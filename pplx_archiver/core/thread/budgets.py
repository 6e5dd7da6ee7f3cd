"""Budgets on what one thread's responses become, not only on their bytes.

A body of 750 KB can hold 250,000 empty entries, and each one becomes turn files, index
rows and search rows: the body cap (``max_body_bytes``) does not bound what a body expands
into. :class:`Budgets` does, per thread: entries (per flavour, all pages together), turns,
blocks, sources, the nesting depth of a page, the bytes the thread would write, and the JSON
objects and arrays of one body (``values``, counted on the bytes before the body is parsed:
a body of ``{}`` costs ~30 times its size once parsed). Each is checked as early as it can
be — values on each body before it is parsed (:func:`body_values`, by the HTTP client);
entries, blocks and depth on each page as it arrives,
before it is decoded; turns and sources once the pages are decoded, before the rendering;
the output bytes once rendered, before anything is written — and a breach raises
:class:`~pplx_archiver.errors.BudgetError`, which fails that thread (``THREAD_FAILED``
naming the budget) while the run goes on.

Pure: values in, an error or nothing out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pplx_archiver.errors import BudgetError

# budget name -> (setting, default); docs/configuration.md lists them.
DEFAULTS: Mapping[str, int] = {
    "entries": 10_000,
    "turns": 5_000,
    "blocks": 200_000,
    "sources": 100_000,
    "depth": 256,
    "bytes": 512 * 1024 * 1024,
    "values": 1_000_000,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Budgets:
    """The most one thread may become (see :data:`DEFAULTS`)."""

    entries: int = DEFAULTS["entries"]
    turns: int = DEFAULTS["turns"]
    blocks: int = DEFAULTS["blocks"]
    sources: int = DEFAULTS["sources"]
    depth: int = DEFAULTS["depth"]
    bytes: int = DEFAULTS["bytes"]
    values: int = DEFAULTS["values"]

    def check(self, thread_id: str, name: str, value: int) -> None:
        """Raise :class:`BudgetError` when ``value`` passes the budget ``name``."""
        limit: int = getattr(self, name)
        if value > limit:
            setting = f"max_thread_{name}"
            raise BudgetError(
                thread_id,
                name,
                f"budget exceeded: {name} {value} > {limit} "
                f"(--{setting.replace('_', '-')}); nothing of the thread written",
            )


@dataclasses.dataclass(slots=True)
class PageTally:
    """What the pages of one flavour have held so far (entries, blocks)."""

    entries: int = 0
    blocks: int = 0

    def add(self, thread_id: str, body: Any, budgets: Budgets) -> None:
        """Count one page's entries and blocks and check its depth, before it is decoded."""
        budgets.check(thread_id, "depth", depth_of(body, budgets.depth))
        entries = body.get("entries") if isinstance(body, dict) else None
        if not isinstance(entries, list):
            return
        self.entries += len(entries)
        budgets.check(thread_id, "entries", self.entries)
        for entry in entries:
            blocks = entry.get("blocks") if isinstance(entry, dict) else None
            if isinstance(blocks, list):
                self.blocks += len(blocks)
        budgets.check(thread_id, "blocks", self.blocks)


def depth_of(value: Any, stop: int) -> int:
    """The nesting depth of a JSON value (a scalar is 0); the walk stops past ``stop``.

    Level by level, with exact-class tests: a parsed JSON value holds plain ``dict`` and
    ``list`` only, and this walk is a few times quicker than one node at a time (it runs on
    every page a run receives)."""
    if not isinstance(value, dict | list):
        return 0
    level: list[Any] = [value]
    depth = 0
    while level:
        depth += 1
        if depth > stop:
            return depth
        below: list[Any] = []
        keep = below.append
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                kind = child.__class__
                if kind is dict or kind is list:
                    keep(child)
        level = below
    return depth


def body_values(body: bytes) -> int:
    """At most the JSON objects and arrays of ``body`` (brackets inside strings count too)."""
    return body.count(b"{") + body.count(b"[")


def output_bytes(files: Mapping[str, bytes], *raw: bytes | None) -> int:
    """The bytes a thread would write: its derived files and raw files."""
    return sum(len(b) for b in files.values()) + sum(len(b) for b in raw if b is not None)
