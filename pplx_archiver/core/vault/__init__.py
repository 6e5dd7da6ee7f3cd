"""The notes vault: notes made from archived threads and file names valid on every OS."""

from __future__ import annotations

from pplx_archiver.core.vault.vault import (
    BEGIN,
    END,
    FLAVORS,
    Link,
    NoteInput,
    body,
    footnoted,
    listing_body,
    merge,
    parse_turn,
    properties,
)
from pplx_archiver.core.vault.vault_names import MAX_STEM, is_reserved, safe_stem, unique_names

__all__ = [
    "BEGIN",
    "END",
    "FLAVORS",
    "MAX_STEM",
    "Link",
    "NoteInput",
    "body",
    "footnoted",
    "is_reserved",
    "listing_body",
    "merge",
    "parse_turn",
    "properties",
    "safe_stem",
    "unique_names",
]
