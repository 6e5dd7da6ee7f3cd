"""The model table of asking: the live models config, its cache in the archive, the pinned one.

``load_models`` prefers a cache younger than a day, then the live config (cached on the way),
then any cache, then the table pinned in the render core; ``run_models`` is ``pplx-ask
models``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson

from pplx_archiver.core.ask.asking import PINNED_CONFIG, ModelTable, parse_models_config
from pplx_archiver.errors import FetchError, PayloadError, PplxError
from pplx_archiver.logconfig import get_logger
from pplx_archiver.settings import Settings
from pplx_archiver.shell.archive.fsutil import write_atomic
from pplx_archiver.shell.net.auth import open_session
from pplx_archiver.shell.net.http import ApiClient

MODELS_CACHE = Path("index") / "config" / "models_config.json"
MODELS_MAX_AGE_S = 24 * 3600
MODELS_PATHS = ("/rest/models/config/v2", "/rest/models/config")

ASK_MODELS_FALLBACK = "ASK_MODELS_FALLBACK"

log = get_logger()


def utc_now() -> dt.datetime:
    """The current time (UTC)."""
    return dt.datetime.now(dt.UTC)


@dataclasses.dataclass(frozen=True, slots=True)
class LoadedModels:
    """A model table and where it came from."""

    table: ModelTable
    source: str  # "live", "cache" or "pinned"
    age_s: float | None = None

    def describe(self) -> str:
        """``live``, ``cached 2 h ago`` or ``pinned fallback``."""
        if self.source == "cache" and self.age_s is not None:
            return f"cached {_age(self.age_s)} ago"
        return "pinned fallback (offline)" if self.source == "pinned" else self.source


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 7200:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} d"


def read_models_cache(out_dir: Path, now: dt.datetime) -> LoadedModels | None:
    """The cached models config of the archive (None when absent or unreadable)."""
    path = out_dir / MODELS_CACHE
    try:
        data = orjson.loads(path.read_bytes())
        fetched = dt.datetime.fromisoformat(data["fetched_at"])
        table = parse_models_config(data["config"], str(path))
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, PayloadError):
        return None
    return LoadedModels(table, "cache", max(0.0, (now - fetched).total_seconds()))


async def fetch_models(client: ApiClient, out_dir: Path, now: dt.datetime) -> LoadedModels:
    """The live models config; cached in the archive's config area."""
    decoded: Any = None
    for n, path in enumerate(MODELS_PATHS):
        try:
            decoded, _raw = await client.get_json(path, kind="models")
            break
        except FetchError:
            if n == len(MODELS_PATHS) - 1:
                raise
    table = parse_models_config(decoded)
    record = {"fetched_at": now.isoformat(), "config": decoded}
    write_atomic(out_dir / MODELS_CACHE, orjson.dumps(record) + b"\n")
    return LoadedModels(table, "live", 0.0)


async def load_models(
    client: ApiClient | None, out_dir: Path, *, refresh: bool, now: dt.datetime
) -> LoadedModels:
    """A fresh cache, else the live config, else any cache, else the pinned table."""
    cached = read_models_cache(out_dir, now)
    if not refresh and cached is not None and (cached.age_s or 0) < MODELS_MAX_AGE_S:
        return cached
    if client is not None:
        try:
            return await fetch_models(client, out_dir, now)
        except (FetchError, PayloadError) as exc:
            log.warning(ASK_MODELS_FALLBACK, error=str(exc), cached=cached is not None)
    if cached is not None:
        return cached
    return LoadedModels(parse_models_config(PINNED_CONFIG), "pinned")


async def run_models(
    settings: Settings,
    *,
    refresh: bool,
    transport: httpx.AsyncBaseTransport | None = None,
    now: Callable[[], dt.datetime] = utc_now,
) -> LoadedModels:
    """The model table for ``pplx-ask models``: cache unless --refresh; offline → fallback."""
    if not refresh:
        cached = read_models_cache(settings.out_dir, now())
        if cached is not None:
            return cached
    try:
        async with open_session(settings, transport=transport) as (client, _info):
            return await load_models(client, settings.out_dir, refresh=True, now=now())
    except PplxError as exc:  # offline, or no usable session: the cached or pinned table
        log.warning(ASK_MODELS_FALLBACK, error=str(exc))
        return await load_models(None, settings.out_dir, refresh=False, now=now())
