"""The files of a notes vault: where they go, reading them, writing only what changed.

The vault is the user's folder, outside the archive: :func:`check_vault` refuses a ``--to``
that is a file, the archive itself or a folder inside it, and :class:`VaultFiles` refuses
again any path that would resolve into the archive. A file is written (atomically: a
temporary file in the same folder, then a rename) only when its bytes change, so an
unchanged note keeps its modification time.
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

from pplx_archiver.errors import ConfigError, StoreError

STATE_DIRS = {".obsidian", ".logseq", ".trash", ".git", "logseq"}
_UUID_PROP = re.compile(r"^pplx_uuid::? \"?([0-9A-Za-z-]+)\"?\s*$", re.MULTILINE)


@dataclasses.dataclass(frozen=True, slots=True)
class Layout:
    """Where each kind of vault file goes (relative to the vault)."""

    threads: str
    spaces: str
    sources: str
    reports: str
    assets: str

    @classmethod
    def of(cls, flavor: str) -> Layout:
        if flavor == "logseq":
            return cls("pages", "pages", "pages", "pages", "assets/pplx")
        root = "Perplexity"
        return cls(
            f"{root}/Threads", f"{root}/Spaces", f"{root}/Sources", f"{root}/Reports",
            f"{root}/Assets",
        )  # fmt: skip


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_vault(vault: Path, archive: Path) -> Path:
    """The vault folder, resolved; a ConfigError (one line) when it cannot be one."""
    target = vault.expanduser().resolve()
    root = archive.expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise ConfigError(f"--to {vault}: is a file, not a vault folder")
    if target == root:
        raise ConfigError(f"--to {vault}: is the archive itself; give a folder outside it")
    if _inside(target, root):
        raise ConfigError(
            f"--to {vault}: is inside the archive {archive}; give a folder outside it"
        )
    if (target / "index" / "archive.sqlite").is_file():
        raise ConfigError(f"--to {vault}: is an archive, not a vault folder")
    return target


class VaultFiles:
    """Reads and writes the vault's files; counts what it wrote."""

    def __init__(self, vault: Path, archive: Path) -> None:
        self.vault = vault
        self.archive = archive.resolve()
        self.written = 0
        self.unchanged = 0

    def path(self, rel: str) -> Path:
        target = (self.vault / rel).resolve()
        if not _inside(target, self.vault) or _inside(target, self.archive):
            raise StoreError(f"{rel}: outside the vault or inside the archive; not written")
        return target

    def read(self, rel: str) -> bytes | None:
        try:
            return self.path(rel).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def put(self, rel: str, data: bytes) -> bool:
        """Write ``data`` at ``rel`` unless it already holds exactly that; True if written."""
        target = self.path(rel)
        try:
            if target.read_bytes() == data:
                self.unchanged += 1
                return False
        except (FileNotFoundError, NotADirectoryError):
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.tmp-{secrets.token_hex(4)}"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
            tmp.replace(target)
        except OSError:
            tmp.unlink(missing_ok=True)
            raise
        self.written += 1
        return True

    def notes(self, folder: str) -> Iterator[tuple[str, str]]:
        """(path relative to the vault, thread uuid) of every note under ``folder`` (the
        whole vault for ``""``) whose properties carry a ``pplx_uuid``."""
        base = self.vault / folder if folder else self.vault
        if not base.is_dir():
            return
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in STATE_DIRS)
            for name in sorted(filenames):
                if not name.endswith(".md"):
                    continue
                full = Path(dirpath) / name
                try:
                    with open(full, "rb") as fh:
                        head = fh.read(4096).decode("utf-8", "replace")
                except OSError:
                    continue
                found = _UUID_PROP.search(head)
                if found:
                    yield full.relative_to(self.vault).as_posix(), found.group(1)
