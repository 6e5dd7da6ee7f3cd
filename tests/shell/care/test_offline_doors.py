"""`mcp` and `vault` never touch the network and never write into the archive (#42): their
modules import nothing of the network layer, and only the vault's file module writes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CARE = Path(__file__).resolve().parents[3] / "pplx_archiver" / "shell" / "care"
DOORS = (
    "catalog.py",
    "mcp_args.py",
    "mcp_reader.py",
    "mcp_server.py",
    "vault.py",
    "vault_files.py",
)
NETWORK = ("httpx", "socket", "urllib.request", "http.client", "pplx_archiver.shell.net")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("name", DOORS)
def test_no_network_import(name: str) -> None:
    bad = {n for n in _imports(CARE / name) if n.startswith(NETWORK)}
    assert not bad, f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("name", ["catalog.py", "mcp_reader.py", "mcp_server.py"])
def test_the_mcp_side_opens_the_archive_read_only(name: str) -> None:
    source = (CARE / name).read_text(encoding="utf-8")
    assert "writer_lock" not in source and ".writer" not in source
    if "Archive(" in source:
        assert "Archive(self.out, read_only=True)" in source
