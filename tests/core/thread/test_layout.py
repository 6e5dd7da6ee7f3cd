"""Names derived from API strings stay safe, bounded and inside the archive."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pplx_archiver.core.thread.layout import (
    normalize_timestamp_key,
    safe_component,
    thread_dir_name,
    title_slug,
    uuid8,
)


def test_hostile_titles() -> None:
    """Path separators, dot-dot and control characters never survive."""
    for title in ("../../x", "a/b", "a\\b", "x\x00y\x1b[31m", "..", ".", "", "CON"):
        name = safe_component(title)
        assert "/" not in name and "\\" not in name and ".." not in name
        assert name and not name.startswith(".")
        assert all(ord(c) >= 32 for c in name)
    assert len(safe_component("x" * 300)) <= 80


def test_slug_keeps_cjk_and_drops_emoji_punctuation() -> None:
    """CJK titles keep their letters; the folder name has the expected shape."""
    assert title_slug("量子计算 入门") == "量子计算-入门"
    assert title_slug("Hello, World! 🚀") == "hello-world"
    name = thread_dir_name("search", "2026-07-20", "../../etc/passwd", "0a1b2c3d-4e5f")
    assert name == "search/2026-07-20_etc-passwd_0a1b2c3d"
    assert uuid8("ab-cd-ef-12-34-56") == "abcdef12"


@pytest.mark.heavy  # CPU-bound agreement: run untraced (docs/dev/architecture.md, the gate)
@given(st.text(max_size=400), st.text(max_size=60))
def test_dir_names_stay_inside(title: str, uid: str) -> None:
    """Any title and id give a two-level relative path with no escaping part."""
    path = PurePosixPath(thread_dir_name("computer", "2026-01-01", title, uid))
    assert not path.is_absolute()
    assert len(path.parts) == 2
    assert all(part not in ("", ".", "..") for part in path.parts)


def test_timestamp_key_strips_trailing_zeros() -> None:
    """Update times that differ only in trailing fractional zeros compare equal."""
    assert normalize_timestamp_key("2026-09-07T16:42:48.180330Z") == normalize_timestamp_key(
        "2026-09-07T16:42:48.18033Z"
    )
    assert normalize_timestamp_key("2026-07-20T08:02:14.000000") == "2026-07-20T08:02:14"
    assert normalize_timestamp_key("2026-07-20T08:02:14.297200+00:00") == (
        "2026-07-20T08:02:14.2972+00:00"
    )
    assert normalize_timestamp_key("2026-07-20T08:02:14.816554") == "2026-07-20T08:02:14.816554"
    assert normalize_timestamp_key(None) == ""


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("aux.txt", "aux_.txt"),
        ("CON.md", "CON_.md"),
        ("nul.tar.gz", "nul_.tar.gz"),
        ("com1 .txt", "com1_.txt"),
        ("LPT9.json", "LPT9_.json"),
        ("auxiliary.txt", "auxiliary.txt"),
        ("aux", "untitled"),
    ],
)
def test_windows_device_names_with_an_extension_are_renamed(name: str, safe: str) -> None:
    """Windows reserves a device name before any extension too (issue 44)."""
    assert safe_component(name) == safe
