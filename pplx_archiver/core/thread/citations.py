"""Citations from the three channels, deduplicated by URL per turn and per thread.

Channels (docs/dev/render-core.md, "Citations"): ``entry.sources`` (list form), the
FINAL ``web_results`` (plain ``text``; its schematized twin is the ``web_results`` block)
and every ``WORKFLOW_ITEM_SOURCES`` of the workflows rendered with the turn (sub-agents and council
members included). The first occurrence of a URL (of a name, for a source cited without a
URL) keeps its place; empty fields are filled from later occurrences. ``sources.json`` is
serialized with sorted keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

from pplx_archiver.core.thread.values import Entry, WebResult, Workflow


def workflow_sources(workflow: Workflow | None) -> list[WebResult]:
    """Every source of a workflow's SOURCES items, nested workflows included, in order."""
    found: list[WebResult] = []
    if workflow is None:
        return found
    stack = [workflow]
    while stack:
        current = stack.pop()
        nested: list[Workflow] = []
        for step in current.steps:
            for item in step.items:
                found.extend(item.sources)
                if item.workflow is not None:
                    nested.append(item.workflow)
        stack.extend(reversed(nested))
    return found


def entry_sources(entry: Entry) -> list[WebResult]:
    """The sources of one entry from all three channels, in channel order."""
    found = list(entry.sources)
    found.extend(entry.final_web_results)
    found.extend(entry.blocks.web_results)
    found.extend(workflow_sources(entry.blocks.workflow))
    for step in entry.steps:
        for item in step.items:
            found.extend(item.sources)
    return found


def source_key(result: WebResult) -> str:
    """What makes two sources the same: the URL, else (a source cited without one) the name;
    '' for a source with neither, which names nothing and is not kept."""
    url = result.url.strip()
    if url:
        return url
    name = " ".join(result.name.split())
    return f"\x00name:{name}" if name else ""


def dedupe(results: Iterable[WebResult]) -> tuple[WebResult, ...]:
    """Unique by URL, a source without URL by its name (first occurrence keeps its place;
    empty fields filled from later ones). Nothing cited is lost: only a source with neither
    URL nor name is left out."""
    order: list[str] = []
    merged: dict[str, WebResult] = {}
    for result in results:
        url = source_key(result)
        if not url:
            continue
        seen = merged.get(url)
        if seen is None:
            order.append(url)
            merged[url] = result
        elif not (seen.name and seen.snippet and seen.timestamp):
            merged[url] = WebResult(
                name=seen.name or result.name,
                url=seen.url,
                snippet=seen.snippet or result.snippet,
                timestamp=seen.timestamp or result.timestamp,
            )
    return tuple(merged[u] for u in order)


def sources_json(results: Sequence[WebResult]) -> bytes:
    """``sources.json``: ``{count, sources:[{name,url,snippet,timestamp}]}`` + newline."""
    doc = {
        "count": len(results),
        "sources": [
            {"name": r.name, "url": r.url, "snippet": r.snippet, "timestamp": r.timestamp}
            for r in results
        ],
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
