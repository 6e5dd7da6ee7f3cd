"""Timestamps of every format the API uses, parsed to integer microseconds since the epoch.

Formats seen (docs/dev/api.md §4): naive ISO with microseconds (UTC implied),
ISO with ``+00:00`` or ``Z``, fractions that lost trailing zeros, epoch seconds as a
string (asset ``created_at``), integer microseconds (``created_us``), empty strings for
unset times. Everything is built with ``datetime`` constructors only; no clock is read.
"""

from __future__ import annotations

import datetime as dt
import re

from pplx_archiver.core.thread.node import Node
from pplx_archiver.errors import PayloadError

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ONE_US = dt.timedelta(microseconds=1)
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,12}))?)?)?"
    r"\s*(Z|z|[+-]\d{2}:?\d{2}|UTC)?"
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_ts(value: object, path: str = "$") -> int | None:
    """Microseconds since the epoch (UTC) for any supported timestamp; None for empty.

    Integers and numeric strings are read by magnitude: below 1e11 seconds, below 1e14
    milliseconds, else microseconds. Anything unreadable raises a PayloadError at ``path``.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise PayloadError(path, "expected a timestamp, got boolean")
    if isinstance(value, (int, float)):
        return _from_number(float(value) if isinstance(value, float) else value, path)
    if not isinstance(value, str):
        raise PayloadError(path, f"expected a timestamp, got {type(value).__name__}")
    cached = _CACHE.get(value)
    if cached is not None:
        return cached
    result = _parse_text(value, path)
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[value] = result
    return result


_CACHE: dict[str, int | None] = {}
_CACHE_MAX = 65536


def _parse_text(value: str, path: str) -> int | None:
    text = value.strip()
    if not text:
        return None
    if _NUMBER.fullmatch(text):
        return _from_number(float(text) if "." in text else int(text), path)
    match = _ISO.fullmatch(text)
    if match is None:
        raise PayloadError(path, f"unreadable timestamp {value[:40]!r}")
    year, month, day, hour, minute, second, frac, zone = match.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    tz = _zone(zone, path, value)
    try:
        moment = dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micro,
            tzinfo=tz,
        )
    except ValueError as exc:
        raise PayloadError(path, f"impossible timestamp {value[:40]!r}: {exc}") from None
    return (moment - _EPOCH) // _ONE_US


def _zone(zone: str | None, path: str, value: str) -> dt.tzinfo:
    if zone is None or zone in ("Z", "z", "UTC"):
        return dt.UTC
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:])
    if hours > 23 or minutes > 59:
        raise PayloadError(path, f"bad UTC offset in {value[:40]!r}")
    return dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))


def _from_number(number: int | float, path: str) -> int:
    magnitude = abs(number)
    if magnitude != magnitude or magnitude == float("inf"):  # NaN or infinite
        raise PayloadError(path, f"timestamp {number!r} out of range")
    if magnitude < 1e11:
        micros = number * 1_000_000
    elif magnitude < 1e14:
        micros = number * 1_000
    else:
        micros = number
    result = int(micros)
    if not -62_135_596_800_000_000 <= result <= 253_402_300_799_999_999:
        raise PayloadError(path, f"timestamp {number!r} out of range")
    return result


def node_ts(node: Node, key: str) -> int | None:
    """Parse the timestamp under ``key`` of an object node (None when absent/empty)."""
    value = node.raw(key)
    if value is None or value == "":
        return None
    if isinstance(value, str):
        cached = _CACHE.get(value)
        if cached is not None:
            return cached
    try:
        return parse_ts(value, "")
    except PayloadError as exc:
        where = f"{node.path}.{key}" if node.path != "$" else key
        raise PayloadError(where, exc.message) from None


def iso(us: int | None) -> str:
    """Canonical ISO-8601 UTC text of a microsecond timestamp: ``2026-07-20T08:02:10.101512Z``."""
    if us is None:
        return ""
    m = _EPOCH + dt.timedelta(microseconds=us)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{m.microsecond:06d}Z"
    )


def iso_seconds(us: int | None) -> str:
    """ISO-8601 UTC text at second precision: ``2026-07-20T08:02:10Z`` ('' for None)."""
    if us is None:
        return ""
    m = _EPOCH + dt.timedelta(microseconds=us)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def date_of(us: int | None) -> str:
    """The UTC calendar date ``YYYY-MM-DD`` of a timestamp ('' for None)."""
    if us is None:
        return ""
    m = _EPOCH + dt.timedelta(microseconds=us)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}"
