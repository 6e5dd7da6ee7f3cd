"""Settings come from CLI overrides, PPLX_* variables and the TOML file, in that order."""

from __future__ import annotations

from pathlib import Path

import pytest

from pplx_archiver.errors import ConfigError
from pplx_archiver.settings import load_settings


def test_precedence(tmp_path: Path) -> None:
    """CLI beats environment beats config file beats default."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('rate = 3.5\nconcurrency = 7\nlang = "zh"\n', encoding="utf-8")
    env = {"PPLX_CONFIG": str(cfg), "PPLX_CONCURRENCY": "9"}
    s = load_settings({"lang": "en"}, env=env)
    assert s.rate == 3.5
    assert s.concurrency == 9
    assert s.lang == "en"
    assert load_settings(env={"PPLX_CONFIG_DIR": str(tmp_path / "none")}).rate == 2.0


def test_bad_values_name_their_source(tmp_path: Path) -> None:
    """A bad value names the variable or file it came from."""
    with pytest.raises(ConfigError, match="PPLX_RATE"):
        load_settings(env={"PPLX_RATE": "fast", "PPLX_CONFIG_DIR": str(tmp_path / "x.toml")})
    cfg = tmp_path / "c.toml"
    cfg.write_text("colour = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        load_settings(env={"PPLX_CONFIG": str(cfg)})
    cfg.write_text("rate = [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(env={"PPLX_CONFIG": str(cfg)})
    with pytest.raises(ConfigError, match="concurrency"):
        load_settings({"concurrency": 0}, env={"PPLX_CONFIG_DIR": str(tmp_path / "x.toml")})


def test_settings_are_frozen_and_hide_token(tmp_path: Path) -> None:
    """Settings cannot be mutated and their repr never shows the session token."""
    s = load_settings(
        {"session_token": "eyJsecretsecret"}, env={"PPLX_CONFIG_DIR": str(tmp_path / "n")}
    )
    with pytest.raises(AttributeError):
        s.rate = 5  # type: ignore[misc]
    assert "eyJsecretsecret" not in repr(s)


def test_missing_named_config_file_is_a_usage_error(tmp_path: Path) -> None:
    """A config file named by PPLX_CONFIG that does not exist is refused, not ignored."""
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(env={"PPLX_CONFIG": str(tmp_path / "missing.toml")})


def test_non_ascii_session_token_is_a_usage_error() -> None:
    """A session token with non-ASCII characters cannot go into a header: refused at once."""
    with pytest.raises(ConfigError, match="non-ASCII"):
        load_settings({"session_token": "tökén"}, env={})
