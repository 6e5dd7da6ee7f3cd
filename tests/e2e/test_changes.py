"""What changed: versions kept, rewrites and substitutions found once, incomplete threads named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pplx_archiver.shell.archive.index import Index
from pplx_archiver.sim.runner import RunningSim
from tests.e2e.conftest import CliResult, run_cli, sim_args, sim_get, sim_post

FAST = ("--concurrency", "8", "--rate", "1000", "--burst", "100")


def _search_thread(sim: RunningSim) -> str:
    truth = sim_get(sim, "/__sim/truth")["threads"]
    return next(t["uuid"] for t in truth if t["mode"] == "search" and t["era_state"] == "ok")


def _events(result: CliResult, name: str) -> list[dict[str, Any]]:
    return [e for e in result.events if e["event"] == name]


def _folder(out: Path, uuid: str) -> Path:
    index = Index(out / "index" / "archive.sqlite", read_only=True)
    try:
        row = index.get(uuid)
        assert row is not None and row.path
        return out / row.path
    finally:
        index.close()


def _json(args: list[str], out: Path) -> Any:
    result = run_cli(args, out)
    assert result.exit_code == 0, result.output
    return orjson.loads(result.output)


def test_rewrite_keeps_both_versions_and_is_reported_once(
    sim60: RunningSim, tmp_path: Path
) -> None:
    out = tmp_path / "a"
    assert run_cli(["batch", *sim_args(sim60, out, *FAST)], out).exit_code == 0
    uuid = _search_thread(sim60)
    folder = _folder(out, uuid)
    old_raw = (folder / "raw_entries.json").read_bytes()
    assert not (folder / "history").exists()  # one fetch: no history yet

    sim_post(sim60, "/__sim/mutate", {"edit": [{"thread": uuid}]})
    second = run_cli(["sync", *sim_args(sim60, out, *FAST)], out)
    assert second.exit_code == 0, second.output
    rewrites = _events(second, "ANSWER_REWRITTEN")
    assert len(rewrites) == 1 and rewrites[0]["thread_uuid"] == uuid
    assert rewrites[0]["silent"] is False and "answer" in rewrites[0]["changed"]
    assert (folder / "raw_entries.json").read_bytes() != old_raw

    versions = _json(["history", uuid, "--out", str(out), "--json"], out)
    assert [v["version"] for v in versions] == [1, 2] and versions[1]["current"]
    assert versions[1]["changes"]["entries"][0]["answer"] is True

    diff = _json(["diff", uuid[:8], "--out", str(out), "--json"], out)
    entry = diff["entries"][0]
    removed = "".join(t for op, t in entry["answer_diff"] if op == "-").split()
    added = "".join(t for op, t in entry["answer_diff"] if op == "+").split()
    assert removed and added and removed != added
    assert entry["sources_added"] and entry["sources_removed"]
    text = run_cli(["diff", uuid, "--out", str(out)], out)
    assert text.exit_code == 0 and "[-" in text.output and "{+" in text.output

    # version 1 is rebuilt byte for byte from its chunks
    from pplx_archiver.shell.archive.history import raw_of
    from pplx_archiver.shell.archive.history import versions as read_versions

    lines = read_versions(folder)
    assert raw_of(folder, lines[0])["raw_entries.json"] == old_raw

    third = run_cli(["sync", *sim_args(sim60, out, *FAST, "--force")], out)
    assert third.exit_code == 0, third.output
    assert not _events(third, "ANSWER_REWRITTEN")
    assert not _events(third, "ANSWER_VARIANT_DETECTED")
    assert len(read_versions(folder)) == 2
    listed = _json(["alerts", "--out", str(out), "--kind", "ANSWER_REWRITTEN", "--json"], out)
    assert len(listed) == 1 and listed[0]["thread_uuid"] == uuid
    assert run_cli(["verify", "--out", str(out)], out).exit_code == 0

    # version 1 rendered on request, outside the archive; the archive keeps the newest
    older = tmp_path / "v1"
    rendered = run_cli(["history", uuid, "--out", str(out), "--render", "1", "--to", str(older)])
    assert rendered.exit_code == 0, rendered.output
    newest = (folder / "conversation.md").read_text(encoding="utf-8")
    gone = [
        w
        for op, t in entry["answer_diff"]
        if op == "-"
        for w in t.split()
        if w.isalpha() and len(w) > 4 and w not in newest
    ]
    assert gone and all(w in (older / "conversation.md").read_text(encoding="utf-8") for w in gone)
    inside = run_cli(["history", uuid, "-o", str(out), "--render", "1", "--to", str(out / "x")])
    assert inside.exit_code == 2 and "inside the archive" in inside.output

    chunk = next((folder / "history" / "chunks").iterdir())
    chunk.write_bytes(chunk.read_bytes()[:-1])
    damaged = run_cli(["verify", "--out", str(out)], out)
    assert damaged.exit_code == 1 and "history_damaged" in damaged.output


def test_silent_rewrite_is_said_silent(sim60: RunningSim, tmp_path: Path) -> None:
    out = tmp_path / "a"
    assert run_cli(["batch", *sim_args(sim60, out, *FAST)], out).exit_code == 0
    uuid = _search_thread(sim60)
    sim_post(sim60, "/__sim/mutate", {"edit": [{"thread": uuid, "silent": True}]})
    quiet = run_cli(["sync", *sim_args(sim60, out, *FAST)], out)
    assert quiet.exit_code == 0 and not _events(quiet, "ANSWER_REWRITTEN")
    full = run_cli(["sync", *sim_args(sim60, out, *FAST, "--force")], out)
    assert full.exit_code == 0, full.output
    rewrites = _events(full, "ANSWER_REWRITTEN")
    assert [r["thread_uuid"] for r in rewrites] == [uuid] and rewrites[0]["silent"] is True
    # every other thread refetched unchanged: no version added anywhere else
    assert sorted(p.parent.parent for p in out.rglob("history/versions.jsonl")) == [
        _folder(out, uuid)
    ]


def test_model_substitution_found_once_and_audited(sim60: RunningSim, tmp_path: Path) -> None:
    out = tmp_path / "a"
    first = run_cli(["batch", *sim_args(sim60, out, *FAST)], out)
    assert first.exit_code == 0 and not _events(first, "MODEL_SUBSTITUTED")
    uuid = _search_thread(sim60)
    sim_post(sim60, "/__sim/mutate", {"substitute": [{"thread": uuid, "served": "turbo"}]})
    second = run_cli(["sync", *sim_args(sim60, out, *FAST)], out)
    found = _events(second, "MODEL_SUBSTITUTED")
    assert len(found) == 1 and found[0]["served"] == "turbo" and found[0]["thread_uuid"] == uuid
    again = run_cli(["sync", *sim_args(sim60, out, *FAST, "--force")], out)
    assert again.exit_code == 0 and not _events(again, "MODEL_SUBSTITUTED")
    table = _json(["audit", "models", "--out", str(out), "--json"], out)
    substituted = [r for r in table if r["substituted"]]
    assert sum(r["turns"] for r in substituted) == 1 and substituted[0]["served"] == "turbo"
    assert sum(r["turns"] for r in table) > 60


def test_failed_report_makes_the_thread_incomplete_everywhere(
    sim60: RunningSim, tmp_path: Path
) -> None:
    out = tmp_path / "a"
    sim_post(sim60, "/__sim/mutate", {"fail_reports": True})
    first = run_cli(["batch", *sim_args(sim60, out, *FAST)], out)
    assert first.exit_code == 1, first.output
    incomplete = _events(first, "RUN_SUMMARY")[0]["incomplete"]
    assert incomplete and all(i["report_missing"] for i in incomplete)
    assert "incomplete" in first.output
    uuids = {i["thread_uuid"] for i in incomplete}
    assert {e["thread_uuid"] for e in _events(first, "THREAD_INCOMPLETE")} == uuids

    status = _json(["status", "--out", str(out), "--json"], out)
    assert {i["thread_uuid"] for i in status["incomplete"]} == uuids
    failed = _json(["failed", "--out", str(out), "--json"], out)
    assert uuids <= {f["thread_uuid"] for f in failed}
    verify = run_cli(["verify", "--out", str(out)], out)
    assert verify.exit_code == 1 and "incomplete" in verify.output

    again = run_cli(["sync", *sim_args(sim60, out, *FAST)], out)  # retried, still failing
    assert again.exit_code == 1 and not _events(again, "THREAD_INCOMPLETE")
    archived = {e["thread_uuid"] for e in _events(again, "THREAD_ARCHIVED")}
    assert uuids <= archived

    sim_post(sim60, "/__sim/mutate", {"fail_reports": False})
    whole = run_cli(["sync", *sim_args(sim60, out, *FAST)], out)
    assert whole.exit_code == 0, whole.output
    for uuid in uuids:
        assert (_folder(out, uuid) / "report.md").is_file()
    assert run_cli(["verify", "--out", str(out)], out).exit_code == 0


def test_console_ends_with_a_digest_not_a_line_per_finding(
    sim60: RunningSim, tmp_path: Path
) -> None:
    out = tmp_path / "a"
    args = sim_args(sim60, out, *FAST)
    args[args.index("--log-format") + 1] = "console"
    first = run_cli(["batch", *args], out)
    assert first.exit_code == 0, first.output
    interrupted = len(_events(first, "WORKFLOW_INTERRUPTED"))
    assert interrupted  # the simulated account has findings, all in the JSON log
    lines = first.output.splitlines()
    digest = [line for line in lines if "new findings:" in line]
    assert len(digest) == 1 and f"WORKFLOW_INTERRUPTED {interrupted}" in digest[0]
    assert [line for line in lines if "WORKFLOW_INTERRUPTED" in line] == digest
    assert "alerts --out" in first.output
    again = run_cli(["sync", *args, "--force"], out)
    assert again.exit_code == 0 and "new findings" not in again.output
