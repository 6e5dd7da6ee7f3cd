"""The site writer: pages from the decoded archive, incremental rebuilds, the CLI."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from pplx_archiver.cli import _register, app
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.site import build as site_build
from pplx_archiver.site import offline_search
from pplx_archiver.site.build import build_site
from pplx_archiver.site.offline_search import SEARCH_DIR
from pplx_archiver.site.pages import SEARCH_JS, page_id
from tests.site.builders import THREADS, build, harvest, slug_of


def _pages(site: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (site / "threads").glob("*.html")}


def _search(site: Path) -> dict[str, bytes]:
    """The search index's files: the head and every shard, by name."""
    files = {p.name: p.read_bytes() for p in sorted((site / SEARCH_DIR).glob("*.js"))}
    return {SEARCH_JS: (site / SEARCH_JS).read_bytes(), **files}


def _search_text(site: Path) -> bytes:
    return b"".join(_search(site).values())


def test_build_writes_every_page(tmp_path: Path) -> None:
    """A build writes the index, a page per thread and per space, and the search index."""
    build(tmp_path)
    with Archive(tmp_path) as archive:
        summary = build_site(archive)
    site = tmp_path / "site"
    assert (summary.threads, summary.built, summary.failed) == (4, 4, 0)
    assert sorted(_pages(site)) == sorted(f"{page_id(slug_of(t['key']))}.html" for t in THREADS)
    index = (site / "index.html").read_text()
    assert "Photosynthesis basics" in index and "量子计算入门" in index
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in index
    assert len(list((site / "spaces").glob("*.html"))) == 1
    page = (site / "threads" / f"{page_id(slug_of(2))}.html").read_text()
    assert 'href="../../me/deep-research/' in page and "conversation.md" in page
    assert "Content-Security-Policy" in page and "script-src 'self'" in page
    assert (site / SEARCH_JS).read_bytes().startswith(b"window.PPLX_SEARCH = ")
    assert b"photosynthesis" in _search_text(site)


def test_rebuild_rewrites_only_changed_threads(tmp_path: Path) -> None:
    """After one thread changes, only its page is rebuilt; a vanished thread's page goes."""
    build(tmp_path)
    site = tmp_path / "site"
    with Archive(tmp_path) as archive:
        build_site(archive)
        before = _pages(site)
        again = build_site(archive)
        assert (again.built, again.unchanged, again.files_written) == (0, 4, 0)
        assert _pages(site) == before
        harvest(archive, THREADS[0], answer="A new answer about chlorophyll.")
        archive.terminal(slug_of(4), "deleted", archive.begin_run("test"))
        third = build_site(archive)
    after = _pages(site)
    changed = {name for name in after if after[name] != before.get(name)}
    assert (third.built, third.unchanged, third.removed) == (1, 2, 1)
    assert changed == {f"{page_id(slug_of(1))}.html"}
    assert f"{page_id(slug_of(4))}.html" not in after
    assert b"chlorophyll" in _search_text(site)
    manifest = orjson.loads((site / "manifest.json").read_bytes())
    assert sorted(manifest["threads"]) == sorted(slug_of(k) for k in (1, 2, 3))


def test_rebuild_hashes_only_moved_files_and_merges_kept_terms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild reads and hashes only the threads whose files were rewritten; the search
    index merged from the terms kept in ``data/`` equals the one of tokenizing every turn
    again (what a data file without terms gets)."""
    build(tmp_path)
    site = tmp_path / "site"
    real = site_build._digest
    hashed: list[Path] = []

    def counting(folder: Path, fields: bytes) -> str:
        hashed.append(folder)
        return real(folder, fields)

    monkeypatch.setattr(site_build, "_digest", counting)
    with Archive(tmp_path) as archive:
        build_site(archive)
        assert len(hashed) == 4
        harvest(archive, THREADS[0], answer="A new answer about chlorophyll.")
        hashed.clear()
        again = build_site(archive)
        assert (again.built, again.unchanged, len(hashed)) == (1, 3, 1)
        merged = _search(site)
        assert b"chlorophyll" in b"".join(merged.values())
        for path in (site / "data").glob("*.json"):
            data = orjson.loads(path.read_bytes())
            assert len(data["terms"]) == len(data["search"])
            path.write_bytes(orjson.dumps({"search": data["search"]}))
        (site / SEARCH_JS).unlink()
        build_site(archive)
    assert _search(site) == merged


def test_search_shards_left_over_from_a_larger_index_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the index needs fewer shards than the last build wrote, the extra ones go; the
    shards and the head always describe each other."""
    build(tmp_path)
    site = tmp_path / "site"
    with Archive(tmp_path) as archive:
        monkeypatch.setattr(offline_search, "_SHARD_BYTES", 8)
        monkeypatch.setattr(offline_search, "DOCS_PER_SHARD", 1)
        build_site(archive, full=True)
        many = sorted(_search(site))
        monkeypatch.undo()
        build_site(archive, full=True)
    head = orjson.loads((site / SEARCH_JS).read_bytes()[len(b"window.PPLX_SEARCH = ") : -2])
    few = sorted(_search(site))
    assert len(many) > len(few) == 1 + head["term_shards"] + 1
    assert set(few) == {SEARCH_JS, "t0.js", "d0.js"}


