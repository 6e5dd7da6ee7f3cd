"""End to end: `pplx-export vault` on an archive the harvester made from the simulator (#42).

A second run writes nothing; a `sync` that changed a thread rewrites that thread's note only;
text the user wrote outside the markers (above, below, in the properties, in a renamed and
moved note) survives; a `--to` that is not a vault is refused in one line.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from pplx_archiver.core.vault.vault import BEGIN, END
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import RunningSim, serve_in_thread
from tests.e2e.conftest import run_cli, sim_args, sim_get, sim_post

FAST = ("--concurrency", "8", "--rate", "1000", "--burst", "100")
UUID = re.compile(r'^pplx_uuid: "([^"]+)"$', re.MULTILINE)


@pytest.fixture
def sim16() -> Iterator[RunningSim]:
    with serve_in_thread(SimConfig(threads=16)) as sim:
        yield sim


def _archive(sim: RunningSim, out: Path) -> None:
    assert run_cli(["batch", *sim_args(sim, out, *FAST)], out).exit_code == 0
    assert run_cli(["relations", "--out", str(out)], out).exit_code == 0


def _vault(out: Path, to: Path, *extra: str) -> str:
    result = run_cli(["vault", "--out", str(out), "--to", str(to), *extra])
    assert result.exit_code == 0, result.output
    return result.output


def _mtimes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _notes(vault: Path) -> dict[str, Path]:
    found = {}
    for path in vault.rglob("*.md"):
        match = UUID.search(path.read_text(encoding="utf-8"))
        if match:
            found[match.group(1)] = path
    return found


def _done(sim: RunningSim) -> list[str]:
    truth = sim_get(sim, "/__sim/truth")["threads"]
    return [t["uuid"] for t in truth if t["era_state"] == "ok" and t["mode"] == "search"]


def test_notes_then_a_second_run_writes_nothing(sim16: RunningSim, tmp_path: Path) -> None:
    out, vault = tmp_path / "archive", tmp_path / "vault"
    _archive(sim16, out)
    usage = run_cli(["usage-backfill", *sim_args(sim16, out, "--usage-rate", "500")], out)
    assert usage.exit_code == 0, usage.output
    archive_before = _mtimes(out / "simuser")
    first = _vault(out, vault)
    assert " 0 failed" in first
    notes = _notes(vault)
    assert len(notes) == 16
    uuid, path = next(iter(sorted(notes.items())))
    text = path.read_text(encoding="utf-8")
    for key in ("url", "mode", "models", "space", "created", "updated"):
        assert re.search(rf"^{key}: ", text, re.MULTILINE), key
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    credits = [
        p for p in notes.values() if re.search(r'^credits: "\d+\.\d\d"$', p.read_text(), re.M)
    ]
    assert len(credits) == 14, "credits where the usage table has them (2 were forbidden)"
    assert uuid[:8] in path.name and path.parent.name == "Threads"
    reports = list((vault / "Perplexity" / "Reports").glob("*.md"))
    assert reports, "deep-research reports are vault files"
    links = re.findall(r"\[\[([^\]|]+)", "".join(p.read_text() for p in vault.rglob("*.md")))
    names = {p.stem for p in vault.rglob("*.md")} | {
        p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file()
    }
    assert links and all(link in names for link in links), "every wikilink resolves"
    before = _mtimes(vault)
    second = _vault(out, vault)
    assert " 0 written" in second
    counted = orjson.loads(_vault(out, vault, "--json"))
    assert counted["threads"] == 16 and counted["written"] == 0 and counted["failures"] == []
    assert _mtimes(vault) == before
    assert _mtimes(out / "simuser") == archive_before, "the archive is never written"


def test_user_edits_survive_a_sync_that_changed_the_thread(
    sim16: RunningSim, tmp_path: Path
) -> None:
    out, vault = tmp_path / "archive", tmp_path / "vault"
    _archive(sim16, out)
    _vault(out, vault)
    notes = _notes(vault)
    edited, renamed = _done(sim16)[:2]
    path = notes[edited]
    text = path.read_text(encoding="utf-8")
    text = text.replace("---\n", "---\ntags: [mine]\n", 1)  # a property of the user's
    text = text.replace(BEGIN, "My note above.\n\n" + BEGIN)
    path.write_text(text + "\nMy note below.\n", encoding="utf-8")
    moved = vault / "Mine" / "Renamed by me.md"
    moved.parent.mkdir()
    old = notes[renamed]
    moved.write_text(old.read_text(encoding="utf-8") + "\nKept after the rename.\n")
    old.unlink()
    (vault / "Perplexity" / "Threads" / "My own page.md").write_text("untouched\n")
    before = _mtimes(vault)

    sim_post(sim16, "/__sim/mutate", {"edit": [{"thread": edited}, {"thread": renamed}]})
    assert run_cli(["sync", *sim_args(sim16, out, *FAST)], out).exit_code == 0
    _vault(out, vault)

    after = _mtimes(vault)
    changed = {k for k in after if before.get(k) != after[k]}
    thread_notes = {str(p.relative_to(vault)) for p in _notes(vault).values()}
    # Besides the two changed threads, a note changes only when it links the renamed one.
    relinked = {k for k in thread_notes if f"[[{moved.stem}" in (vault / k).read_text()}
    two = {str(path.relative_to(vault)), str(moved.relative_to(vault))}
    assert two <= changed & thread_notes <= two | relinked, "only the changed threads' notes"
    # A source-domain note changes only when the edit changed which threads cite it.
    assert all(
        k.startswith(("Perplexity/Sources/", "Perplexity/Spaces/")) for k in changed - thread_notes
    )
    new = path.read_text(encoding="utf-8")
    assert new != text + "\nMy note below.\n"
    assert "tags: [mine]" in new and "My note above.\n\n" + BEGIN in new
    assert new.endswith(END + "\n\nMy note below.\n")
    assert "Kept after the rename." in moved.read_text(encoding="utf-8")
    assert not old.exists(), "a renamed note is updated where it is, not made again"
    linking = [p for p in vault.rglob("*.md") if f"[[{old.stem}" in p.read_text()]
    assert not linking, "links follow the renamed note"
    assert (vault / "Perplexity" / "Threads" / "My own page.md").read_text() == "untouched\n"


def test_logseq_flavor(sim16: RunningSim, tmp_path: Path) -> None:
    out, vault = tmp_path / "archive", tmp_path / "graph"
    _archive(sim16, out)
    _vault(out, vault, "--flavor", "logseq")
    pages = list((vault / "pages").glob("*.md"))
    threads = [p for p in pages if p.read_text(encoding="utf-8").startswith("pplx_uuid:: ")]
    assert len(threads) == 16
    text = threads[0].read_text(encoding="utf-8")
    assert re.search(r"^url:: https://www\.perplexity\.ai/", text, re.MULTILINE)
    assert "title::" not in text  # Logseq would rename the page away from its links
    before = _mtimes(vault)
    assert " 0 written" in _vault(out, vault, "--flavor", "logseq")
    assert _mtimes(vault) == before


def test_a_folder_that_is_not_a_vault_is_refused(sim16: RunningSim, tmp_path: Path) -> None:
    out = tmp_path / "archive"
    _archive(sim16, out)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    other = tmp_path / "other-archive"
    shutil.copytree(out / "index", other / "index")
    before = _mtimes(out)
    for to, says in (
        (a_file, "is a file"),
        (out, "the archive itself"),
        (out / "simuser" / "notes", "inside the archive"),
        (other, "is an archive"),
    ):
        result = run_cli(["vault", "--out", str(out), "--to", str(to)])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], lines
    bad = run_cli(["vault", "--out", str(out), "--to", str(tmp_path / "v"), "--flavor", "roam"])
    assert bad.exit_code == 2 and "obsidian" in bad.output
    assert _mtimes(out) == before
    assert not (out / "simuser" / "notes").exists()


def test_an_archive_of_an_older_version(sim16: RunningSim, tmp_path: Path) -> None:
    """No relations or usage table, a search index of another version, thread records
    without the newer keys: every thread still gets its note."""
    out, vault = tmp_path / "archive", tmp_path / "vault"
    assert run_cli(["batch", *sim_args(sim16, out, *FAST)], out).exit_code == 0
    db = sqlite3.connect(out / "index" / "archive.sqlite")
    with db:
        db.execute("UPDATE search_meta SET value = '0' WHERE key = 'version'")
    db.close()
    for record in out.rglob("thread.json"):
        data = json.loads(record.read_text())
        for key in ("mode_signals", "lang", "counts"):
            data.pop(key, None)
        record.write_text(json.dumps(data))
    assert " 0 failed" in _vault(out, vault)
    notes = _notes(vault)
    assert len(notes) == 16
    assert all("## 1. " in p.read_text() for p in notes.values()), "turns are read from files"
    # No relations table: the related threads come from the graph computed in memory.
    assert any("## Related threads" in p.read_text() for p in notes.values())
    assert not (out / "relations").exists()
