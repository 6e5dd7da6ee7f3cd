"""Structured logging: one structlog configuration, JSON lines, console lines, redaction.

Every event is an UPPER_SNAKE name plus snake_case fields. :func:`configure` is called once
per run; it sends each event as one JSON line (orjson, ISO-8601 UTC timestamp) to the run's
log file, and to stderr either as JSON (``json``, or ``auto`` when stderr is not a TTY) or as
readable console lines (``console``, or ``auto`` on a TTY).

Secrets never reach a sink: :func:`redact` masks values under secret-looking keys (cookies,
tokens, authorization, signatures), strips the query of signed URLs, masks JWT-shaped
strings and any value registered with :func:`register_secret`, at any depth of the event.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any, Protocol

import orjson
import structlog

from pplx_archiver.core.findings.alerts import KINDS

MASK = "***"

_SECRET_KEY = re.compile(
    r"(cookie|token|secret|password|passwd|authorization|auth_header|signature|"
    r"session_id|credential|api_key|apikey|policy|key_pair_id|key-pair-id|"
    r"awsaccesskeyid|x-amz-|x_amz_|set-cookie|set_cookie|csrf)",
    re.IGNORECASE,
)
# Keys that look secret by the pattern above but are counts or names, not secrets.
_SAFE_KEYS = frozenset({"tokens_available", "token_bucket", "session_probe", "cookie_names"})
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-\.]*")
_URL_QUERY = re.compile(r"(https?://[^\s?#\"']+)\?[^\s#\"']*")
_SIGNED_PARAM = re.compile(
    r"(Signature|Policy|Key-Pair-Id|AWSAccessKeyId|X-Amz-[A-Za-z-]+|x-amz-security-token|sig|"
    r"token|expires)=[^&\s\"']*",
    re.IGNORECASE,
)

_secrets_lock = threading.Lock()
_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask every later occurrence of ``value`` (a session token, a cookie) in any event."""
    if value and len(value) >= 6:
        with _secrets_lock:
            _secrets.add(value)


def clear_secrets() -> None:
    """Forget registered secrets (tests)."""
    with _secrets_lock:
        _secrets.clear()


def redact_text(text: str) -> str:
    """Return ``text`` with registered secrets, JWTs and URL query strings masked."""
    with _secrets_lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, MASK)
    text = _JWT.sub(MASK, text)
    text = _URL_QUERY.sub(lambda m: m.group(1) + "?" + MASK, text)
    return _SIGNED_PARAM.sub(lambda m: m.group(1) + "=" + MASK, text)


def _redact_value(key: str | None, value: Any, depth: int = 0) -> Any:
    if key is not None and key.lower() not in _SAFE_KEYS and _SECRET_KEY.search(key):
        if value is None or isinstance(value, bool | int | float):
            return value
        return MASK
    if depth > 12:
        return MASK if isinstance(value, dict | list | tuple | str) else value
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_value(str(k), v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_redact_value(None, v, depth + 1) for v in value]
    if isinstance(value, bytes):
        return redact_text(value.decode("utf-8", "replace"))
    if isinstance(value, BaseException):
        return redact_text(f"{type(value).__name__}: {value}")
    return value


