"""Frozen run settings: the only reader of ``PPLX_*`` environment variables and the config file.

Precedence, highest first: explicit command-line values, ``PPLX_*`` environment variables,
the TOML config file (``$PPLX_CONFIG`` or ``<user config dir>/pplx-archiver/config.toml``),
then the defaults below.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import platformdirs

from pplx_archiver.core.thread.budgets import DEFAULTS as BUDGETS
from pplx_archiver.core.thread.budgets import Budgets
from pplx_archiver.errors import ConfigError
from pplx_archiver.limits import SETTING_FIELDS, check

DEFAULT_BASE_URL = "https://www.perplexity.ai"
APP_DIR_NAME = "pplx-archiver"

# Conservative defaults: the real service publishes no read limits and peers report
# Cloudflare trouble above ~2 requests/s. Raise them with --rate/--burst/--concurrency.
DEFAULT_RATE = 2.0
DEFAULT_BURST = 4
DEFAULT_CONCURRENCY = 4


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    """Everything a run needs to know that does not come from the server."""

    base_url: str = DEFAULT_BASE_URL
    out_dir: Path = Path("archive")
    session_token: str | None = dataclasses.field(default=None, repr=False)
    cookies_file: Path | None = None
    cookies_from: str | None = None
    account_id: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    rate: float = DEFAULT_RATE
    burst: int = DEFAULT_BURST
    asset_concurrency: int = 4
    asset_rate: float = 20.0
    max_asset_bytes: int = 200 * 1024 * 1024
    lang: str = "en"
    log_format: str = "auto"
    lister: str = "rest"
    impersonate: str | None = None
    # An http:// or https:// proxy for every request (else HTTPS_PROXY/HTTP_PROXY/ALL_PROXY
    # and NO_PROXY from the environment: shell/net/proxy.py). May hold a password.
    proxy: str | None = dataclasses.field(default=None, repr=False)
    graphql_hashes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    early_stop: int = 50
    page_limit: int = 100
    max_attempts: int = 6
    max_retry_seconds: float = 300.0
    request_timeout: float = 60.0
    # Wall-clock limits (issue 13): one API request (headers and whole body), one asset
    # download, and either of them with all its retries; API bodies beyond the cap are not
    # read. A response trickling forever therefore costs a thread at most total_deadline.
    request_deadline: float = 60.0
    download_deadline: float = 240.0
    total_deadline: float = 300.0
    max_body_bytes: int = 64 * 1024 * 1024
    # What stderr shows: "warning" (warnings, errors; the default), "info" (--verbose: every
    # event) or "error" (--quiet). The run's log file always holds every event.
    console_level: str = "warning"
    # Where a run writes: "auto" (a process of its own for a run of 150 threads or more on a
    # machine of several cores), "on" (always a process of its own) or "off" (a thread).
    writer_process: str = "auto"
    max_challenges: int = 5
    # Budgets of what one thread's responses become (core/thread/budgets.py, issue 44).
    max_thread_entries: int = BUDGETS["entries"]
    max_thread_turns: int = BUDGETS["turns"]
    max_thread_blocks: int = BUDGETS["blocks"]
    max_thread_sources: int = BUDGETS["sources"]
    max_thread_depth: int = BUDGETS["depth"]
    max_thread_bytes: int = BUDGETS["bytes"]
    max_thread_values: int = BUDGETS["values"]
    config_dir: Path = dataclasses.field(
        default_factory=lambda: Path(platformdirs.user_config_dir(APP_DIR_NAME))
    )
    # Logs of commands that do not change the archive (status-like commands, dry runs, a site
    # written elsewhere): never into the archive (issue 40).
    log_dir: Path = dataclasses.field(
        default_factory=lambda: Path(platformdirs.user_log_dir(APP_DIR_NAME))
    )

    def __post_init__(self) -> None:
        for name in SETTING_FIELDS:
            value = getattr(self, name)
            allowed = check(name, value)
            if allowed is not None:
                raise ConfigError(f"{name.replace('_', '-')} must be {allowed}, got {value!r}")
        token = self.session_token
        if token is not None and not token.isascii():
            raise ConfigError(
                "session token contains non-ASCII characters: copy the cookie value exactly "
                "(HTTP headers carry ASCII only)"
            )
        if token is not None and any(ord(c) < 0x20 or ord(c) == 0x7F for c in token.strip()):
            raise ConfigError(
                "session token contains a line break or another control character: copy the "
                "cookie value exactly"
            )
        if self.console_level not in ("info", "warning", "error"):
            raise ConfigError(
                f"console level must be info, warning or error, got {self.console_level!r}"
            )
        if self.lang not in ("en", "zh"):
            raise ConfigError(f"lang must be 'en' or 'zh', got {self.lang!r}")
        if self.log_format not in ("auto", "json", "console"):
            raise ConfigError(f"log format must be auto, json or console, got {self.log_format!r}")
        self._check_writer_process()
        if self.lister not in ("rest", "graphql"):
            raise ConfigError(f"lister must be 'rest' or 'graphql', got {self.lister!r}")
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base URL must start with http:// or https://, got {self.base_url!r}"
            )

    def _check_writer_process(self) -> None:
        if self.writer_process not in ("auto", "on", "off"):
            raise ConfigError(
                f"writer process must be auto, on or off, got {self.writer_process!r}"
            )

    @property
    def budgets(self) -> Budgets:
        """The per-thread budgets of a run."""
        return Budgets(**{name: getattr(self, f"max_thread_{name}") for name in BUDGETS})

    @property
    def credential_path(self) -> Path:
        """Where `auth save` stores the credential (mode 0600)."""
        return self.config_dir / "credentials.json"


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}

# Environment variable → field name.
_ENV = {
    "PPLX_BASE_URL": "base_url",
    "PPLX_OUT": "out_dir",
    "PPLX_SESSION_TOKEN": "session_token",
    "PPLX_COOKIES": "cookies_file",
    "PPLX_ACCOUNT_ID": "account_id",
    "PPLX_CONCURRENCY": "concurrency",
    "PPLX_RATE": "rate",
    "PPLX_BURST": "burst",
    "PPLX_LANG": "lang",
    "PPLX_LOG_FORMAT": "log_format",
    "PPLX_LISTER": "lister",
    "PPLX_MAX_ASSET_BYTES": "max_asset_bytes",
    "PPLX_ASSET_CONCURRENCY": "asset_concurrency",
    "PPLX_ASSET_RATE": "asset_rate",
    "PPLX_CONFIG_DIR": "config_dir",
    "PPLX_LOG_DIR": "log_dir",
    "PPLX_PAGE_LIMIT": "page_limit",
    "PPLX_EARLY_STOP": "early_stop",
    "PPLX_REQUEST_DEADLINE": "request_deadline",
    "PPLX_DOWNLOAD_DEADLINE": "download_deadline",
    "PPLX_TOTAL_DEADLINE": "total_deadline",
    "PPLX_MAX_BODY_BYTES": "max_body_bytes",
    "PPLX_MAX_THREAD_ENTRIES": "max_thread_entries",
    "PPLX_MAX_THREAD_TURNS": "max_thread_turns",
    "PPLX_MAX_THREAD_BLOCKS": "max_thread_blocks",
    "PPLX_MAX_THREAD_SOURCES": "max_thread_sources",
    "PPLX_MAX_THREAD_DEPTH": "max_thread_depth",
    "PPLX_MAX_THREAD_BYTES": "max_thread_bytes",
    "PPLX_MAX_THREAD_VALUES": "max_thread_values",
    "PPLX_CONSOLE_LEVEL": "console_level",
    "PPLX_WRITER_PROCESS": "writer_process",
    "PPLX_PROXY": "proxy",
}


def _coerce(name: str, value: Any, where: str) -> Any:
    """Convert a raw value from env/TOML/CLI into the field's type, naming where it came from;
    a number outside its row of ``limits.BOUNDS`` is refused here, with that source."""
    converted = _convert(name, value, where)
    if name in SETTING_FIELDS and converted is not None:
        allowed = check(name, converted)
        if allowed is not None:
            raise ConfigError(f"{where}: {name} must be {allowed}, got {value!r}")
    return converted


def _convert(name: str, value: Any, where: str) -> Any:
    if value is None:
        return None
    field_type = str(_FIELDS[name].type)
    try:
        if "Path" in field_type:
            return Path(str(value)).expanduser()
        if field_type.startswith("int"):
            if isinstance(value, bool):
                raise ValueError("booleans are not numbers")
            if isinstance(value, float) and not value.is_integer():
                raise ValueError("not a whole number")
            return int(value)
        if field_type.startswith("float"):
            return float(value)
        if "Mapping" in field_type:
            if not isinstance(value, Mapping):
                raise ValueError("expected a table")
            return {str(k): str(v) for k, v in value.items()}
        return str(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigError(f"{where}: invalid value {value!r} for {name}: {exc}") from None


def _named_config(env: Mapping[str, str]) -> bool:
    return bool(env.get("PPLX_CONFIG"))


def config_file_path(env: Mapping[str, str]) -> Path:
    """The TOML config file this run reads (it may not exist)."""
    if "PPLX_CONFIG" in env:
        return Path(env["PPLX_CONFIG"]).expanduser()
    base = env.get("PPLX_CONFIG_DIR") or platformdirs.user_config_dir(APP_DIR_NAME)
    return Path(base).expanduser() / "config.toml"


def _read_config_file(path: Path, *, required: bool = False) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if required:
            raise ConfigError(
                f"{path}: config file named by PPLX_CONFIG does not exist "
                "(unset PPLX_CONFIG or create the file)"
            ) from None
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in _FIELDS:
            raise ConfigError(f"{path}: unknown setting {key!r}")
        out[name] = _coerce(name, value, str(path))
    return out


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Build the run's settings from overrides (CLI), the environment and the config file."""
    environ: Mapping[str, str] = os.environ if env is None else env
    values: dict[str, Any] = _read_config_file(
        config_file_path(environ), required=_named_config(environ)
    )
    for var, name in _ENV.items():
        if var in environ and environ[var] != "":
            values[name] = _coerce(name, environ[var], f"environment variable {var}")
    for name, value in (overrides or {}).items():
        if name not in _FIELDS:
            raise ConfigError(f"unknown setting {name!r}")
        if value is not None:
            values[name] = _coerce(name, value, f"option --{name.replace('_', '-')}")
    return Settings(**values)


def setting_sources(
    overrides: Mapping[str, Any] | None = None, *, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Where each setting not left at its default comes from (``doctor``): the option, the
    environment variable or the config file, by the precedence of :func:`load_settings`."""
    environ: Mapping[str, str] = os.environ if env is None else env
    path = config_file_path(environ)
    sources = dict.fromkeys(_read_config_file(path, required=_named_config(environ)), str(path))
    for var, name in _ENV.items():
        if var in environ and environ[var] != "":
            sources[name] = f"environment variable {var}"
    for name, value in (overrides or {}).items():
        if value is not None:
            sources[name] = f"option {_OPTIONS.get(name) or '--' + name.replace('_', '-')}"
    return sources


# Settings whose command-line option is not named after them.
_OPTIONS = {"out_dir": "--out", "cookies_file": "--cookies"}
