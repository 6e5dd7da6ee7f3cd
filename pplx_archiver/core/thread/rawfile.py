"""The raw page files of a thread (``raw_entries.json``, ``raw_blocks.json``): encode and decode.

A raw file is ``{"format":1,"pages":[{"request":{...},"body":<body>}, …]}`` where each
``<body>`` is the response body exactly as received: its bytes are spliced into the file,
never decoded and re-encoded, so the archive holds what the server sent. The request dict
names what was asked (``method``, ``path``, ``params`` as a list of pairs) and never holds
cookies, headers or tokens; :func:`encode_raw_pages` refuses such keys.

Pure: bytes in, bytes or values out. Errors are :class:`~pplx_archiver.errors.PayloadError`
naming the file and the JSON path of the bad value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from pplx_archiver.core.thread.model import RawPage
from pplx_archiver.errors import PayloadError

FORMAT = 1

# Request keys that would carry a secret; a raw file must never hold them.
_SECRET_KEY = re.compile(
    r"(header|cookie|authorization|token|secret|password|credential|session)", re.IGNORECASE
)


def _check_request(request: Mapping[str, Any], where: str) -> bytes:
    """Serialize one request dict (sorted keys), refusing secret-bearing keys."""
    if not isinstance(request, Mapping):
        raise PayloadError(where, f"request must be a mapping, got {type(request).__name__}")
    for key in request:
        if not isinstance(key, str):
            raise PayloadError(where, f"request keys must be strings, got {key!r}")
        if _SECRET_KEY.search(key):
            raise PayloadError(
                f"{where}.{key}", "requests in raw files may not carry headers, cookies or tokens"
            )
    try:
        return orjson.dumps(dict(request), option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise PayloadError(where, f"request is not JSON-serializable: {exc}") from None


def _check_body(body: bytes, where: str) -> None:
    """A body must be exactly one JSON value (orjson validates UTF-8 and trailing data)."""
    if not isinstance(body, bytes | bytearray | memoryview):
        raise PayloadError(where, f"body must be bytes, got {type(body).__name__}")
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise PayloadError(where, f"body is not one JSON value: {exc}") from None


def encode_raw_pages(pages: Sequence[tuple[Mapping[str, Any], bytes]]) -> bytes:
    """Build a raw file from ``(request, body bytes)`` pairs, bodies spliced in verbatim."""
    for i, (_request, body) in enumerate(pages):
        _check_body(body, f"pages[{i}].body")
    return encode_checked_pages(pages)


def encode_checked_pages(pages: Sequence[tuple[Mapping[str, Any], bytes]]) -> bytes:
    """:func:`encode_raw_pages` for bodies the caller has parsed already (not parsed again).

    Only for bodies whose JSON value the caller holds (it came from parsing those very
    bytes); the requests are checked as always.
    """
    parts: list[bytes | bytearray | memoryview] = [b'{"format":1,"pages":[\n']
    for i, (request, body) in enumerate(pages):
        req = _check_request(request, f"pages[{i}].request")
        # one join at the end: each body (tens of kB) is copied once, into the file
        parts += (b",\n" if i else b"", b'{"request":', req, b',"body":', body, b"}")
    parts.append(b"\n]}\n")
    return b"".join(parts)


def decode_raw_pages(data: bytes, *, name: str = "raw_entries.json") -> tuple[RawPage, ...]:
    """Read a raw file back into pages with decoded bodies, naming the bad spot on error."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise PayloadError(name, f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise PayloadError(name, f"expected an object, got {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise PayloadError(f"{name}:format", f"unsupported format {doc.get('format')!r}")
    pages = doc.get("pages")
    if not isinstance(pages, list):
        raise PayloadError(f"{name}:pages", "expected a list of pages")
    out: list[RawPage] = []
    for i, page in enumerate(pages):
        where = f"{name}:pages[{i}]"
        if not isinstance(page, dict):
            raise PayloadError(where, f"expected an object, got {type(page).__name__}")
        request = page.get("request")
        if not isinstance(request, dict):
            raise PayloadError(f"{where}.request", "expected an object")
        if "body" not in page:
            raise PayloadError(f"{where}.body", "missing")
        out.append(RawPage(request=request, body=page["body"]))
    return tuple(out)
