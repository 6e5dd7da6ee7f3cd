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
import functools
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


@functools.cache
def _package_graph() -> dict[str, set[str]]:
    return import_graph(PACKAGE)


def test_no_import_cycle() -> None:
    """No cycle in the package's import graph, lazy (function-local) imports included."""
    cycle = find_cycle(_package_graph())
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


# --------------------------------------------------------------------------- private names

# Underscore names of the standard library's public API (namedtuple, os, sys).
PUBLIC_UNDERSCORED = {"_asdict", "_replace", "_fields", "_make", "_exit", "_getframe"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORED


def _defined_here(tree: ast.Module) -> set[str]:
    """The underscore names a module defines: functions, classes, assigned names and
    attributes (``self._x = …``), class fields."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.alias) and node.asname:
            names.add(node.asname)
    return {n for n in names if _private(n)}


def private_uses(source: str) -> list[str]:
    """Uses of another module's private name: ``from x import _name`` and ``obj._name``
    where ``obj`` is not ``self``/``cls`` and this module does not define ``_name``."""
    tree = ast.parse(source)
    own = _defined_here(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"{node.lineno}: from {node.module} import {a.name}"
                      for a in node.names if _private(a.name)]  # fmt: skip
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=_rel)
def test_no_private_name_of_another_module(path: Path) -> None:
    """A module uses no other module's ``_name``: what is shared gets a public name."""
    found = private_uses(path.read_text(encoding="utf-8"))
    assert not found, f"{_rel(path)} uses private names of other modules: {found}"


def test_private_use_checker_sees_imports_and_attributes() -> None:
    """Imports of ``_names`` and ``obj._attr`` are found; ``self._x``, a module's own
    ``_x`` and dunders are not."""
    src = (
        "from m import _p, q\nimport n\n"
        "class C:\n    def __init__(self):\n        self._mine = 1\n"
        "    def f(self, other):\n"
        "        return self._x, other._mine, n._db, other.__class__, t._replace(a=1)\n"
        "def g(index):\n    return index._db\n"
    )
    found = private_uses(src)
    assert found == ["1: from m import _p", "7: n._db", "9: index._db"]


# --------------------------------------------------------------------------- typed options


def _options_name(name: str) -> bool:
    return name in ("opts", "options") or name.endswith("_options")


def untyped_options(source: str) -> list[str]:
    """``getattr(opts, …)`` on an options object, and parameters named like options
    (``opts``, ``options``, ``*_options``) typed ``Any`` or not typed at all."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            first = node.args[0] if node.func.id == "getattr" and node.args else None
            if isinstance(first, ast.Name) and "opt" in first.id.lower():
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.arg) and _options_name(node.arg):
            typed = ast.unparse(node.annotation) if node.annotation is not None else None
            if typed in (None, "Any", "object"):
                found.append(
                    f"{node.lineno}: {node.arg} " + (f"typed {typed}" if typed else "untyped")
                )
    return sorted(found, key=lambda line: int(line.split(":")[0]))


@pytest.mark.parametrize("path", sorted(SHELL.rglob("*.py")), ids=_rel)
def test_the_shell_takes_typed_options(path: Path) -> None:
    """The shell reads no option by name from an untyped object and imports nothing of the
    CLI: the CLI builds the shell's typed options (``RunOptions``, ``Settings``)."""
    source = path.read_text(encoding="utf-8")
    found = untyped_options(source)
    assert not found, f"{_rel(path)} takes untyped options: {found}"
    graph_deps = _package_graph()[module_name(PACKAGE, path)]
    cli = sorted(d for d in graph_deps if d.startswith("pplx_archiver.cli"))
    assert not cli, f"{_rel(path)} imports the CLI: {cli}"


def test_options_checker_sees_getattr_and_any() -> None:
    """``getattr(opts, …)``, an ``opts: Any`` and an untyped ``options`` are found; a typed
    ``options: RunOptions`` is not."""
    src = (
        "def f(settings, opts: Any):\n    return getattr(opts, 'dry_run', False)\n"
        "def g(options):\n    pass\n"
        "def h(options: RunOptions, run_options: Any = None):\n    pass\n"
    )
    assert untyped_options(src) == [
        "1: opts typed Any",
        "2: getattr(opts, 'dry_run', False)",
        "3: options untyped",
        "5: run_options typed Any",
    ]
