"""The render core stays pure: no module under core/ imports I/O, clock or async libraries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "pplx_archiver" / "core"
FORBIDDEN = {
    "httpx",
    "anyio",
    "asyncio",
    "aiofiles",
    "structlog",
    "os",
    "time",
    "pathlib",
    "socket",
    "subprocess",
    "shutil",
    "tempfile",
    "sqlite3",
    "threading",
    "random",
    "datetime_now",
}


def _imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
            if node.module.startswith("pplx_archiver.") and node.module.split(".")[1] in {
                "shell",
                "sim",
                "cli",
                "logconfig",
                "settings",
            }:
                roots.add(node.module)
    return roots


def _core_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_core_exists() -> None:
    """The core package is present, so the purity check below checks something."""
    assert (CORE / "__init__.py").exists()


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: p.name)
def test_core_module_is_pure(path: Path) -> None:
    """A core module imports none of the I/O libraries nor the shell, simulator or CLI."""
    roots = _imported_roots(path.read_text(encoding="utf-8"))
    bad = {r for r in roots if r in FORBIDDEN or r.startswith("pplx_archiver.")}
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_checker_catches_a_forbidden_import() -> None:
    """The import scanner itself sees plain, dotted and from-imports."""
    src = (
        "import os\nfrom time import monotonic\nimport httpx.x\nfrom pplx_archiver.shell import s\n"
    )
    roots = _imported_roots(src)
    assert {"os", "time", "httpx", "pplx_archiver.shell"} <= roots
