"""Bad cookie inputs are one line, at once (issue 44): a non-ASCII value, deeply nested JSON,
a CR/LF in a value or in the session token — exit 2 before any request, no traceback."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app

SESSION = "__Secure-next-auth.session-token"


def _run(tmp_path: Path, *args: str) -> tuple[int, str, float]:
    _register()
    started = time.monotonic()
    result = CliRunner().invoke(
        app,
        ["batch", "--out", str(tmp_path / "a"), "--base-url", "http://127.0.0.1:9", *args],
        env={"PPLX_CONFIG_DIR": str(tmp_path / "config")},
    )
    return result.exit_code, result.output, time.monotonic() - started


def _json_file(tmp_path: Path, value: str) -> Path:
    path = tmp_path / "cookies.json"
    items = [{"name": SESSION, "value": value, "domain": ".perplexity.ai"}]
    path.write_bytes(orjson.dumps(items))
    return path


@pytest.mark.parametrize(
    ("value", "said"),
    [("tökén", "non-ASCII"), ("abc\r\nX-Evil: 1", "line break"), ("a\nb", "line break")],
    ids=["non-ascii", "crlf", "lf"],
)
def test_a_bad_cookie_value_is_one_line(tmp_path: Path, value: str, said: str) -> None:
    code, output, took = _run(tmp_path, "--cookies", str(_json_file(tmp_path, value)))
    assert code == 2, output
    assert said in output and "Traceback" not in output
    assert took < 10


def test_a_netscape_value_with_non_ascii_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cookies.txt"
    path.write_text(f".perplexity.ai\tTRUE\t/\tTRUE\t0\t{SESSION}\tvälue\n", encoding="utf-8")
    code, output, _ = _run(tmp_path, "--cookies", str(path))
    assert code == 2 and "non-ASCII" in output and "Traceback" not in output


def test_deeply_nested_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cookies.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    code, output, _ = _run(tmp_path, "--cookies", str(path))
    assert code == 2, output
    assert "nested too deeply" in output and "Traceback" not in output


def test_a_session_token_with_a_line_break_is_refused_at_once(tmp_path: Path) -> None:
    code, output, took = _run(tmp_path, "--session-token", "abc\r\ndef")
    assert code == 2, output
    assert "line break" in output and took < 10
