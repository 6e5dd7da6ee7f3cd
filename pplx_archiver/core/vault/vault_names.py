"""File names of a notes vault that are valid on Windows, macOS and Linux (pure).

A name keeps the title's letters (any script) and drops what one of the three file systems
refuses or a wikilink cannot hold: ``< > : " / \\ | ? *``, ``# ^ [ ]``, control characters,
leading and trailing dots and spaces. A Windows device name (``CON``, ``aux``, ``aux.txt``,
``COM1`` …) gets a ``_`` in front; a long title is cut at a word boundary to
:data:`MAX_STEM` characters (and at most 180 UTF-8 bytes). Names are told apart ignoring
case (as macOS and Windows do): :func:`unique_names` gives each key its own.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

MAX_STEM = 80
MAX_STEM_BYTES = 180
_BAD = re.compile(r'[<>:"/\\|?*#^\[\]\x00-\x1f\x7f]+')
_SPACES = re.compile(r"\s+")
_DEVICES = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
_DEVICES |= {f"{kind}{n}" for kind in ("COM", "LPT") for n in "123456789¹²³"}


def is_reserved(stem: str) -> bool:
    """Whether Windows treats the name as a device (``aux`` and ``aux.txt`` alike)."""
    head = stem.split(".", 1)[0].strip().upper()
    return head in _DEVICES


def safe_stem(text: str, fallback: str = "untitled", suffix: str = "") -> str:
    """A file name stem for ``text`` followed by ``suffix`` (kept whole when the text is
    cut; no extension), safe on every common file system."""
    clean = unicodedata.normalize("NFC", text)
    clean = _SPACES.sub(" ", _BAD.sub(" ", clean)).strip().strip(".").strip()
    if not clean:
        clean = fallback
    chars, size = MAX_STEM - len(suffix), MAX_STEM_BYTES - len(suffix.encode("utf-8"))
    if len(clean) > chars or len(clean.encode("utf-8")) > size:
        clean = _cut(clean, chars, size, fallback)
    if is_reserved(clean + suffix):
        clean = "_" + clean
    return clean + suffix


def _cut(text: str, chars: int, size: int, fallback: str) -> str:
    cut = text[:chars]
    while len(cut.encode("utf-8")) > size:
        cut = cut[:-1]
    space = cut.rfind(" ")
    if space > chars // 2:
        cut = cut[:space]
    return cut.rstrip(" .") or fallback


def unique_names(wanted: Mapping[str, str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Each key's stem, unique ignoring case: a later key (in sorted order) whose stem is
    taken gets `` (2)``, `` (3)`` … Stems in ``taken`` are never given."""
    used = {t.casefold() for t in taken}
    out: dict[str, str] = {}
    for key in sorted(wanted):
        stem = wanted[key]
        name, n = stem, 1
        while name.casefold() in used:
            n += 1
            name = f"{stem} ({n})"
        used.add(name.casefold())
        out[key] = name
    return out
