"""The vault's files: asset names; no path leaves the vault or enters the archive (#42)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.care.vault import _file_name
from pplx_archiver.shell.care.vault_files import VaultFiles


def test_asset_file_names_keep_their_extension() -> None:
    assert _file_name("assets/report.v2.md") == "report.v2.md"
    long = _file_name("assets/" + "chart " * 40 + ".png")
    assert long.endswith(".png") and len(long) <= 84
    assert _file_name("assets/aux.txt") == "_aux.txt"
    assert _file_name("assets/noext") == "noext"


def test_no_file_is_written_outside_the_vault_or_into_the_archive(tmp_path: Path) -> None:
    archive = tmp_path / "vault" / "archive"  # an archive inside the vault: allowed, untouched
    archive.mkdir(parents=True)
    files = VaultFiles((tmp_path / "vault").resolve(), archive)
    for rel in ("../escape.md", "archive/note.md"):
        with pytest.raises(StoreError):
            files.put(rel, b"x")
    assert files.put("Notes/a.md", b"x") and not files.put("Notes/a.md", b"x")
    assert (files.written, files.unchanged) == (1, 1)
    assert list(archive.iterdir()) == [] and not (tmp_path / "escape.md").exists()
