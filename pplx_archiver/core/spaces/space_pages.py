"""The content of the space pages: ``spaces/<slug>.md`` per space and ``spaces/spaces.json``.

Pure and deterministic (nothing time-dependent; the same spaces and stored threads give the
same bytes). The shell lists the spaces, looks up each thread in the index and hands the
files to the archive's writer.
"""

from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from pplx_archiver.core.spaces.members import contributions, contributions_table
from pplx_archiver.core.thread.layout import normalize_timestamp_key, safe_component
from pplx_archiver.core.thread.markdown import bullet, fence, heading, md_table, single_line
from pplx_archiver.core.thread.model import ListingRow

SPACES_DIR = "spaces"
SPACES_JSON = "spaces.json"


@dataclasses.dataclass(frozen=True, slots=True)
class SpaceInfo:
    """One space as a run saw it: metadata, owner, members and the threads it lists."""

    uuid: str
    slug: str
    title: str
    emoji: str = ""
    description: str = ""
    instructions: str = ""
    user_permission: int | None = None
    owner: str | None = None
    members: tuple[str, ...] = ()
    rows: tuple[ListingRow, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class StoredThread:
    """What the index holds of a listed thread: its status and folder (None: not archived)."""

    status: str
    path: str | None


def page_names(spaces: Sequence[SpaceInfo]) -> dict[str, str]:
    """Space uuid → page file name (sanitized slug; uuid-qualified when two collide)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for space in sorted(spaces, key=lambda e: (e.slug, e.uuid)):
        base = safe_component(space.slug, fallback="space", max_len=100)
        name = f"{base}.md"
        if name.lower() in taken:
            name = f"{base}~{safe_component(space.uuid, max_len=40)}.md"
        taken.add(name.lower())
        names[space.uuid] = name
    return names


def _thread_records(space: SpaceInfo, stored: Mapping[str, StoredThread]) -> list[dict[str, Any]]:
    records = []
    for row in space.rows:
        known = stored.get(row.key)
        path = known.path if known is not None and known.status == "done" else None
        records.append(
            {
                "uuid": row.key,
                "title": row.title,
                "author": row.author,
                "updated_at": row.updated_at,
                "status": known.status if known is not None else "not archived",
                "path": path,
            }
        )
    records.sort(key=lambda r: (normalize_timestamp_key(r["updated_at"]), r["uuid"]))
    records.reverse()
    return records


def space_record(space: SpaceInfo, stored: Mapping[str, StoredThread], page: str) -> dict[str, Any]:
    """The ``spaces.json`` record of one space."""
    threads = _thread_records(space, stored)
    return {
        "uuid": space.uuid,
        "slug": space.slug,
        "title": space.title,
        "emoji": space.emoji,
        "description": space.description,
        "instructions": space.instructions,
        "owner": space.owner,
        "members": list(space.members),
        "user_permission": space.user_permission,
        "page": f"{SPACES_DIR}/{page}",
        "threads": threads,
        "contributors": contributions(space.members, threads),
    }


def _link(path: str | None) -> str:
    """A relative link from ``spaces/<page>.md`` to a thread folder's ``conversation.md``."""
    if not path:
        return ""
    target = "/".join(urllib.parse.quote(part, safe="") for part in path.split("/"))
    return f"[conversation](../{target}/conversation.md)"


def render_space_page(record: Mapping[str, Any]) -> str:
    """The Markdown index page of one space (deterministic for equal records)."""
    members = ", ".join(record["members"]) or "none listed"
    parts = [
        heading(1, record["title"] or record["slug"]),
        "\n",
        bullet(f"slug: {record['slug']}"),
        bullet(f"owner: {record['owner'] or 'unknown'}"),
        bullet(f"members: {members}"),
        bullet(f"threads: {len(record['threads'])}"),
    ]
    if record["description"]:
        parts += ["\n", heading(2, "Description"), "\n", single_line(record["description"]), "\n"]
    if record["instructions"]:
        parts += ["\n", heading(2, "Instructions"), "\n", fence(record["instructions"])]
    if record.get("contributors"):
        cells = contributions_table(record["contributors"])
        parts += ["\n", heading(2, "Contributors"), "\n"]
        parts.append(md_table(["member", "threads", "archived", "modes"], cells))
    parts += ["\n", heading(2, "Threads"), "\n"]
    if not record["threads"]:
        parts.append("No threads.\n")
    else:
        rows = [
            [t["title"] or t["uuid"], t["author"], t["updated_at"], t["status"], _link(t["path"])]
            for t in record["threads"]
        ]
        parts.append(md_table(["title", "author", "updated", "status", "archive"], rows))
    return "".join(parts)


def space_files(
    spaces: Sequence[SpaceInfo], stored: Mapping[str, StoredThread]
) -> dict[str, bytes]:
    """Every space page and ``spaces.json``, keyed by path under the archive root."""
    names = page_names(spaces)
    records = [
        space_record(space, stored, names[space.uuid])
        for space in sorted(spaces, key=lambda e: (e.slug, e.uuid))
    ]
    files = {record["page"]: render_space_page(record).encode() for record in records}
    doc = {"format": 1, "spaces": records}
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    files[f"{SPACES_DIR}/{SPACES_JSON}"] = data
    return files
