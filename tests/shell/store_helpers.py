"""Hand-built render results and raw files for the store tests (no render core needed)."""

from __future__ import annotations

from typing import Any

from pplx_archiver.core.thread.layout import thread_dir_name
from pplx_archiver.core.thread.model import RenderResult
from pplx_archiver.core.thread.rawfile import encode_raw_pages
from pplx_archiver.shell.archive.store import dump_record


def raw(*bodies: bytes) -> bytes:
    """A raw file with one GET page per body."""
    return encode_raw_pages([({"method": "GET", "path": "/rest/thread/x"}, b) for b in bodies])


def result(
    uuid: str = "0a1b2c3d-0000-4000-8000-000000000001",
    *,
    title: str = "A thread",
    mode: str = "search",
    turns: int = 2,
    answer: str = "answer",
    variants: tuple[dict[str, Any], ...] = (),
) -> RenderResult:
    """A RenderResult with ``turns`` turn files and a thread.json carrying a completeness record."""
    record: dict[str, Any] = {
        "uuid": uuid,
        "title": title,
        "mode": mode,
        "created": "2026-07-20T10:00:00Z",
        "last_updated": "2026-07-21T10:00:00.120000Z",
        "exported_at": "2026-08-01T00:00:00Z",
        "completeness": {"plain_pages": 1, "cursor_chain": [], "complete": True},
        "counts": {"turns": turns},
    }
    files = {
        "conversation.md": f"# {title}\n\n{answer}\n".encode(),
        "sources.json": b"[]\n",
        "sources.md": b"# Sources\n",
        "thread.json": dump_record(record),
    }
    for i in range(1, turns + 1):
        files[f"turns/turn_{i:04d}.md"] = f"## Turn {i}\n\n{answer}\n".encode()
    return RenderResult(
        thread_uuid=uuid,
        mode=mode,
        title=title,
        dir_name=thread_dir_name(mode, "2026-07-20", title, uuid),
        files=files,
        record=record,
        variants=variants,
    )
