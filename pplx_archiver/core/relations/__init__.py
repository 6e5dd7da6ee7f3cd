"""The relation graph: which stored threads belong together, and why."""

from __future__ import annotations

from pplx_archiver.core.relations.relations import (
    Edge,
    ThreadFacts,
    build_edges,
    counts,
    edges_jsonl,
    graph_md,
    normalize_prompt,
    thread_facts,
)

__all__ = [
    "Edge",
    "ThreadFacts",
    "build_edges",
    "counts",
    "edges_jsonl",
    "graph_md",
    "normalize_prompt",
    "thread_facts",
]
