"""The conversation modes: one declared table, and every view of it the package uses.

Each :class:`Mode` row holds what the service sends for one mode (docs/dev/api.md §9 and
§11) and what the archive does with it. Everything else that needs a list or a mapping of
modes reads :data:`VIEWS` (computed by :func:`views_of`) when it runs: the classifier
(``core/thread/modes.py``), the ask (``core/ask/asking.py``), the answer fallbacks
(``core/thread/answers.py``), the thread URL and folder, the ``--mode`` choices of
``batch``/``sync``/``search``/``ask``, the MCP tools' filter and the site's insights. Adding
a mode is adding a row here (docs/dev/architecture.md, "Tables");
``tests/core/thread/test_mode_table.py`` fails when a mode is named anywhere else. The
simulator (``sim/``) keeps its own, independent account of the modes on purpose: it plays the
service, and the agreement tests compare the two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping


@dataclasses.dataclass(frozen=True, slots=True)
class Mode:
    """One conversation mode: its archive name, the service's values for it, and its rules."""

    name: str  # folder under the archive, thread.json ``mode``, index column, ``--mode``
    rank: int  # specificity: a thread that switched modes is filed under the lowest rank
    search_modes: tuple[str, ...] = ()  # an entry's ``search_mode`` (upper case), rule 1
    display_models: tuple[str, ...] = ()  # mapped ``display_model`` ids (lower case), rule 2
    model_family: str = ""  # prefix of every display model of the mode (follow-up refusal)
    step_types: tuple[str, ...] = ()  # step names deciding the mode without other signal
    listing_types: tuple[str, ...] = ()  # listing ``mode`` naming the thread type (upper)
    metadata_modes: tuple[str, ...] = ()  # ``thread_metadata.mode`` naming the thread type
    url_marks: tuple[str, ...] = ()  # a thread URL containing one names the thread type
    route: str = ""  # web path of a thread of this type ("" = ``/search/``)
    ask_config: str = ""  # the models-config mode ``pplx-ask`` asks in ("" = not offered)
    needs_blocks: bool = True  # the schematized flavour is fetched (api.md §9 rule 3)
    agent: bool = False  # an empty answer falls back to the agent's workflows and members


TABLE: tuple[Mode, ...] = (
    Mode(
        name="search",
        rank=4,
        search_modes=("SEARCH", "STUDIO"),
        ask_config="search",
        needs_blocks=False,
    ),
    Mode(
        name="deep-research",
        rank=3,
        search_modes=("RESEARCH",),
        step_types=("RESEARCH_ANSWER",),
        ask_config="research",
    ),
    Mode(
        name="computer",
        rank=0,
        search_modes=("ASI",),
        display_models=("pplx_asi_opus", "pplx_asi_opus_thinking"),
        model_family="pplx_asi",
        listing_types=("ASI", "COMPUTER"),
        metadata_modes=("4",),
        url_marks=("/computer/tasks/",),
        route="computer/tasks",
        agent=True,
    ),
    Mode(
        name="council",
        rank=1,
        search_modes=("AGENTIC_RESEARCH",),
        display_models=("pplx_agentic_research",),
        step_types=("COUNCIL_RESEARCH",),
        ask_config="agentic_research",
        agent=True,
    ),
    Mode(
        name="study",
        rank=2,
        search_modes=("STUDY",),
        display_models=("pplx_study",),
        ask_config="study",
    ),
)


@dataclasses.dataclass(frozen=True, slots=True)
class ModeViews:
    """The views of one table; each is computed from the rows, none is declared."""

    rows: tuple[Mode, ...]
    names: tuple[str, ...]  # declared order: ``--mode`` help, insights series order
    specificity: tuple[str, ...]  # most specific first
    default: str  # the least specific: a thread without any mode signal
    by_search_mode: Mapping[str, str]
    by_display_model: Mapping[str, str]
    by_step_type: Mapping[str, str]
    by_listing_type: Mapping[str, str]
    by_metadata_mode: Mapping[str, str]
    by_url_mark: Mapping[str, str]
    routes: Mapping[str, str]  # mode → web path, for the modes that have their own
    needs_blocks: frozenset[str]
    agents: frozenset[str]
    ask_modes: Mapping[str, str]  # ``pplx-ask --mode`` → models-config mode, declared order
    plain_search_modes: frozenset[str]  # ``search_mode`` values of modes that stay plain

    def most_specific(self, modes: Iterable[str]) -> str:
        """The most specific of ``modes`` ("" for none)."""
        found = [m for m in modes if m]
        return min(found, key=self.specificity.index) if found else ""

    def at_least(self, mode: str) -> frozenset[str]:
        """``mode`` and every mode more specific: what a thread with a turn of ``mode`` may be
        filed under (a thread that switched mode is filed under its most specific one)."""
        return frozenset(self.specificity[: self.specificity.index(mode) + 1])


def _claims(rows: Iterable[Mode], field: str) -> dict[str, str]:
    """``value → mode name`` of one tuple field; ValueError when two modes claim a value."""
    claimed: dict[str, str] = {}
    for row in rows:
        values = getattr(row, field)
        for value in (values,) if isinstance(values, str) else values:
            if value in claimed:
                both = f"{claimed[value]!r} and {row.name!r}"
                raise ValueError(f"mode table: {field} {value!r} of both {both}")
            if value:
                claimed[value] = row.name
    return claimed


def views_of(table: Iterable[Mode]) -> ModeViews:
    """Every view of a mode table; ValueError for a name, rank or service value given twice."""
    rows = tuple(table)
    _claims(rows, "name")
    ranks = [r.rank for r in rows]
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"mode table: two modes of one rank in {ranks}")
    specificity = tuple(r.name for r in sorted(rows, key=lambda r: r.rank))
    return ModeViews(
        rows=rows,
        names=tuple(r.name for r in rows),
        specificity=specificity,
        default=specificity[-1],
        by_search_mode=_claims(rows, "search_modes"),
        by_display_model=_claims(rows, "display_models"),
        by_step_type=_claims(rows, "step_types"),
        by_listing_type=_claims(rows, "listing_types"),
        by_metadata_mode=_claims(rows, "metadata_modes"),
        by_url_mark=_claims(rows, "url_marks"),
        routes={r.name: r.route for r in rows if r.route},
        needs_blocks=frozenset(r.name for r in rows if r.needs_blocks),
        agents=frozenset(r.name for r in rows if r.agent),
        ask_modes={r.name: r.ask_config for r in rows if r.ask_config},
        plain_search_modes=frozenset(v for r in rows if not r.needs_blocks for v in r.search_modes),
    )


VIEWS = views_of(TABLE)
