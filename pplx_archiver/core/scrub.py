"""Signed-URL credentials scrubbed from response bytes before they are archived or rendered.

Asset URLs in thread payloads are CloudFront / S3 signed URLs whose query carries a signature,
a policy and key ids. They expire within minutes, so keeping them buys nothing, and they
must never reach the archive. :func:`scrub_signed_urls` masks the value of every such query
parameter in a JSON body (also when ``&`` is written ``\\u0026``) and keeps everything else
byte for byte, so the result is still the same JSON document with only those values changed.
"""

from __future__ import annotations

import re

MASK = b"REDACTED"

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
