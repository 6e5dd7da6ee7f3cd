"""Mode detection (docs/dev/api.md §9) and the schematized-fetch decision.

``search_mode`` on any entry is authoritative; entries that disagree resolve to the most
specific mode (``MODE_SWITCH``); downstream signals that disagree with it are reported
(``MODE_SIGNAL_CONFLICT``). Without ``search_mode``: computer URL / metadata / listing
signals, then the display_model map (which wins over step names), then step names, else
search. Every signal seen is recorded for ``thread.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from pplx_archiver.core.thread import mode_table
from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.model import ListingRow, RawPage
from pplx_archiver.core.thread.values import Entry, Thread


@dataclasses.dataclass(frozen=True, slots=True)
class ModeDecision:
    """The decided mode, how it was decided, every signal seen and the findings."""

    mode: str
    decided_by: str
    signals: Mapping[str, Any]
    findings: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    typed: str = ""  # the mode the thread-type signals name (URL, metadata, listing), if any


def _step_mode(entries: Sequence[Entry], views: mode_table.ModeViews) -> str:
    names: set[str] = set()
    for entry in entries:
        names.update(step.step_type for step in entry.steps)
        workflow = entry.blocks.workflow
        if workflow is not None:
            names.update(s.tool_name.upper() for s in workflow.steps)
    return views.most_specific(views.by_step_type.get(n, "") for n in names)


def _dm_modes(entries: Sequence[Entry], views: mode_table.ModeViews) -> list[str]:
    """The distinct modes of the entries' mapped display models, most specific first."""
    found = {views.by_display_model.get(e.display_model, "") for e in entries} - {""}
    return sorted(found, key=views.specificity.index)


def _typed_mode(url: str, metadata_mode: str, listing_mode: str) -> tuple[str, bool]:
    """The mode the thread-type signals name ("" for none) and whether the URL is one."""
    views = mode_table.VIEWS
    by_url = [m for mark, m in views.by_url_mark.items() if mark in url]
    found = (
        views.by_metadata_mode.get(metadata_mode, ""),
        views.by_listing_type.get(listing_mode, ""),
    )
    return views.most_specific((*by_url, *found)), bool(by_url)


def detect_mode(thread: Thread, listing: ListingRow | None, url: str = "") -> ModeDecision:
    """Decide the archive mode of a thread and report every signal and conflict."""
    views = mode_table.VIEWS
    entries = thread.entries + thread.background
    search_modes = sorted({e.search_mode for e in entries if e.search_mode})
    known = [views.by_search_mode[m] for m in search_modes if m in views.by_search_mode]
    listing_mode = (listing.mode or "").upper() if listing is not None else ""
    url = url or (listing.url if listing is not None else "")
    typed, typed_url = _typed_mode(url, thread.metadata_mode, listing_mode)
    step_mode = _step_mode(entries, views)
    dm_modes = _dm_modes(entries, views)
    dm_mode = dm_modes[0] if dm_modes else ""
    display_models = sorted({e.display_model for e in entries if e.display_model})
    signals: dict[str, Any] = {
        "search_modes": search_modes,
        "display_models": display_models,
        "display_model_mode": dm_mode or None,
        "step_mode": step_mode or None,
        "metadata_mode": thread.metadata_mode or None,
        "listing_mode": listing_mode or None,
        "computer_url": typed_url,
    }
    findings: list[tuple[str, Mapping[str, Any]]] = []
    if known:
        mode = views.most_specific(known)
        decided_by = "search_mode"
        if len(set(known)) > 1:
            findings.append(("MODE_SWITCH", {"search_modes": search_modes, "mode": mode}))
        downstream = [m for m in (dm_mode, step_mode) if m and m != mode]
        if typed and mode != typed:
            downstream.append(typed)
        if downstream:
            findings.append(
                (
                    "MODE_SIGNAL_CONFLICT",
                    {"mode": mode, "conflicting": sorted(set(downstream))},
                )
            )
    elif typed:
        # a computer signal outranks the display model and step names; a disagreeing one is
        # reported (docs/rendering.md, "Mode")
        mode, decided_by = typed, f"{typed}_signal"
        downstream = sorted({m for m in (*dm_modes, step_mode) if m and m != mode})
        if downstream:
            findings.append(("MODE_SIGNAL_CONFLICT", {"mode": mode, "conflicting": downstream}))
    elif dm_mode:
        mode, decided_by = dm_mode, "display_model"
        if len(dm_modes) > 1:  # entries' mapped display models disagree: most specific
            findings.append(("MODE_SWITCH", {"display_model_modes": dm_modes, "mode": mode}))
        if step_mode and step_mode != dm_mode:
            findings.append(("MODE_SIGNAL_CONFLICT", {"mode": mode, "conflicting": [step_mode]}))
    elif step_mode:
        mode, decided_by = step_mode, "step_name"
    else:
        mode, decided_by = views.default, "default"
    signals["decided_by"] = decided_by
    return ModeDecision(mode, decided_by, signals, tuple(findings), typed)


