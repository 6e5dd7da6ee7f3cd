"""``index/terminal_states.jsonl``: the append-only log of terminal thread states.

Threads the service reported deleted, expired or not found, ``forgotten`` and ``returned``
lines; ``reindex`` reads it back to restore those states. Only the writer appends to it
(:meth:`~pplx_archiver.shell.archive.writer.ArchiveWriter.apply` of a terminal plan).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.files import INDEX_DIR
from pplx_archiver.shell.archive.index_schema import TERMINAL_STATUSES

TERMINAL_LOG = "terminal_states.jsonl"


def read_terminal_log(path: Path) -> dict[str, dict[str, Any]]:
    """Uuid → its latest terminal-state line (``forgotten`` lines remove the uuid)."""
    states: dict[str, dict[str, Any]] = {}
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return states
    for raw in data.splitlines():
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(line, dict) or not isinstance(line.get("uuid"), str):
            continue
        if line.get("state") in ("forgotten", "returned"):
            states.pop(line["uuid"], None)
        elif line.get("state") in TERMINAL_STATUSES:
            states[line["uuid"]] = line
    return states


def append_terminal(out: Path, uuid: str, state: str, **extra: Any) -> None:
    """Append one line to ``index/terminal_states.jsonl`` (the writer's; read by reindex)."""
    line = {"uuid": uuid, "state": state, **extra}
    path = Path(out) / INDEX_DIR / TERMINAL_LOG
    try:
        with open(path, "ab") as fh:
            fh.write(orjson.dumps(line, option=orjson.OPT_SORT_KEYS) + b"\n")
    except OSError as exc:
        raise StoreError(f"{path}: cannot append: {exc.strerror or exc}") from None
