"""The models table of pplx-ask: cache in the archive's config area, age, pinned fallback."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import orjson

from pplx_archiver.shell.ask.ask_models import MODELS_CACHE, load_models, read_models_cache

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _cache(out: Path, fetched: dt.datetime, models: dict[str, object]) -> None:
    path = out / MODELS_CACHE
    path.parent.mkdir(parents=True)
    config = {"models": models, "default_models": {"search": "only_one"}}
    path.write_bytes(orjson.dumps({"fetched_at": fetched.isoformat(), "config": config}))


async def test_offline_without_cache_uses_the_pinned_table(tmp_path: Path) -> None:
    """No client and no cache: the pinned table, labelled as such."""
    loaded = await load_models(None, tmp_path, refresh=False, now=NOW)
    assert loaded.source == "pinned" and "pinned" in loaded.describe()
    assert "pplx_alpha" in loaded.table.ids("research")


async def test_cache_is_used_and_its_age_reported(tmp_path: Path) -> None:
    """A cached config is read back with its age, even when stale and offline."""
    _cache(tmp_path, NOW - dt.timedelta(days=3), {"only_one": {"label": "X", "mode": "search"}})
    loaded = await load_models(None, tmp_path, refresh=True, now=NOW)
    assert loaded.source == "cache" and loaded.describe() == "cached 3 d ago"
    assert loaded.table.ids("search") == ["only_one"]


def test_unreadable_cache_is_ignored(tmp_path: Path) -> None:
    """A damaged cache file is treated as absent, never as an error."""
    path = tmp_path / MODELS_CACHE
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{not json")
    assert read_models_cache(tmp_path, NOW) is None
