"""The wire formats of the ask stream: SSE frames, JSON-Patch diff blocks, in-band errors.

:class:`SseDecoder` cuts stream text into :class:`Frame` values, :func:`apply_patch` applies
the RFC 6902 operations of a ``diff_block`` leniently, :func:`merge_markdown` continues the
chunks of a markdown block and :func:`in_band_error` names the error a 200 payload carries.
No I/O; :mod:`pplx_archiver.core.ask.stream` builds the answer from them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from typing import Any

from pplx_archiver.errors import AskError, AskFailedError, AskRateLimitedError, AskSessionError

Json = dict[str, Any]

RATE_LIMIT_CODES = frozenset(
    {"RATE_LIMIT", "RATE_LIMITED", "RATE_LIMIT_EXCEEDED", "QUOTA_EXCEEDED", "TOO_MANY_REQUESTS"}
)
SESSION_CODES = frozenset(
    {"UNAUTHORIZED", "NOT_AUTHENTICATED", "SESSION_EXPIRED", "LOGIN_REQUIRED", "AUTH_REQUIRED"}
)


# --------------------------------------------------------------------------- SSE framing


@dataclasses.dataclass(frozen=True, slots=True)
class Frame:
    """One server-sent event: its ``event:`` name and its joined ``data:`` text."""

    event: str
    data: str


class SseDecoder:
    """Cuts text arriving in arbitrary pieces into :class:`Frame` values."""

    def __init__(self) -> None:
        self._buf = ""
        self._cr = False  # the last piece ended in "\r": its "\n" may follow

    def feed(self, text: str) -> list[Frame]:
        """Frames completed by ``text`` (a partial frame stays buffered)."""
        if self._cr:
            text, self._cr = "\r" + text, False
        if text.endswith("\r"):
            text, self._cr = text[:-1], True
        start = max(0, len(self._buf) - 1)
        self._buf += text.replace("\r\n", "\n")
        frames: list[Frame] = []
        while True:
            cut = self._buf.find("\n\n", start)
            if cut < 0:
                break
            block, self._buf, start = self._buf[:cut], self._buf[cut + 2 :], 0
            frame = _frame(block)
            if frame is not None:
                frames.append(frame)
        return frames

    def close(self) -> list[Frame]:
        """The last frame when the stream ended without a blank line after it."""
        block, self._buf = self._buf.rstrip("\r\n"), ""
        frame = _frame(block) if block.strip() else None
        return [frame] if frame is not None else []


def _frame(block: str) -> Frame | None:
    event, data = "message", []
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value.strip() or "message"
        elif name == "data":
            data.append(value)
    if not data and event == "message":
        return None
    return Frame(event, "\n".join(data))


# --------------------------------------------------------------------------- JSON Patch


def _token(raw: str) -> str:
    return raw.replace("~1", "/").replace("~0", "~")


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"patch path {path!r} does not start with '/'")
    return [_token(t) for t in path[1:].split("/")]


def _child(container: Any, key: str, next_key: str | None) -> Any:
    """The child at ``key``, created (dict, or list before a numeric key) when missing."""
    fresh: Any = [] if next_key is not None and (next_key.isdigit() or next_key == "-") else {}
    if isinstance(container, dict):
        if not isinstance(container.get(key), dict | list):
            container[key] = fresh
        return container[key]
    if isinstance(container, list):
        index = len(container) if key == "-" else int(key)
        while len(container) <= index:
            container.append(None)
        if not isinstance(container[index], dict | list):
            container[index] = fresh
        return container[index]
    raise ValueError(f"cannot descend into {type(container).__name__} at {key!r}")


def _set(container: Any, key: str, value: Any, insert: bool) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if not isinstance(container, list):
        raise ValueError(f"cannot set {key!r} in {type(container).__name__}")
    index = len(container) if key == "-" else int(key)
    if index >= len(container):
        while len(container) < index:
            container.append(None)
        container.append(value)
    elif insert:
        container.insert(index, value)
    else:
        container[index] = value


def _get(doc: Any, tokens: list[str]) -> Any:
    for key in tokens:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    return doc


def apply_patch(doc: Any, patches: Iterable[Any]) -> Any:
    """``doc`` with RFC 6902 operations applied (mutated in place where possible; returned).

    Lenient where a stream needs it: containers missing on the way are created, an index past
    the end appends, removing a missing member is a no-op. Raises ValueError for an operation
    that cannot mean anything (unknown op, a path through a string).
    """
    for patch in patches:
        if not isinstance(patch, dict):
            raise ValueError("a patch operation must be an object")
        op = patch.get("op")
        tokens = _tokens(str(patch.get("path", "")))
        if op == "test":
            continue
        if op in ("move", "copy"):
            source = _tokens(str(patch.get("from", "")))
            value = copy.deepcopy(_get(doc, source))
            if op == "move":
                doc = apply_patch(doc, [{"op": "remove", "path": patch.get("from", "")}])
        elif op in ("add", "replace"):
            value = copy.deepcopy(patch.get("value"))
        elif op == "remove":
            value = None
        else:
            raise ValueError(f"unknown patch op {op!r}")
        if not tokens:
            doc = value if op != "remove" else None
            continue
        parent = doc if isinstance(doc, dict | list) else {}
        doc = parent
        for i, key in enumerate(tokens[:-1]):
            parent = _child(parent, key, tokens[i + 1])
        last = tokens[-1]
        if op == "remove":
            if isinstance(parent, dict):
                parent.pop(last, None)
            elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
                del parent[int(last)]
            continue
        _set(parent, last, value, insert=op in ("add", "move", "copy"))
    return doc


def merge_markdown(held: Any, value: Json) -> Json:
    """A whole markdown block; its ``chunks`` continue the held ones at the starting offset."""
    merged = copy.deepcopy(value)
    chunks = value.get("chunks")
    offset = value.get("chunk_starting_offset")
    if isinstance(held, dict) and isinstance(chunks, list) and isinstance(offset, int) and offset:
        before = held.get("chunks")
        before = list(before[:offset]) if isinstance(before, list) else []
        while len(before) < offset:
            before.append("")
        merged["chunks"] = before + list(chunks)
        merged["chunk_starting_offset"] = 0
    return merged


# --------------------------------------------------------------------------- in-band errors


def in_band_error(payload: Json, status: str, thread: str) -> AskError | None:
    """The error a stream payload reports (``error_code``, ``error.code``, status FAILED)."""
    code = payload.get("error_code")
    if not isinstance(code, str) or not code:
        error = payload.get("error")
        code = error.get("code", "") if isinstance(error, dict) else ""
    code = str(code or "").upper()
    if not code and status != "FAILED":
        return None
    message = payload.get("error_message") or payload.get("message") or ""
    if not isinstance(message, str):
        message = ""
    detail = f": {message}" if message else ""
    if code in RATE_LIMIT_CODES:
        return AskRateLimitedError(
            f"the service refused the ask: rate limit ({code}){detail}",
            code=code,
            thread_uuid=thread,
        )
    if code in SESSION_CODES:
        return AskSessionError(
            f"the service answered 200 but rejected the session ({code}){detail}",
            code=code,
            thread_uuid=thread,
        )
    return AskFailedError(
        f"the ask failed in the stream ({code or 'status FAILED'}){detail}",
        code=code or "FAILED",
        thread_uuid=thread,
    )
