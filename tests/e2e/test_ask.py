"""`pplx-ask` end to end against the simulator on loopback: ask, archive, follow up, fail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli.ask import ask_app
from pplx_archiver.shell.archive.fsutil import TEMP_PATTERN
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import sim_args, sim_get, sim_post

MODE_ARGS = {
    "search": ["--mode", "search"],
    "deep-research": ["--mode", "deep-research"],
    "council": ["--mode", "council", "--model", "gpt55_thinking", "--model", "gemini31pro_high"],
    "study": ["--mode", "study", "--model", "pplx_study"],
}


@pytest.fixture(scope="module")
def sim() -> Iterator[RunningSim]:
    """A small simulated account on loopback, shared by the tests of this module."""
    with serve_in_thread(SimConfig(threads=8)) as running:
        yield running


class Asked:
    """Exit code, stdout, stderr and the JSON line of one `pplx-ask` run."""

    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        self.record: dict[str, Any] = orjson.loads(lines[-1]) if lines else {}


def ask(args: list[str], stdin: str | None = None) -> Asked:
    """Run `pplx-ask ARGS` in-process."""
    result = CliRunner().invoke(ask_app, args, input=stdin, catch_exceptions=False)
    return Asked(result.exit_code, result.stdout, result.stderr)


def _index_row(out: Path, uuid: str) -> Any:
    index = Index(out / "index" / "archive.sqlite")
    try:
        return index.get(uuid)
    finally:
        index.close()


def _events(out: Path, prefix: str) -> list[dict[str, Any]]:
    events = []
    for path in sorted((out / "index" / "logs").glob(f"{prefix}-*.jsonl")):
        events += [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
    return events


def _agrees_with_truth(sim: RunningSim, folder: Path) -> dict[str, Any]:
    """The archived thread.json agrees with the simulator's truth about the thread."""
    record = orjson.loads((folder / "thread.json").read_bytes())
    truth = {t["uuid"]: t for t in sim_get(sim, "/__sim/truth")["threads"]}[record["uuid"]]
    assert record["mode"] == truth["mode"]
    assert record["counts"]["turns"] == truth["turns"]
    assert record["counts"]["sources"] == truth["unique_citations"]
    return dict(truth)


@pytest.mark.parametrize("mode", sorted(MODE_ARGS))
def test_ask_each_mode_is_archived_with_its_mode(
    sim: RunningSim, tmp_path: Path, mode: str
) -> None:
    """An ask in each mode streams the answer, then the thread is archived under that mode."""
    out = tmp_path / "a"
    done = ask(["ask", f"question in {mode}", *MODE_ARGS[mode], *sim_args(sim, out)])
    assert done.code == 0, done.stderr
    record = done.record
    assert record["mode"] == mode and record["exported"] and record["step_errors"] == []
    folder = Path(record["folder"])
    assert folder.parent.name == mode
    conversation = (folder / "conversation.md").read_text()
    assert f"question in {mode}" in conversation
    row = _index_row(out, record["thread_uuid"])
    assert row is not None and row.mode == mode and row.status == "done"
    _agrees_with_truth(sim, folder)
    streamed = done.stdout.split("\nSources:")[0].strip()
    assert streamed and streamed.splitlines()[0] in conversation
    names = [e["event"] for e in _events(out, "ask")]
    assert (
        names.index("ASK_COMPLETED") < names.index("THREAD_ARCHIVED") < names.index("RUN_SUMMARY")
    )
    if mode == "council":
        assert record["compare_models"] == ["gpt55_thinking", "gemini31pro_high"]


def test_follow_up_adds_a_turn_to_the_archived_thread(sim: RunningSim, tmp_path: Path) -> None:
    """--follow-up continues the thread; the archive's copy gains the second turn in place."""
    out = tmp_path / "a"
    first = ask(["ask", "-", "--json", *sim_args(sim, out)], stdin="first question here\n")
    assert first.code == 0, first.stderr
    assert first.record["answer"] and first.record["sources"]
    thread = first.record["thread_uuid"]
    second = ask(
        ["ask", "second question here", "--follow-up", thread, "--mark-read", *sim_args(sim, out)]
    )
    assert second.code == 0, second.stderr
    assert second.record["thread_uuid"] == thread
    assert second.record["folder"] == first.record["folder"]
    assert second.record["flags"]["follow_up"] and second.record["flags"]["marked_read"]
    assert _agrees_with_truth(sim, Path(second.record["folder"]))["turns"] == 2
    conversation = (Path(second.record["folder"]) / "conversation.md").read_text()
    assert conversation.index("first question here") < conversation.index("second question here")
    assert second.record["context_uuid"] in sim_get(sim, "/__sim/ask")["viewed"]


def test_space_create_then_ask_into_it(sim: RunningSim, tmp_path: Path) -> None:
    """space-create prints the new space; ask --space moves the thread there (best effort)."""
    out = tmp_path / "a"
    made = ask(["space-create", "Reading list", *sim_args(sim, out)])
    assert made.code == 0, made.stderr
    slug = made.record["slug"]
    done = ask(["ask", "into the space", "--space", slug, *sim_args(sim, out)])
    assert done.code == 0 and done.record["flags"]["moved_to_space"]
    moved = sim_get(sim, "/__sim/ask")["moved"]
    assert [done.record["context_uuid"], made.record["uuid"]] in moved
    missing = ask(["ask", "into no space", "--space", "no-such-space", *sim_args(sim, out)])
    assert missing.code == 0  # a failed best-effort step is a warning
    assert missing.record["flags"]["moved_to_space"] is False
    assert missing.record["step_errors"][0]["step"] == "move_to_space"
    assert missing.record["exported"]