def may_stay_plain(plain_pages: Sequence[RawPage]) -> bool:
    """False when :func:`blocks_needed` is certainly True for any decode of these pages.

    It can only be False with an entry whose ``search_mode`` reads as a search mode
    (``SEARCH``, ``STUDIO``); without one, the schematized pages are certainly needed and
    the thread's flow decodes the plain pages only with them.
    """
    plain = mode_table.VIEWS.plain_search_modes
    for page in plain_pages:
        body = page.body
        if type(body) is not dict:
            return True  # not readable here: the decode reports it
        for key in ("entries", "background_entries"):
            raws = body.get(key)
            if raws is None:
                continue
            if type(raws) is not list:
                return True
            for raw in raws:
                mode = raw.get("search_mode") if type(raw) is dict else None
                if isinstance(mode, str) and mode.upper() in plain:
                    return True
    return False


def needs_blocks(plain_pages: Sequence[RawPage], listing: ListingRow | None) -> bool:
    """Whether the schematized fetch is needed after the plain pages were fetched.

    True for computer, council, study and deep-research threads, for a thread classified
    search by default (no mapped signal: no known ``search_mode``, no computer signal, no
    mapped display model, no deciding step name; an unmapped display model such as ``turbo``
    or ``pplx_alpha`` does not count), and for one where no entry carries any
    ``display_model`` (uncertain). A page of which nothing can be read raises PayloadError.
    """
    return blocks_needed(decode_thread(plain_pages, ()), listing)


def blocks_needed(thread: Thread, listing: ListingRow | None) -> bool:
    """:func:`needs_blocks` of a thread already decoded from its plain pages.

    Only the entries' ``search_mode`` and ``display_model`` can make it False (a known
    search mode that is ``search``, and some display model): every other signal decides a
    mode that needs the schematized pages, or the default. Steps and workflow items never
    change it, so a thread decoded without plain workflow items decides the same.
    """
    decision = detect_mode(thread, listing)
    if decision.mode in mode_table.VIEWS.needs_blocks or decision.decided_by == "default":
        return True  # "default": no mapped signal at all (turbo, pplx_alpha alone are unmapped)
    everything = thread.entries + thread.background
    return not any(e.display_model for e in everything)


def listing_modes(row: ListingRow) -> frozenset[str] | None:
    """The archive modes a listed thread may have, from its listing row alone; None: any.

    The listing's ``mode`` is the thread's type: ``ASI``/``COMPUTER`` is a computer task,
    any other value (``copilot``, ``concise``, or a search-mode name such as ``STUDY``) is
    not. A search-mode name (GraphQL) or a mapped display model (``pplx_study``,
    ``pplx_agentic_research``, ``pplx_asi_opus`` …, any case) names one turn's mode: the
    thread is that mode or a more specific one (docs/dev/api.md §9). Signals that contradict
    each other decide nothing.
    """
    views = mode_table.VIEWS
    every = frozenset(views.names)
    possible = every
    listed = (row.mode or "").strip().upper()
    if listed in views.by_listing_type:
        possible = frozenset({views.by_listing_type[listed]})
    elif listed:  # another type: not one of the modes that have a type of their own
        possible = possible - set(views.by_listing_type.values())
        if listed in views.by_search_mode:
            possible &= views.at_least(views.by_search_mode[listed])
    by_model = views.by_display_model.get((row.display_model or "").strip().lower())
    if by_model is not None:
        possible &= views.at_least(by_model)
    if not possible or possible == every:
        return None
    return possible
