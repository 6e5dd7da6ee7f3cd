"""Spaces: the space pages and the members whose threads a space holds."""

from __future__ import annotations

from pplx_archiver.core.spaces.members import (
    UNKNOWN_AUTHOR,
    contributions,
    contributions_table,
    member_folder,
)
from pplx_archiver.core.spaces.space_pages import (
    SPACES_DIR,
    SpaceInfo,
    StoredThread,
    render_space_page,
    space_files,
    space_record,
)

__all__ = [
    "SPACES_DIR",
    "UNKNOWN_AUTHOR",
    "SpaceInfo",
    "StoredThread",
    "contributions",
    "contributions_table",
    "member_folder",
    "render_space_page",
    "space_files",
    "space_record",
]
