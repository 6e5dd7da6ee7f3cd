"""verify --sample checks the requested share of the threads, rotates through the archive
across runs (the position recorded in the index through the writer) and says how much it
covered; a bad value is one line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.shell.archive.store import Archive
from tests.shell.archive_builders import build

THREADS = 10


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 10-thread archive harvested once (copied per test)."""
    out = tmp_path_factory.mktemp("pristine-sample")
    build(out, THREADS)
    return out


@pytest.fixture
def out(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the pristine archive."""
    return Path(shutil.copytree(pristine, tmp_path / "a"))


def _sample(out: Path, percent: str, *extra: str) -> tuple[int, dict[str, Any]]:
    _register()
    args = ["verify", "--out", str(out), "--jobs", "1", "--sample", percent, "--json", *extra]
    result = CliRunner().invoke(app, args)
    return result.exit_code, orjson.loads(result.stdout.strip().splitlines()[-1])


def _done(out: Path) -> list[str]:
    with Archive(out, read_only=True) as archive:
        return [row.uuid for row in archive.iter_threads("done")]


def test_sample_covers_the_share_and_rotates(out: Path) -> None:
    """30 % of 10 threads is 3 a run, the next 3 each time, wrapping round after the last;
    the fourth run completes a pass and the report says when it started and ended."""
    uuids = _done(out)
    assert len(uuids) == THREADS
    seen: list[str] = []
    for run in range(4):
        code, report = _sample(out, "30")
        assert code == 0, report
        cover = report["sample"]
        assert cover["threads"] == 3 == report["threads"]
        assert cover["of_threads"] == THREADS
        assert cover["threads_percent"] == 30.0
        assert 0 < cover["bytes"] < cover["of_bytes"]
        assert cover["recorded"] is True
        with Archive(out, read_only=True) as archive:
            rotation = archive.index.verify_rotation()
        assert rotation is not None
        if run < 3:
            assert rotation.position == uuids[3 * run + 2]
            assert cover["pass_percent"] == 30.0 * (run + 1)
            assert cover["last_full_pass"] is None
        seen.append(rotation.position)
    # Run 4 checks the 10th thread, then wraps to the first two: a pass ended.
    assert seen[3] == uuids[1]
    assert cover["last_full_pass"] is not None
    assert cover["last_full_pass"]["ended"] == cover["pass_started"]
    assert cover["pass_percent"] == 20.0


def test_sample_finds_damage_only_in_what_it_checks(out: Path) -> None:
    """A damaged thread is reported by the run whose share holds it, not by the others."""
    uuids = _done(out)
    with Archive(out, read_only=True) as archive:
        victim = archive.index.get(uuids[5])
    assert victim is not None and victim.path
    (out / victim.path / "conversation.md").write_text("edited by hand\n", encoding="utf-8")
    codes = [_sample(out, "50")[0] for _ in range(2)]
    assert codes == [0, 1]


def test_whole_archive_sample_is_a_full_pass(out: Path) -> None:
    """--sample 100 checks every thread and completes a pass at once."""
    code, report = _sample(out, "100")
    assert code == 0
    assert report["sample"]["threads"] == THREADS
    assert report["sample"]["bytes"] == report["sample"]["of_bytes"]
    assert report["sample"]["last_full_pass"] is not None


def test_without_sample_nothing_is_recorded(out: Path) -> None:
    """A full verify stays read-only: no rotation recorded, no sample in the report."""
    _register()
    result = CliRunner().invoke(app, ["verify", "--out", str(out), "--jobs", "1", "--json"])
    assert result.exit_code == 0
    assert orjson.loads(result.stdout)["sample"] is None
    with Archive(out, read_only=True) as archive:
        assert archive.index.verify_rotation() is None


@pytest.mark.parametrize("value", ["0", "-3", "101", "nan", "five"])
def test_bad_sample_is_one_line(out: Path, value: str) -> None:
    """A share outside 0.01–100 (or not a number) is refused in one line, exit 2."""
    _register()
    result = CliRunner().invoke(app, ["verify", "--out", str(out), "--sample", value])
    assert result.exit_code == 2
    assert "--sample" in result.output
    assert "Traceback" not in result.output