def test_a_rebuild_with_nothing_changed_does_not_make_the_indexes_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No page built or removed and the index and search files whole: the search index is
    not made again (no data file read); a missing shard or index page makes it again."""
    build(tmp_path)
    site = tmp_path / "site"
    made: list[int] = []
    real = offline_search.search_files

    def counting(docs: Any) -> dict[str, bytes]:
        made.append(1)
        return real(docs)

    monkeypatch.setattr(offline_search, "search_files", counting)
    with Archive(tmp_path) as archive:
        build_site(archive)
        before = _search(site)
        assert len(made) == 1
        again = build_site(archive)
        assert (again.built, again.files_written, len(made)) == (0, 0, 1)
        (site / SEARCH_DIR / "d0.js").unlink()
        build_site(archive)
        assert len(made) == 2 and _search(site) == before
        (site / "index.html").unlink()
        build_site(archive)
        assert len(made) == 3 and (site / "index.html").is_file()
        harvest(archive, THREADS[0], answer="A new answer about chlorophyll.")
        build_site(archive)
        assert len(made) == 4 and b"chlorophyll" in _search_text(site)


def test_cli_site_to_folder_and_refusal(tmp_path: Path) -> None:
    """`site --to DIR` writes there; the archive root itself is refused with exit 2."""
    build(tmp_path / "a")
    _register()
    runner = CliRunner()
    ok = runner.invoke(app, ["site", "-o", str(tmp_path / "a"), "--to", str(tmp_path / "w")])
    assert ok.exit_code == 0, ok.output
    assert "4 pages built" in ok.output and (tmp_path / "w" / "index.html").is_file()
    page = (tmp_path / "w" / "threads" / f"{page_id(slug_of(1))}.html").read_text()
    assert 'href="../../a/me/search/' in page
    bad = runner.invoke(app, ["site", "-o", str(tmp_path / "a"), "--to", str(tmp_path / "a")])
    assert bad.exit_code == 2
    assert "cannot be written over the archive" in bad.output


def test_site_help_ends_with_examples() -> None:
    """`site --help` explains the command and its description ends with examples."""
    _register()
    out = CliRunner().invoke(app, ["site", "--help"], terminal_width=120).output
    assert "file://" in out
    description = out.split("Options")[0].rstrip().splitlines()
    assert "Examples:" in out
    assert description[-1].strip().startswith("pplx-export site --out archive --to")


def test_control_characters_never_reach_a_page(tmp_path: Path) -> None:
    """Control characters in a title or answer are shown as U+FFFD, never written."""
    spec = {
        "key": 9,
        "title": "ctrl\x00chars\x07and\x1bescape",
        "query": "q\x08",
        "answer": "bell\x07 nul\x00 del\x7f",
        "mode": "SEARCH",
    }
    build(tmp_path, (spec,))
    with Archive(tmp_path) as archive:
        build_site(archive)
    for name in ("index.html", f"threads/{page_id(slug_of(9))}.html"):
        data = (tmp_path / "site" / name).read_bytes()
        assert not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", data), name
        assert "ctrl\ufffdchars\ufffdand\ufffdescape".encode() in data


def test_undecodable_thread_gets_a_degraded_page(tmp_path: Path) -> None:
    """A thread whose raw file is broken gets a page saying so, flagged degraded; exit 1."""
    paths = build(tmp_path)
    (tmp_path / paths[0] / "raw_entries.json").write_bytes(b"{not json")
    _register()
    result = CliRunner().invoke(app, ["site", "-o", str(tmp_path), "--log-format", "json"])
    (log_file,) = (tmp_path / "index" / "logs").glob("site-*.jsonl")
    logs = [orjson.loads(line) for line in log_file.read_bytes().splitlines()]
    assert result.exit_code == 1, result.output
    assert "3 pages built" in result.output and "1 failed" in result.output
    failed = [e for e in logs if e["event"] == "SITE_THREAD_FAILED"]
    assert [e["thread_uuid"] for e in failed] == [slug_of(1)]
    page = (tmp_path / "site" / "threads" / f"{page_id(slug_of(1))}.html").read_text()
    assert "could not be decoded" in page
    index = (tmp_path / "site" / "index.html").read_text()
    row = next(line for line in index.splitlines() if "Photosynthesis basics" in line)
    assert 'data-flags="degraded"' in row
