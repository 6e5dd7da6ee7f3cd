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

_PARAM = re.compile(
    rb"(?i)((?:[?&]|\\u0026)"
    rb"(?:Signature|Policy|Key-Pair-Id|AWSAccessKeyId|X-Amz-Signature|X-Amz-Credential|"
    rb"X-Amz-Security-Token)=)"
    rb"[^&\"\\\s#<>']+"
)


# Every parameter name above, lower-cased with its "=": a body holding none of them cannot
# match, and finding that with ``in`` on a lower-cased copy is far cheaper than the regex.
_NAMES = (
    b"signature=",
    b"policy=",
    b"key-pair-id=",
    b"awsaccesskeyid=",
    b"x-amz-credential=",
    b"x-amz-security-token=",
)


def scrub_signed_urls(body: bytes) -> bytes:
    """``body`` with the values of signed-URL credential parameters masked (same bytes if none)."""
    if b"=" not in body:
        return body
    lowered = body.lower()
    if not any(name in lowered for name in _NAMES):
        return body
    return _PARAM.sub(lambda m: m.group(1) + MASK, body)
