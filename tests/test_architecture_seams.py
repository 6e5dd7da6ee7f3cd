"""The seams between modules: typed options into the shell, no import cycle, no private name
used across modules.

- The shell takes typed dataclasses (``RunOptions``, ``Settings``…): no ``getattr(opts, …)``,
  no options parameter typed ``Any``, nothing imported from the CLI.
- The package's import graph — top-level and function-local imports, relative ones resolved;
  only ``if TYPE_CHECKING:`` blocks left out, for they never run — has no cycle.
- A name starting with ``_`` is its module's own: no ``from x import _name`` and no
  ``obj._name`` outside the module that defines ``_name`` (``self._x`` and ``cls._x`` are fine).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pplx_archiver"
SHELL = PACKAGE / "shell"


# --------------------------------------------------------------------------- the import graph


def module_name(root: Path, path: Path) -> str:
    """``pplx_archiver/shell/run/runner.py`` → ``pplx_archiver.shell.run.runner``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The nodes inside ``if TYPE_CHECKING:`` blocks (imports there never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def _imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: top-level, in functions, in classes."""
    skipped = _type_checking_only(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
            yield node


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from … import`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports (a ``from pkg import name`` names the
    module ``pkg.name`` when there is one, else ``pkg``)."""
    paths = {module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        deps: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in paths)
                continue
            base = _base(module, path.name == "__init__.py", node)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in paths:
                    deps.add(full)
                elif base in paths:
                    deps.add(base)
        deps.discard(module)
        graph[module] = deps
    return graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, …, a]``, or None (depth-first, iterative)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path: list[str] = [start]
        pending: list[Iterator[str]] = [iter(sorted(graph[start]))]
        state[start] = 1
        while pending:
            nxt = next(pending[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                pending.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in state and nxt in graph:
                state[nxt] = 1
                path.append(nxt)
                pending.append(iter(sorted(graph[nxt])))
    return None


def test_no_import_cycle() -> None:
    """No cycle in the package's import graph, lazy (function-local) imports included."""
    cycle = find_cycle(import_graph(PACKAGE))
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_the_cycle_finder_finds_a_planted_cycle(tmp_path: Path) -> None:
    """A cycle closed by a function-local, relative import is found and named; the same
    import under ``if TYPE_CHECKING:`` is none."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("import pkg.c\n")
    (pkg / "c.py").write_text("def late():\n    from .a import thing\n    return thing\n")
    assert import_graph(pkg)["pkg.c"] == {"pkg.a"}
    assert find_cycle(import_graph(pkg)) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import thing\n"
    )
    assert find_cycle(import_graph(pkg)) is None