@pytest.mark.parametrize(
    ("fault", "code", "words"),
    [
        ("rate_limit", 10, "rate limit"),
        ("failed", 11, "failed"),
        ("clarify", 12, "Which period should the report cover?"),
        ("expired", 13, "session"),
        ("cut", 15, "before the answer completed"),
    ],
)
def test_in_band_errors_exit_with_their_code(
    sim: RunningSim, tmp_path: Path, fault: str, code: int, words: str
) -> None:
    """An in-band error exits with its own code, says what happened and archives nothing."""
    out = tmp_path / "a"
    sim_post(sim, "/__sim/ask", {"faults": [fault]})
    done = ask(["ask", "q", "-m", "deep-research", *sim_args(sim, out)])
    assert done.code == code, done.stderr
    assert words in done.stderr
    assert done.record == {}
    assert not (out / "index" / "archive.sqlite").exists()
    failed = [e for e in _events(out, "ask") if e["event"] == "ASK_FAILED"]
    assert failed and failed[0]["error_kind"].startswith(("Ask", "Clarifying"))


def test_timeout_exits_14(sim: RunningSim, tmp_path: Path) -> None:
    """A stream that goes silent ends with exit 14 after --timeout."""
    sim_post(sim, "/__sim/ask", {"faults": ["stall"]})
    done = ask(["ask", "q", "--timeout", "1", *sim_args(sim, tmp_path / "a")])
    assert done.code == 14, done.stderr
    assert "--timeout" in done.stderr


def test_unknown_model_lists_valid_ids(sim: RunningSim, tmp_path: Path) -> None:
    """An unknown --model is a usage error naming the valid ids; nothing is asked."""
    before = sim_get(sim, "/__sim/ask")["asks"]
    done = ask(["ask", "q", "--model", "gpt2", *sim_args(sim, tmp_path / "a")])
    assert done.code == 2
    assert "'gpt2'" in done.stderr and "pplx_pro" in done.stderr
    assert sim_get(sim, "/__sim/ask")["asks"] == before


def test_models_table_is_cached_with_its_age(sim: RunningSim, tmp_path: Path) -> None:
    """`models --refresh` prints the live table and caches it; plain `models` shows its age."""
    out = tmp_path / "a"
    live = ask(["models", "--refresh", *sim_args(sim, out)])
    assert live.code == 0 and "models (live)" in live.stdout
    assert "pplx_alpha*" in live.stdout
    assert (out / "index" / "config" / "models_config.json").is_file()
    cached = ask(["models", *sim_args(sim, out)])
    assert "models (cached" in cached.stdout and "ago)" in cached.stdout


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_during_the_stream_leaves_the_archive_untouched(
    sim: RunningSim, tmp_path: Path, sig: signal.Signals
) -> None:
    """SIGINT or SIGTERM while the answer streams exits 4 (issue 44: SIGTERM too); the
    archive keeps exactly what it had."""
    out = tmp_path / "a"
    first = ask(["ask", "kept question", *sim_args(sim, out)])
    assert first.code == 0
    thread_json = Path(first.record["folder"]) / "thread.json"
    before = thread_json.read_bytes()
    files_before = sorted(p for p in out.rglob("*") if "logs" not in p.parts)
    sim_post(sim, "/__sim/ask", {"faults": ["stall"]})
    env = {**os.environ, "PPLX_CONFIG_DIR": str(tmp_path / "cfg")}
    code = "from pplx_archiver.cli.ask import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "ask", "interrupted question", *sim_args(sim, out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.read(1)  # blocks until the answer starts streaming
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 4, stderr
    assert b"interrupted" in stderr and b'"thread_uuid"' not in stdout
    assert thread_json.read_bytes() == before
    assert sorted(p for p in out.rglob("*") if "logs" not in p.parts) == files_before
    assert not [p for p in out.rglob("*") if TEMP_PATTERN.search(p.name)]


def test_council_follow_up_keeps_the_threads_members(sim: RunningSim, tmp_path: Path) -> None:
    """A council thread asked with two members is followed up with those two, not the
    config's three defaults."""
    out = tmp_path / "a"
    first = ask(["ask", "council question", *MODE_ARGS["council"], *sim_args(sim, out)])
    assert first.code == 0, first.stderr
    thread = first.record["thread_uuid"]
    second = ask(["ask", "and then?", "--follow-up", thread, *sim_args(sim, out)])
    assert second.code == 0, second.stderr
    assert second.record["mode"] == "council"
    assert second.record["compare_models"] == ["gpt55_thinking", "gemini31pro_high"]


def test_follow_up_into_a_computer_task_is_refused(sim: RunningSim, tmp_path: Path) -> None:
    """A computer thread is refused with one line (exit 2) and nothing is asked."""
    truth = sim_get(sim, "/__sim/truth")["threads"]
    computer = next(t["uuid"] for t in truth if t["mode"] == "computer")
    asks = sim_get(sim, "/__sim/ask")["asks"]
    done = ask(["ask", "go on", "--follow-up", computer, *sim_args(sim, tmp_path / "a")])
    assert done.code == 2
    assert "computer task cannot be continued" in done.stderr
    assert sim_get(sim, "/__sim/ask")["asks"] == asks
