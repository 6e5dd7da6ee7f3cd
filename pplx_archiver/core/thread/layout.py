"""Archive names: safe path components, title slugs, thread folder names, timestamp keys.

Every name derived from an API string goes through :func:`safe_component`: no path
separators, no ``..``, no control characters, no leading dots, no Windows device name (with
or without an extension: ``aux.txt`` becomes ``aux_.txt``), bounded length, never empty.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from pplx_archiver.core.thread import mode_table

MAX_COMPONENT = 80
MAX_SLUG = 60

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]+")
_SPACES = re.compile(r"[\s_]+")
_DASHES = re.compile(r"-{2,}")
_FRACTION = re.compile(r"(\.\d*?)0+(?=(Z|[+-]\d\d:?\d\d)?$)")
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)


def safe_component(name: str, *, fallback: str = "untitled", max_len: int = MAX_COMPONENT) -> str:
    """Turn any string into one safe, bounded file-name component."""
    text = unicodedata.normalize("NFC", name)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))
    text = _UNSAFE.sub("-", text)
    text = text.replace("..", "-").strip(" .-")
    text = _DASHES.sub("-", text)
    if len(text) > max_len:
        text = text[:max_len].rstrip(" .-")
    if not text or text.lower() in _WINDOWS_RESERVED:
        text = fallback
    stem, dot, rest = text.partition(".")
    if dot and stem.rstrip(" ").lower() in _WINDOWS_RESERVED:
        # Windows reserves the device names with any extension too: ``aux.txt``, ``con.md``
        text = f"{stem.rstrip(' ')}_.{rest}"[:max_len]
    return text


def title_slug(title: str, *, max_len: int = MAX_SLUG) -> str:
    """A lower-case, dash-separated slug of a title (letters of any script are kept)."""
    text = unicodedata.normalize("NFKC", title).lower()
    text = "".join(
        ch if (ch.isalnum() or ch in " -_") else " "
        for ch in text
        if unicodedata.category(ch)[0] != "C"
    )
    text = _SPACES.sub("-", text.strip())
    text = _DASHES.sub("-", text).strip("-")
    return safe_component(text, fallback="untitled", max_len=max_len)


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def is_uuid(text: str) -> bool:
    """True for a canonical 8-4-4-4-12 hexadecimal uuid."""
    return _UUID.fullmatch(text) is not None


def thread_key(address: str, candidates: Iterable[str]) -> str:
    """The id the archive files a thread under (index key, ``thread.json`` ``uuid``, folder
    suffix): the address when it is a uuid (today's slugs), else the first uuid among
    ``candidates`` (an older text slug: the thread's own uuid), else the address."""
    if is_uuid(address):
        return address
    return next((c for c in candidates if is_uuid(c)), address)


def uuid8(thread_uuid: str) -> str:
    """The short id used in folder names: the first 8 safe characters of the uuid."""
    cleaned = re.sub(r"[^0-9A-Za-z]", "", thread_uuid)
    return (cleaned[:8] or "noid").lower()


def thread_dir_name(mode: str, created_date: str, title: str, thread_uuid: str) -> str:
    """``<mode>/<YYYY-MM-DD>_<title-slug>_<uuid8>``; ``created_date`` is ``YYYY-MM-DD``."""
    date = created_date if re.fullmatch(r"\d{4}-\d{2}-\d{2}", created_date) else "0000-00-00"
    mode_part = safe_component(mode, fallback=mode_table.VIEWS.default)
    return f"{mode_part}/{date}_{title_slug(title)}_{uuid8(thread_uuid)}"


def normalize_timestamp_key(value: str | None) -> str:
    """Comparison key for update times: trailing zeros of fractional seconds stripped.

    ``2026-09-07T16:42:48.180330Z`` and ``2026-09-07T16:42:48.18033Z`` give the same key;
    a fraction of only zeros disappears with its dot.
    """
    if not value:
        return ""
    text = value.strip()
    text = _FRACTION.sub(lambda m: m.group(1), text)
    return text.replace(".Z", "Z").replace(".+", "+").rstrip(".")
