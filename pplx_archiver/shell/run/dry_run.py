"""The archive a ``batch``/``sync``/``export --dry-run`` decides against, without writing.

A dry run lists the account and prints what a run would fetch; it writes nothing into the
archive: no index, no log, no run row. It reads an existing index read-only (so
an archive the user cannot write will do); where there is no archive yet, every listed thread
is new, and the decisions are made against an empty index in a scratch folder outside the
archive, removed when the run closes it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pplx_archiver.shell.archive.store import INDEX_DIR, Archive


class _ScratchArchive(Archive):
    """An empty archive in a temporary folder, removed on close."""

    def __init__(self) -> None:
        self._scratch = tempfile.TemporaryDirectory(prefix="pplx-dry-run-")
        super().__init__(Path(self._scratch.name))

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._scratch.cleanup()


def dry_run_archive(out: Path) -> Archive:
    """The archive at ``out`` opened read-only, or an empty scratch one when none exists."""
    if (Path(out) / INDEX_DIR / "archive.sqlite").is_file():
        return Archive(out, read_only=True)
    return _ScratchArchive()
