"""A full disk: one error line and exit 1, with the writer process on and off, and a clean
resume once space is freed.

The archive is written on a tmpfs of a few MB mounted by the test (tests run as root; the
mount is what a full disk needs to be real rather than simulated), too small for the
simulated account; the same mount is then grown (``remount,size=``) as a user freeing space
would, and the rerun must leave the archive an uninterrupted run leaves, verify clean.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.reliability.conftest import run_cli, sim_args
from tests.reliability.test_crash_resume import derived_view, temp_files

RUN_OPTS = ("--concurrency", "8", "--rate", "1000", "--burst", "100", "--log-format", "json")


@pytest.fixture(scope="module")
def sim() -> Iterator[RunningSim]:
    with serve_in_thread(SimConfig(threads=60)) as running:
        yield running


@pytest.fixture(scope="module")
def reference(sim: RunningSim, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archive an uninterrupted run leaves (built once for both writer settings)."""
    out = tmp_path_factory.mktemp("reference") / "archive"
    assert run_cli(["batch", *sim_args(sim, out, *RUN_OPTS)], out).exit_code == 0
    return out


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs, unmounted at the end."""
    mount = tmp_path / "fs"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:  # not root, or no mount in this sandbox
        pytest.skip(f"cannot mount a tmpfs: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _batch(
    sim: RunningSim, out: Path, config: Path, writer: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPLX_")}
    env |= {"PPLX_CONFIG_DIR": str(config), "PPLX_WRITER_PROCESS": writer}
    args = ["batch", *sim_args(sim, out, *RUN_OPTS)]
    return subprocess.run(
        [sys.executable, "-m", "pplx_archiver", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize("writer", ["on", "off"])
def test_a_full_disk_is_one_line_and_a_clean_resume(
    sim: RunningSim, reference: Path, small_fs: Path, tmp_path: Path, writer: str
) -> None:
    out = small_fs / "archive"
    full = _batch(sim, out, tmp_path / "config", writer)
    assert full.returncode == 1, full.stdout + full.stderr
    errors = [line for line in full.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, full.stderr
    assert "space" in errors[0] or "full" in errors[0]
    assert "Traceback" not in full.stderr + full.stdout

    grown = subprocess.run(["mount", "-o", "remount,size=256m", str(small_fs)])
    assert grown.returncode == 0
    again = _batch(sim, out, tmp_path / "config", writer)
    assert again.returncode == 0, again.stdout + again.stderr
    assert temp_files(out) == []
    got, expected = derived_view(out), derived_view(reference)
    assert sorted(got) == sorted(expected)
    assert [rel for rel in expected if got[rel] != expected[rel]] == []
    verified = run_cli(["verify", "--out", str(out)])
    assert verified.exit_code == 0, verified.output
