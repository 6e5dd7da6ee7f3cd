"""Read-only means read-only (issue 40 item 3): every command that does not change the archive
works on an archive the user cannot write and changes nothing in it — its log goes to the
user's log folder — and a command that must write says so in one line.

The tests run as root, for whom no folder is read-only: each command runs in a subprocess that
drops to the user ``nobody`` first, on a copy of the archive that ``nobody`` can read but not
write (as another user, the copy is only made read-only).
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args

ROOT = Path(__file__).resolve().parents[2]


def _other_user() -> tuple[int, int] | None:
    """The uid/gid to drop to (root runs the tests), or None to stay this user."""
    if os.geteuid() != 0:
        return None
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody' to drop privileges to")
    return nobody.pw_uid, nobody.pw_gid


def _interpreter(user: tuple[int, int] | None) -> list[str]:
    """A Python the other user can start, with this checkout and its packages importable.

    The test's own interpreter may live where that user cannot reach (a pyenv under /root);
    then the system's interpreter of the same version is used, with this venv's packages.
    """
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    folders = os.environ.get("PATH", "").split(os.pathsep) + os.defpath.split(os.pathsep)
    found = [str(Path(d) / version) for d in folders if d and (Path(d) / version).is_file()]
    candidates = list(dict.fromkeys([sys.executable, *found]))
    for python in candidates:
        try:
            probe = subprocess.run(
                [python, "-c", "import pplx_archiver, orjson, typer"],
                env=_env(Path("/")),
                preexec_fn=_dropper(user),
                cwd="/",
                capture_output=True,
                check=False,
            )
        except PermissionError:
            continue  # the user cannot reach this interpreter
        if probe.returncode == 0:
            return [python]
    pytest.skip(f"no Python the user {user} can start")


def _env(home: Path) -> dict[str, str]:
    packages = [p for p in sys.path if p.endswith("site-packages")]
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PPLX_CONFIG_DIR": str(home / "config"),
        "PPLX_LOG_DIR": str(home / "log"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), *packages]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _dropper(user: tuple[int, int] | None) -> Callable[[], None]:
    def drop() -> None:
        if user is not None:
            os.setgroups([])
            os.setgid(user[1])
            os.setuid(user[0])

    return drop


def _tree(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under ``root``: kind, mode and the sha256 of a file's bytes."""
    found: dict[str, tuple[str, int, str]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        if path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(root))] = ("file", st.st_mode, digest)
        else:
            found[str(path.relative_to(root))] = ("dir", st.st_mode, "")
    return found


def _chmod_tree(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755 if writable else 0o555)
        else:
            path.chmod(0o644 if writable else 0o444)


class Space:
    """The read-only archive copy, a home the other user can write, and how to run as it."""

    def __init__(self, base: Path, sim: RunningSim, user: tuple[int, int] | None) -> None:
        self.base, self.sim, self.user = base, sim, user
        self.archive = base / "archive"
        self.home = base / "home"
        self.python = _interpreter(user)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.python, "-m", "pplx_archiver", *args],
            cwd=self.home,
            env=_env(self.home),
            preexec_fn=_dropper(self.user),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def session(self) -> list[str]:
        return ["--base-url", self.sim.base_url, "--session-token", self.sim.session_token]


@pytest.fixture(scope="module")
def space() -> Iterator[Space]:
    user = _other_user()
    base = Path(tempfile.mkdtemp(prefix="pplx-ro-"))
    base.chmod(0o755)
    try:
        with serve_in_thread(SimConfig(threads=12)) as sim:
            made = base / "made"
            result = run_cli(
                ["batch", *sim_args(sim, made, "--rate", "1000", "--burst", "100")], made
            )
            assert result.exit_code == 0, result.output
            shutil.copytree(made, base / "archive")
            shutil.rmtree(made)
            home = base / "home"
            home.mkdir()
            if user is not None:
                os.chown(home, *user)
            _chmod_tree(base / "archive", writable=False)
            yield Space(base, sim, user)
    finally:
        if (base / "archive").exists():
            _chmod_tree(base / "archive", writable=True)
        shutil.rmtree(base, ignore_errors=True)


def _a_thread(archive: Path) -> tuple[str, str]:
    index = Index(archive / "index" / "archive.sqlite", read_only=True)
    try:
        row = next(r for r in index.iter_threads("done") if r.title)
    finally:
        index.close()
    word = max((w for w in str(row.title).split() if w.isalpha()), key=len)
    return row.uuid, word


def test_read_only_commands_work_and_change_nothing(space: Space) -> None:
    uuid, word = _a_thread(space.archive)  # read as root: SQLite may add its -shm file
    before = _tree(space.archive)
    out = ["-o", str(space.archive)]
    commands: list[list[str]] = [
        ["status", *out],
        ["status", *out, "--json"],
        ["verify", *out, "--jobs", "1"],
        ["search", *out, word],
        ["runs", *out],
        ["failed", *out],
        ["history", uuid, *out],
        ["alerts", *out],
        ["audit", "models", *out],
        ["re-render", *out, "--dry-run", "--jobs", "1"],
        ["site", *out, "--to", str(space.home / "site"), "--jobs", "1"],
        ["batch", *out, "--dry-run", *space.session()],
        ["sync", *out, "--dry-run", *space.session()],
    ]
    failures = []
    for args in commands:
        done = space.run(*args)
        if done.returncode != 0:
            failures.append((args[:2], done.returncode, done.stderr[-600:]))
    assert failures == []
    diff = space.run("diff", uuid, *out)
    assert diff.returncode in (0, 1, 2) and "Traceback" not in diff.stderr, diff.stderr
    assert _tree(space.archive) == before
    assert (space.home / "site" / "index.html").is_file()
    logs = sorted(p.name.split("-")[0] for p in (space.home / "log").glob("*.jsonl"))
    assert "batch" in logs and "sync" in logs and "site" in logs


def test_commands_that_must_write_say_so_in_one_line(space: Space) -> None:
    before = _tree(space.archive)
    out = ["-o", str(space.archive)]
    for args in (["relations", *out], ["usage-backfill", *out, *space.session()]):
        done = space.run(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "not writable" in lines[0] and args[0] in lines[0], lines
    assert _tree(space.archive) == before


def test_dry_run_creates_no_archive(tmp_path: Path) -> None:
    """`batch --dry-run` on a folder with no archive yet leaves it absent: no index, no log."""
    with serve_in_thread(SimConfig(threads=5)) as sim:
        out = tmp_path / "new"
        result = run_cli(["batch", *sim_args(sim, out), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert not out.exists()
    assert list((tmp_path / "user-log").glob("batch-*.jsonl"))


def test_dry_run_of_an_archive_records_no_run(tmp_path: Path) -> None:
    with serve_in_thread(SimConfig(threads=5)) as sim:
        out = tmp_path / "a"
        assert run_cli(["batch", *sim_args(sim, out)], out).exit_code == 0
        logs = sorted((out / "index" / "logs").iterdir())
        index = Index(out / "index" / "archive.sqlite", read_only=True)
        runs = index.runs(10)
        index.close()
        for command in ("batch", "sync"):
            result = run_cli([command, *sim_args(sim, out), "--dry-run"])
            assert result.exit_code == 0, result.output
    index = Index(out / "index" / "archive.sqlite", read_only=True)
    try:
        assert index.runs(10) == runs
    finally:
        index.close()
    assert sorted((out / "index" / "logs").iterdir()) == logs
