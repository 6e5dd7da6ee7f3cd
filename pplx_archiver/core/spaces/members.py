"""People of a space: the account folder of another member's threads, and who wrote what.

:func:`member_folder` turns an author's user name (untrusted text from the server) into the
account folder their threads are archived under. It goes through
:func:`~pplx_archiver.core.thread.layout.safe_component` (no separators, no ``..``, no control or
format characters, no leading dots, Windows device names replaced, at most 80 characters)
and then keeps the folder apart from the archive's own top-level folders (``index``,
``spaces``, ``relations``, ``site``) and from the archiving account's own folder: a user
named ``Index`` or ``simuser.`` (which would sanitize onto ``simuser``) gets a folder of
their own, ``<name>~<8 hex of the name>``. The same name always gives the same folder.

:func:`contributions` sums a space's thread records up per member.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pplx_archiver.core.thread.layout import safe_component

UNKNOWN_AUTHOR = "unknown-author"
MAX_MEMBER = 80
# Top-level folders of an archive that are not account folders.
ROOT_FOLDERS = frozenset({"index", "spaces", "relations", "site"})


def _tag(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def member_folder(author: str, *, own: str | None = None) -> str:
    """The account folder of ``author``'s threads (``own``: the archiving account's folder)."""
    folder = safe_component(author, fallback=UNKNOWN_AUTHOR, max_len=MAX_MEMBER)
    clash = folder.casefold() in ROOT_FOLDERS or (
        own is not None and folder.casefold() == own.casefold()
    )
    if not clash:
        return folder
    return f"{folder[: MAX_MEMBER - 9].rstrip(' .-')}~{_tag(author)}"


def contributions(
    members: Sequence[str], threads: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Per member: ``{member, threads, archived, modes}``, the listed members first.

    Every listed member appears (with 0 threads when they wrote none); authors of threads who
    are not listed as members follow, by name. ``modes`` counts the archived threads per
    mode (the second part of their archive path).
    """
    order = list(dict.fromkeys(members))
    rows: dict[str, dict[str, Any]] = {
        m: {"member": m, "threads": 0, "archived": 0, "modes": {}} for m in order
    }
    for thread in threads:
        author = thread.get("author") or UNKNOWN_AUTHOR
        row = rows.setdefault(author, {"member": author, "threads": 0, "archived": 0, "modes": {}})
        row["threads"] += 1
        path = thread.get("path")
        if isinstance(path, str) and path.count("/") >= 2:
            row["archived"] += 1
            mode = path.split("/")[1]
            row["modes"][mode] = row["modes"].get(mode, 0) + 1
    extra = sorted(name for name in rows if name not in order)
    out = [rows[name] for name in [*order, *extra]]
    for row in out:
        row["modes"] = dict(sorted(row["modes"].items()))
    return out


def contributions_table(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Table cells (member, threads, archived, modes) for a space page."""
    return [
        [
            str(row["member"]),
            str(row["threads"]),
            str(row["archived"]),
            ", ".join(f"{mode} {n}" for mode, n in row["modes"].items()),
        ]
        for row in rows
    ]
