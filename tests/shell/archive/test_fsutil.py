"""Atomic writes keep old or new bytes, never a mix; joins never leave the archive root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.fsutil import (
    TEMP_PATTERN,
    Confined,
    safe_join,
    temp_name,
    write_atomic,
)


def test_write_creates_then_skips_identical_bytes(tmp_path: Path) -> None:
    """A first write creates the file; the same bytes again leave it (and its mtime) alone."""
    path = tmp_path / "sub" / "a.md"
    assert write_atomic(path, b"hello") is True
    old = 1_000_000_000
    os.utime(path, (old, old))
    assert write_atomic(path, b"hello") is False
    assert path.stat().st_mtime == old
    assert write_atomic(path, b"hello!") is True
    assert path.read_bytes() == b"hello!"
    assert path.stat().st_mtime != old
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.md"]


def test_temp_names_match_the_pattern() -> None:
    """The temp file name of any file matches TEMP_PATTERN; ordinary names do not."""
    for name in ("thread.json", "turn_0001.md", ".hidden"):
        assert TEMP_PATTERN.match(temp_name(name))
        assert not TEMP_PATTERN.match(name)


def test_failed_write_leaves_old_bytes_and_no_temp(tmp_path: Path) -> None:
    """When the replace fails the old file survives and the temp file is removed."""
    target = tmp_path / "x.json"
    target.mkdir()  # replacing a directory by a file fails
    with pytest.raises(StoreError, match=r"x\.json"):
        write_atomic(target, b"{}")
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


@pytest.mark.parametrize(
    "part", ["..", "../x", "a/../../b", "/etc/passwd", "\\x", "a\x00b", "", "C:evil"]
)
def test_safe_join_refuses_escapes(tmp_path: Path, part: str) -> None:
    """Absolute, dot-dot, NUL, empty and drive-qualified parts are refused."""
    with pytest.raises(StoreError):
        safe_join(tmp_path, "acct", part)


def test_safe_join_refuses_symlink_escape(tmp_path: Path) -> None:
    """A symlink inside the root pointing outside it does not let a path out."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(tmp_path)
    with pytest.raises(StoreError, match="outside"):
        safe_join(root, "link", "x")


def test_confined_join_refuses_what_safe_join_refuses(tmp_path: Path) -> None:
    """The per-commit join checks each sub-folder once and each file's own symlink: a folder
    or a file linking out of the root is refused, a plain file or a new path is not."""
    root = tmp_path / "root"
    (root / "turns").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path)
    (root / "turns" / "001.md").symlink_to(tmp_path / "outside.md")
    (root / "turns" / "002.md").write_bytes(b"x")
    confined = Confined(root)
    for key in ("link/x", "turns/001.md", "link"):
        with pytest.raises(StoreError, match="outside"):
            confined.key(key)
    assert confined.key("turns/002.md") == root / "turns" / "002.md"
    assert confined.key("new/003.md") == root / "new" / "003.md"
    with pytest.raises(StoreError, match="leave"):
        confined.join("..", "x")
    with pytest.raises(StoreError, match="outside"):
        confined.key("link/y")  # a folder refused once is refused again


def test_confined_fresh_joins_lexically_and_reads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder the writer has just made: no resolve, no lstat, the lexical checks kept."""
    root = tmp_path / "new"
    root.mkdir()

    def touched(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a fresh folder's join read the file system")

    monkeypatch.setattr(Path, "resolve", touched)
    monkeypatch.setattr(Path, "is_symlink", touched)
    monkeypatch.setattr(os, "lstat", touched)
    confined = Confined(root, fresh=True)
    assert confined.key("turns/turn_0001.md") == root / "turns" / "turn_0001.md"
    for parts in (("..", "x"), ("/etc",), ("a\x00b",)):
        with pytest.raises(StoreError):
            confined.join(*parts)


def test_write_without_compare_replaces_and_keeps_no_temp(tmp_path: Path) -> None:
    """``compare=False`` (the writer already compared): the bytes are replaced atomically."""
    path = tmp_path / "a.md"
    path.write_bytes(b"old")
    assert write_atomic(path, b"new", compare=False, durable=False) is True
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["a.md"]


@pytest.mark.heavy  # pure CPU: run untraced (docs/dev/architecture.md, the gate)
@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=4))
def test_safe_join_result_is_always_inside(parts: list[str]) -> None:
    """Whatever the parts, safe_join either refuses or returns a path under the root."""
    root = Path("/tmp/pplx-root-never-created")
    try:
        path = safe_join(root, *parts)
    except StoreError:
        return
    assert path.resolve().is_relative_to(root.resolve())