def redact(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: mask secrets anywhere in the event."""
    for key in list(event_dict):
        event_dict[key] = _redact_value(str(key), event_dict[key])
    return event_dict


def dumps(event_dict: MutableMapping[str, Any]) -> bytes:
    """Serialize one event as a JSON line (bytes, newline-terminated)."""
    return orjson.dumps(event_dict, default=str, option=orjson.OPT_NON_STR_KEYS) + b"\n"


class ByteSink(Protocol):
    """Where JSON lines go: a binary file, or stderr through an adapter."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...


class TextSink(Protocol):
    """A text stream such as stderr."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...

    def isatty(self) -> bool: ...


class _Sinks:
    """The outputs of the current configuration; replaced by each :func:`configure` call."""

    def __init__(self) -> None:
        self.json_files: list[ByteSink] = []
        self.console: TextSink | None = None
        self.console_renderer: Callable[..., Any] | None = None
        self.listeners: list[Callable[[MutableMapping[str, Any]], None]] = []
        self.stderr_json: ByteSink | None = None
        self.console_min = 0
        self.lock = threading.Lock()


# Console (stderr) levels: "info" shows every event (--verbose), "warning" warnings and
# errors (the default), "error" errors only (--quiet). Log files always get every event.
CONSOLE_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}
_LEVEL_NUMBERS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40,
                  "critical": 50, "exception": 40}  # fmt: skip


_sinks = _Sinks()

# Events the log files keep but stderr does not show: the command prints its error itself,
# once, as an ``error:`` line (``cli/_run.fail``).
FILE_ONLY = frozenset({"RUN_FAILED"})


def _emit(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Final processor: write the event to every sink, then drop it."""
    line = dumps(event_dict)
    with _sinks.lock:
        for listener in _sinks.listeners:
            listener(dict(event_dict))
        for fh in _sinks.json_files:
            fh.write(line)
            fh.flush()
        level = _LEVEL_NUMBERS.get(str(event_dict.get("level", "info")), 20)
        if level < _sinks.console_min or event_dict.get("event") in FILE_ONLY:
            raise structlog.DropEvent
        if _sinks.stderr_json is not None:
            _sinks.stderr_json.write(line)
            _sinks.stderr_json.flush()
        digested = _sinks.console_min > 20 and event_dict.get("event") in KINDS
        if _sinks.console is not None and _sinks.console_renderer is not None and not digested:
            # a finding is summed up by the run's closing digest (every one is in the log)
            text = _sinks.console_renderer(logger, method, dict(event_dict))
            _sinks.console.write(str(text) + "\n")
            _sinks.console.flush()
    raise structlog.DropEvent


def shared_processors() -> list[Any]:
    """Processors every configuration runs before the sinks (tests reuse them)."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
        structlog.processors.format_exc_info,
        redact,
    ]


def configure(
    *,
    log_format: str = "auto",
    json_files: Iterable[ByteSink] = (),
    stderr: TextSink | None = None,
    listeners: Iterable[Callable[[MutableMapping[str, Any]], None]] = (),
    console_level: str = "info",
) -> None:
    """Configure structlog for this process; ``log_format`` is auto, json or console.

    ``console_level`` filters what reaches stderr (``info``, ``warning`` or ``error``); the
    JSON files always receive every event.
    """
    err: TextSink = stderr if stderr is not None else _CurrentStderr()
    files: list[ByteSink] = list(json_files)
    console_renderer: Callable[..., Any] | None = None
    console: TextSink | None = None
    fmt = log_format
    stderr_json: ByteSink | None = None
    if fmt == "auto":
        fmt = "console" if err.isatty() else "json"
    if fmt == "json":
        stderr_json = _TextToBytes(err)
    elif fmt == "console":
        console = err
        console_renderer = structlog.dev.ConsoleRenderer(colors=err.isatty())
    with _sinks.lock:
        _sinks.json_files = files
        _sinks.console = console
        _sinks.console_renderer = console_renderer
        _sinks.listeners = list(listeners)
        _sinks.stderr_json = stderr_json
        _sinks.console_min = CONSOLE_LEVELS.get(console_level, 20)
    structlog.configure(
        processors=[*shared_processors(), _emit],
        logger_factory=structlog.ReturnLoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(0),
        cache_logger_on_first_use=False,
    )


class _CurrentStderr:
    """Whatever ``sys.stderr`` is at write time (test runners and progress bars swap it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


class _TextToBytes:
    """Adapts a text stream (stderr) to the bytes sink interface."""

    def __init__(self, stream: TextSink) -> None:
        self._stream = stream

    def write(self, data: bytes) -> int:
        return self._stream.write(data.decode("utf-8"))

    def flush(self) -> None:
        self._stream.flush()


def get_logger(**initial: Any) -> Any:
    """A bound logger; call ``log.info("EVENT_NAME", field=...)``."""
    return structlog.get_logger(**initial)
