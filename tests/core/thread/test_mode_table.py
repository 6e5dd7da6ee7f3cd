"""The mode table is the one place a mode is declared: every view follows it, nothing repeats it.

A sixth mode added to the table (``sketch``) must show up in every derived view — the
classifier, the listing filter, the folder, the ask, the ``--mode`` choices of the CLI and
the MCP tools, the site's insights — and no module outside the table may spell out a list or
a mapping of modes of its own.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.cli.ask import ask_app
from pplx_archiver.core.ask.asking import ModelRow, ModelTable, mode_of_entry, resolve_models
from pplx_archiver.core.thread import mode_table
from pplx_archiver.core.thread.mode_table import TABLE, Mode, views_of
from pplx_archiver.core.thread.model import ListingRow, RawPage, ThreadInput
from pplx_archiver.core.thread.modes import listing_modes, needs_blocks
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.shell.care.mcp_args import check_mode
from pplx_archiver.site import insights_charts
from pplx_archiver.site.pages import ThreadMeta
from tests.core import builders as b

ROOT = Path(__file__).resolve().parents[3]
_register()  # the commands' help is written on import: from the real table, before any patch

# ranks ×10 leave room: the sketch sits between council (10) and study (20)
SKETCH = Mode(
    name="sketch",
    rank=15,
    search_modes=("SKETCH",),
    display_models=("pplx_sketch",),
    step_types=("SKETCH_ANSWER",),
    ask_config="sketching",
    agent=True,
)
SIX = (SKETCH, *(dataclasses.replace(m, rank=m.rank * 10) for m in TABLE))


@pytest.fixture
def six(monkeypatch: pytest.MonkeyPatch) -> Iterator[mode_table.ModeViews]:
    """The package running on the five modes plus ``sketch`` (declared first)."""
    views = views_of(SIX)
    monkeypatch.setattr(mode_table, "VIEWS", views)
    yield views


def test_every_view_of_a_table_with_a_sixth_mode_has_it() -> None:
    views = views_of(SIX)
    assert views.names[0] == "sketch" and set(views.names) == {m.name for m in SIX}
    assert views.specificity.index("council") < views.specificity.index("sketch")
    assert views.specificity.index("sketch") < views.specificity.index("study")
    assert views.default == "search"
    assert views.by_search_mode["SKETCH"] == "sketch"
    assert views.by_display_model["pplx_sketch"] == "sketch"
    assert views.by_step_type["SKETCH_ANSWER"] == "sketch"
    assert "sketch" in views.needs_blocks and "sketch" in views.agents
    assert views.ask_modes["sketch"] == "sketching"
    assert views.at_least("sketch") == {"computer", "council", "sketch"}


def test_the_real_table_gives_the_documented_views() -> None:
    """docs/dev/api.md §9: the five modes, their order of specificity and the mapped values."""
    views = mode_table.VIEWS
    assert views.names == ("search", "deep-research", "computer", "council", "study")
    assert views.specificity == ("computer", "council", "study", "deep-research", "search")
    assert views.by_search_mode["STUDIO"] == "search" and views.by_search_mode["ASI"] == "computer"
    assert views.plain_search_modes == {"SEARCH", "STUDIO"}
    assert list(views.ask_modes) == ["search", "deep-research", "council", "study"]
    assert views.agents == {"computer", "council"}


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "search"), ("search_modes", ("SEARCH",)), ("display_models", ("pplx_study",))],
)
def test_a_value_given_to_two_modes_is_refused(field: str, value: Any) -> None:
    twice = dataclasses.replace(SKETCH, **{field: value})
    with pytest.raises(ValueError, match="mode table"):
        views_of((*SIX, twice) if field != "name" else (*SIX[1:], twice))


def test_two_modes_of_one_rank_are_refused() -> None:
    with pytest.raises(ValueError, match="rank"):
        views_of((*SIX[1:], dataclasses.replace(SKETCH, rank=0)))


def _render(entry: dict[str, object], listing: ListingRow | None = None) -> tuple[str, str]:
    page = b.page([entry])
    inp = ThreadInput("t", (RawPage({}, page),), (RawPage({}, page),), listing=listing)
    result = render_thread(inp, b.CTX)
    return result.mode, result.dir_name


def test_the_classifier_and_the_folder_follow_the_table(six: mode_table.ModeViews) -> None:
    by_search_mode = b.entry("e1", 1, search_mode="SKETCH", blocks=[b.answer_block("a")])
    assert _render(by_search_mode)[0] == "sketch"
    assert _render(by_search_mode)[1].startswith("sketch/")
    by_model = b.entry(
        "e1", 1, search_mode=None, display_model="pplx_sketch", blocks=[b.answer_block("a")]
    )
    assert _render(by_model)[0] == "sketch"
    page = b.page([by_search_mode])
    assert needs_blocks((RawPage({}, page),), None)


def test_the_listing_filter_follows_the_table(six: mode_table.ModeViews) -> None:
    """A listed search-mode name or display model rules out the less specific modes only."""
    # a listed type other than a computer task's rules out computer
    assert listing_modes(ListingRow("t", mode="SKETCH")) == {"council", "sketch"}
    assert listing_modes(ListingRow("t", display_model="PPLX_SKETCH")) == {
        "computer",
        "council",
        "sketch",
    }


def test_the_ask_follows_the_table(six: mode_table.ModeViews) -> None:
    table = ModelTable((ModelRow("pplx_sketch", "Sketch", "sketching", "P"),), {}, ())
    assert resolve_models(table, "sketch", ()).model_preference == "pplx_sketch"
    assert mode_of_entry({"search_mode": "SKETCH"}) == "sketch"
    assert mode_of_entry({"search_mode": "ASI"}) is None  # computer is not offered


def test_the_mode_choices_follow_the_table(six: mode_table.ModeViews, tmp_path: Path) -> None:
    """``--mode`` of batch/search/ask and the MCP tools accept the sixth mode, name it among
    the choices, and still refuse a mode that is not in the table."""
    out = str(tmp_path / "a")
    assert check_mode("sketch") == "sketch"
    runs = {
        "batch": CliRunner().invoke(app, ["batch", "-o", out, "-m", "sketch", "-m", "bogus"]),
        "search": CliRunner().invoke(app, ["search", "-o", out, "q", "-m", "bogus"]),
        "ask": CliRunner().invoke(ask_app, ["ask", "q", "-o", out, "-m", "bogus"]),
    }
    for command, result in runs.items():
        said = " ".join(result.stderr.split())
        assert result.exit_code != 0, command
        assert "'bogus'" in said and "sketch" in said, (command, said)


def test_the_insights_keep_the_declared_order(six: mode_table.ModeViews) -> None:
    """The sketch is declared first: it takes the first colour though it used the least."""
    metas = [
        ThreadMeta(u, f"p{u}", "t", "2026-01-05T00:00:00Z", "", mode, "", "", 1, False, 0, False)
        for u, mode in (("a", "search"), ("b", "sketch"))
    ]
    html = insights_charts.credits(metas, {"a": 500, "b": 100}, insights_charts.Lists(metas))
    assert '<rect class="s0" width="10" height="10"/></svg> sketch' in html


@pytest.mark.parametrize("command", ["batch", "sync", "search", "ask"])
def test_the_help_lists_every_mode(command: str) -> None:
    """The help is written when the command is imported: from the real table."""
    views = mode_table.VIEWS
    names = views.ask_modes if command == "ask" else views.names
    result = CliRunner().invoke(ask_app if command == "ask" else app, [command, "--help"])
    assert ", ".join(names) in " ".join(result.stdout.split())


# --- no module outside the table spells out modes of its own ---------------------------------

# Where a collection of mode names or service mode values may appear, and why.
ALLOWED = {
    "pplx_archiver/core/thread/mode_table.py": "the table itself",
    "pplx_archiver/sim/": "the simulator plays the service: its own, independent truth",
    "pplx_archiver/core/ask/asking.py:PINNED_CONFIG": "a pinned copy of the service's config",
}
_VIEWS = mode_table.VIEWS
WORDS = frozenset(
    {*_VIEWS.names, *_VIEWS.by_search_mode, *_VIEWS.by_listing_type, *_VIEWS.by_display_model}
)


def _collections(tree: ast.AST, skip: frozenset[str]) -> Iterator[tuple[int, set[str]]]:
    """(line, mode words) of each literal tuple/list/set/dict naming two or more of them."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        targets: list[ast.expr] = [node.target] if isinstance(node, ast.AnnAssign) else []
        targets += node.targets if isinstance(node, ast.Assign) else []
        value = getattr(node, "value", None)
        if value is not None and any(isinstance(t, ast.Name) and t.id in skip for t in targets):
            skipped.update(id(n) for n in ast.walk(value))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = [*(k for k in node.keys if k is not None), *node.values]
        else:
            continue
        found = {i.value for i in items if isinstance(i, ast.Constant) and i.value in WORDS}
        if len(found) >= 2:
            yield node.lineno, found


def _allowed(rel: str) -> tuple[bool, frozenset[str]]:
    whole = any(rel == k or (k.endswith("/") and rel.startswith(k)) for k in ALLOWED)
    names = frozenset(k.split(":", 1)[1] for k in ALLOWED if k.startswith(rel + ":"))
    return whole, names


def test_the_scan_finds_a_list_of_modes() -> None:
    source = 'X = ("search", "study")\nY: dict = {"ASI": 1, "STUDY": 2}\nZ = ("search",)\n'
    assert [line for line, _ in _collections(ast.parse(source), frozenset())] == [1, 2]
    assert not list(_collections(ast.parse(source), frozenset({"X", "Y"})))


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
def test_no_module_outside_the_table_lists_modes() -> None:
    """A mode added to the table reaches every view; one spelt out elsewhere would not."""
    found = []
    files = [*sorted((ROOT / "pplx_archiver").rglob("*.py")), *(ROOT / "scripts").glob("*.py")]
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        whole, names = _allowed(rel)
        if whole:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{rel}:{line} {sorted(words)}" for line, words in _collections(tree, names)]
    assert not found, "modes listed outside core/thread/mode_table.py:\n" + "\n".join(found)
