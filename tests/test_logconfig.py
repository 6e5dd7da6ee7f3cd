"""Logs are JSON lines with UTC timestamps, and no secret survives redaction."""

from __future__ import annotations

import io
from collections.abc import Iterator

import orjson
import pytest

from pplx_archiver import logconfig

TOKEN = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..abcDEF123-session-token-value"


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    logconfig.clear_secrets()
    yield
    logconfig.clear_secrets()


def _run(**fields: object) -> str:
    buf = io.BytesIO()
    logconfig.configure(log_format="json", json_files=[buf], stderr=io.StringIO())
    logconfig.get_logger().info("TEST_EVENT", **fields)
    return buf.getvalue().decode()


def test_json_line_shape() -> None:
    """One event is one JSON object with event, level and an ISO UTC timestamp."""
    line = _run(thread_uuid="abc", count=3)
    assert line.endswith("\n") and line.count("\n") == 1
    event = orjson.loads(line)
    assert event["event"] == "TEST_EVENT"
    assert event["level"] == "info"
    assert event["count"] == 3
    assert event["timestamp"].endswith("Z")


def test_session_token_never_leaks() -> None:
    """A session token under any key, nested, inside a URL or a message is masked."""
    logconfig.register_secret("plain-registered-secret-42")
    line = _run(
        cookie=f"__Secure-next-auth.session-token={TOKEN}",
        headers={"Cookie": TOKEN, "x-other": "ok"},
        note=f"failed with token {TOKEN} in it",
        nested=[{"deep": {"session_token": TOKEN}}],
        url="https://cdn.example/file.md?Policy=abc&Signature=def&Key-Pair-Id=ghi",
        other="saw plain-registered-secret-42 here",
    )
    assert TOKEN not in line
    assert "eyJhbGci" not in line
    assert "Signature=def" not in line and "Policy=abc" not in line
    assert "plain-registered-secret-42" not in line
    event = orjson.loads(line)
    assert event["headers"]["x-other"] == "ok"
    assert event["url"].startswith("https://cdn.example/file.md?")


def test_console_format_is_readable() -> None:
    """Console mode writes a readable line with the event name to stderr, not JSON."""
    err = io.StringIO()
    logconfig.configure(log_format="console", stderr=err)
    logconfig.get_logger().warning("THREAD_FAILED", thread_uuid="abc", token=TOKEN)
    out = err.getvalue()
    assert "THREAD_FAILED" in out
    assert TOKEN not in out
    assert not out.lstrip().startswith("{")
