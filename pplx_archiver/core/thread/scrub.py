"""Signed-URL credentials scrubbed from response bytes before they are archived or rendered.

Asset URLs in thread payloads are CloudFront / S3 signed URLs whose query carries a signature,
a policy and key ids. They expire within minutes, so keeping them buys nothing, and they
must never reach the archive. :func:`scrub_signed_urls` masks the value of every such query
parameter in a JSON body (also when ``&`` is written ``\\u0026``) and keeps everything else
byte for byte, so the result is still the same JSON document with only those values changed.

:func:`signed_urls` goes the other way for the downloads: from the bodies as received, each
URL holding a credential by the text its scrubbed copy decodes to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import orjson

MASK = b"REDACTED"
MASK_TEXT = MASK.decode("ascii")

# Every credential parameter name, lower-cased with its "=" (matched in any case), after
# ``?``, ``&`` or ``\u0026``; its value runs to the next ``&``, quote, backslash, white
# space, ``#``, ``<`` or ``>`` (the tests hold the equivalent regex).
_NAMES = (
    b"signature=",
    b"policy=",
    b"key-pair-id=",
    b"awsaccesskeyid=",
    b"x-amz-signature=",
    b"x-amz-credential=",
    b"x-amz-security-token=",
)


_VALUE = re.compile(rb"[^&\"\\\s#<>']+")  # a parameter value
_ESCAPED_AMP = b"\\u0026"  # ``&`` as a JSON string escape (lower-cased)


def scrub_signed_urls(body: bytes) -> bytes:
    """``body`` with the values of signed-URL credential parameters masked (same bytes if none).

    Every parameter name ends with ``=``: a body with few of them (a page of text and
    sources) is read at each ``=``, one with many by ``bytes.find`` of each name on a
    lower-cased copy. Both find the same matches, left to right, never overlapping: the
    result of the case-insensitive regex the tests hold, which over a whole page body costs
    several times more.
    """
    equals = body.count(b"=")
    if not equals:
        return body
    if equals * _BYTES_PER_EQUALS < len(body):
        return _masked(body, _spans_at_equals(body))
    return _masked(body, _spans_by_name(body))


# Reading at each "=" costs about what a thousand bytes cost the search by name.
_BYTES_PER_EQUALS = 1000
_REACH = max(len(name) for name in _NAMES) + len(_ESCAPED_AMP)  # a name and its prefix


def _spans_at_equals(body: bytes) -> list[tuple[int, int, int]]:
    """(match start, value start, value end) of every parameter, found at each ``=``."""
    spans: list[tuple[int, int, int]] = []
    equals = body.find(b"=")
    while equals != -1:
        low = max(0, equals + 1 - _REACH)
        window = body[low : equals + 1].lower()
        for name in _NAMES:
            if window.endswith(name):
                start = _prefix_start(window, equals + 1 - len(name) - low)
                value = _VALUE.match(body, equals + 1) if start is not None else None
                if start is not None and value is not None:
                    spans.append((low + start, value.start(), value.end()))
        equals = body.find(b"=", equals + 1)
    return spans


def _spans_by_name(body: bytes) -> list[tuple[int, int, int]]:
    """The same spans, found with ``bytes.find`` of each name on a lower-cased copy."""
    lowered = body.lower()
    spans: list[tuple[int, int, int]] = []
    for name in _NAMES:
        at = lowered.find(name)
        while at != -1:
            start = _prefix_start(lowered, at)
            value = _VALUE.match(body, at + len(name)) if start is not None else None
            if start is not None and value is not None:
                spans.append((start, value.start(), value.end()))
            at = lowered.find(name, at + 1)
    return spans


def _masked(body: bytes, spans: list[tuple[int, int, int]]) -> bytes:
    """``body`` with each span's value masked, left to right (``body`` itself if none)."""
    if not spans:
        return body
    pieces: list[bytes] = []
    last = 0
    for start, value_start, value_end in sorted(spans):
        if start < last:
            continue  # inside the value of an earlier match
        pieces += (body[last:value_start], MASK)
        last = value_end
    pieces.append(body[last:])
    return b"".join(pieces)


def _prefix_start(lowered: bytes, at: int) -> int | None:
    """Where the ``?``/``&``/``\\u0026`` before the parameter name at ``at`` starts, or None."""
    if at >= 1 and lowered[at - 1] in b"?&":
        return at - 1
    if at >= len(_ESCAPED_AMP) and lowered[at - len(_ESCAPED_AMP) : at] == _ESCAPED_AMP:
        return at - len(_ESCAPED_AMP)
    return None


# -- the other way: each masked URL's credentials as received ------------------------------


def _string_text(escaped: bytes, levels: int) -> str | None:
    """The text of a JSON string's bytes, read ``levels`` times (2: a string inside a JSON
    text embedded in a string); None when they do not read as one."""
    text = escaped
    try:
        for _ in range(levels):
            value = orjson.loads(b'"' + text + b'"')
            text = value.encode("utf-8")
    except (orjson.JSONDecodeError, UnicodeEncodeError):
        return None
    return str(value)


def signed_urls(bodies: Sequence[bytes]) -> dict[str, str | None]:
    """Every URL of ``bodies`` (as received) that holds a credential, by its masked text:
    the text the scrubbed body decodes to, mapped to the text as received (None when the
    same masked text stands for URLs with different credentials).

    A URL is read as the whole JSON string around each credential value; one written with
    another escape, or one that is not the whole string, is not in the table.
    """
    found: dict[str, str | None] = {}
    for body in bodies:
        seen: set[int] = set()
        for _start, value_start, value_end in _spans(body):
            opening = body.rfind(b'"', 0, value_start)
            closing = body.find(b'"', value_end)
            if opening < 0 or closing < 0 or opening in seen:
                continue
            seen.add(opening)
            escaped = body[opening + 1 : closing]
            trimmed = escaped.rstrip(b"\\")
            levels = 1 + _backslashes_before(body, opening)
            # both quotes of one string are escaped alike (none, or once in embedded JSON)
            if levels > 2 or levels - 1 != len(escaped) - len(trimmed):
                continue
            text = _string_text(trimmed, levels)
            key = _string_text(_masked(trimmed, _spans(trimmed)), levels)
            if text is None or key is None:
                continue
            if found.setdefault(key, text) != text:
                found[key] = None
    return found


def _backslashes_before(body: bytes, at: int) -> int:
    start = at
    while start > 0 and body[start - 1] == 0x5C:  # "\\"
        start -= 1
    return at - start


def _spans(body: bytes) -> list[tuple[int, int, int]]:
    """The credential spans of ``body``, found the way :func:`scrub_signed_urls` finds them."""
    equals = body.count(b"=")
    if not equals:
        return []
    if equals * _BYTES_PER_EQUALS < len(body):
        return _spans_at_equals(body)
    return _spans_by_name(body)
