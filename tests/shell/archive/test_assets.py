"""Asset sessions: handles recorded, inline written, URLs refreshed once, reuse, the report pick."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from structlog.testing import capture_logs

from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.core.thread.model import ListingRow, ThreadInput
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.errors import NotFoundError
from pplx_archiver.shell.archive.assets import MANIFEST, AssetSession, choose_extension, file_stem
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.net.download import CdnDownloader
from tests.commit_door import commit_thread
from tests.core import builders as b

FRESH = "Expires=4102444800&Signature=sig&Key-Pair-Id=K"  # year 2100
OLD = "Expires=1000&Signature=old&Key-Pair-Id=K"


def _asset(uid: str, name: str, created: int, url: str | None, **extra: Any) -> dict[str, Any]:
    kind = extra.pop("kind", "RESEARCH_REPORT")
    key = "research_report" if kind == "RESEARCH_REPORT" else "doc_file"
    return {
        "uuid": uid,
        "asset_type": kind,
        "created_at": str(created),
        "title": name,
        key: {"url": url, "file_name": name, "filename": name},
        **extra,
    }


def _thread(assets: list[dict[str, Any]]) -> ThreadInput:
    block = {"intended_usage": "unified_assets", "unified_assets_block": {"assets": assets}}
    entry = b.entry("e1", 0, blocks=[block, b.answer_block("Answer.")])
    entry["search_mode"] = "RESEARCH"
    inp = b.thread_input([], [b.page([entry])])
    return dataclasses.replace(inp, listing=ListingRow(thread_id=inp.thread_id))


class FakeApi:
    """The asset-data endpoint: a fresh URL per uuid, or 404 for unknown ones."""

    def __init__(self, fresh: dict[str, str]) -> None:
        self.fresh = fresh
        self.calls: list[str] = []

    async def get_json(
        self, path: str, params: Any = None, *, kind: str | None = None
    ) -> tuple[Any, bytes]:
        self.calls.append(path)
        uid = path.split("/")[3]
        if uid not in self.fresh:
            raise NotFoundError("not found", status=404, url=path)
        body = {"asset_data": {"research_report": {"url": self.fresh[uid]}}}
        return body, orjson.dumps(body)


def _cdn(bodies: dict[str, bytes], log: list[str]) -> CdnDownloader:
    """A CDN answering by path; signatures other than ``sig`` are refused with 403."""

    def handler(request: httpx.Request) -> httpx.Response:
        log.append(str(request.url))
        if request.url.params.get("Signature") != "sig":
            return httpx.Response(403, content=b"<Error>AccessDenied</Error>")
        return httpx.Response(200, content=bodies[request.url.path])

    async def no_sleep(_s: float) -> None:
        return None

    return CdnDownloader(transport=httpx.MockTransport(handler), sleep=no_sleep, max_bytes=1000)


def _session(tmp_path: Path, cdn: CdnDownloader | None, api: FakeApi | None) -> AssetSession:
    return AssetSession(tmp_path / "staging", downloader=cdn, api=api, clock=lambda: 2_000_000_000)


def test_extension_order() -> None:
    """Magic bytes first, then (for text) the URL path unless it contradicts the content,
    text heuristics, asset type, file name; ``.txt``/``.bin`` otherwise."""
    assert choose_extension("https://c/a/report.PDF?x=1", b"# hi", "DOC_FILE", "a.md") == ".md"
    assert choose_extension("https://c/a/notes.csv?x=1", b"a,b\n1,2", "DOC_FILE", "a") == ".csv"
    assert choose_extension("https://c/a/blob", b"%PDF-1.7", "DOC_FILE", "a.md") == ".pdf"
    assert choose_extension(None, b"--- a.py\n+++ b.py\n", "UNKNOWN", "x") == ".diff"
    assert choose_extension(None, b"plain words", "RESEARCH_REPORT", "x.txt") == ".md"
    assert choose_extension(None, b"plain words", "UNKNOWN", "notes.rst") == ".rst"
    assert choose_extension(None, b"plain words", "UNKNOWN", "notes") == ".txt"
    assert choose_extension(None, b"\x00\x01\x02", "UNKNOWN", "notes") == ".bin"
    assert file_stem("../../etc/passwd.md") == "etc-passwd"


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
GIF = b"GIF89a\x01\x00\x01\x00"
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 "
PDF = b"%PDF-1.7\n%\xe2\xe3"


@pytest.mark.parametrize(
    ("head", "ext"),
    [
        (PNG, ".png"),
        (JPEG, ".jpg"),
        (GIF, ".gif"),
        (WEBP, ".webp"),
        (PDF, ".pdf"),
        (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>', ".svg"),
        (b"<svg viewBox='0 0 1 1'></svg>", ".svg"),
        (b"<!DOCTYPE html><html><body>x</body></html>", ".html"),
        (b'{"figure": [1, 2, 3]}', ".json"),
        (b"just some words", ".txt"),
        (b"\x00\x01\x02\x03", ".bin"),
    ],
)
def test_extension_follows_the_content(head: bytes, ext: str) -> None:
    """Whatever the URL, asset type and file name say (here: a Markdown figure), the content's
    magic bytes decide: a PNG is never stored as ``figure-data.v1.md``."""
    url = "https://cdn.test/a/figure-data.md?x=1"
    declared = ".md" if ext == ".txt" else ext  # plain text keeps the declared text name
    assert choose_extension(url, head, "DOC_FILE", "figure-data.md") == declared
    assert choose_extension(None, head, "UNKNOWN", "figure-data") == ext


def test_declared_container_formats_are_kept() -> None:
    """A zip named .docx stays .docx, a JPEG named .jpeg stays .jpeg; a PNG named .jpeg is .png."""
    assert choose_extension("https://c/a/r.docx", b"PK\x03\x04rest", "DOC_FILE", "r") == ".docx"
    assert choose_extension(None, JPEG, "UNKNOWN", "photo.jpeg") == ".jpeg"
    assert choose_extension(None, PNG, "UNKNOWN", "photo.jpeg") == ".png"
    assert choose_extension("https://c/a/figure.png", b"# hi", "DOC_FILE", "figure.png") == ".md"


async def test_a_downloaded_png_is_named_by_its_content(tmp_path: Path) -> None:
    """The session names a PNG served under a ``.md`` URL as ``.png`` in the manifest."""
    inp = _thread(
        [
            _asset(
                "p1",
                "figure-data.md",
                100,
                f"https://cdn.test/p1/figure-data.md?{FRESH}",
                kind="DOC_FILE",
            )
        ]
    )
    async with _cdn({"/p1/figure-data.md": PNG + b"\x00" * 64}, []) as cdn:
        outcome = await _session(tmp_path, cdn, None).collect("t9", extract_assets(inp))
    (entry,) = outcome.entries
    assert entry["path"] == "assets/figure-data.v1.png"
    assert list(outcome.staged_paths()) == ["assets/figure-data.v1.png"]


async def test_versions_handles_inline_and_refresh(tmp_path: Path) -> None:
    """Downloads, handles, inline diffs and an expired URL (refreshed once) all land in the
    manifest; no URL query is stored and the refresh is logged without one."""
    inp = _thread(
        [
            _asset("r1", "report.md", 100, f"https://cdn.test/r1/report.md?{FRESH}"),
            _asset("r2", "report.md", 200, f"https://cdn.test/r2/report.md?{OLD}"),
            _asset("toolu_01abc", "workspace.md", 150, None, kind="DOC_FILE"),
            {
                "uuid": "d1",
                "asset_type": "ASSET_DIFF",
                "created_at": "120",
                "title": "change",
                "asset_diff": {
                    "files": [
                        {"filename": "a.py", "lines": [{"kind": "ADD", "text": "x = 1"}]},
                    ]
                },
            },
            _asset("n1", "nothing.md", 130, None, kind="DOC_FILE"),
        ]
    )
    bodies = {"/r1/report.md": b"# Old draft\n", "/r2/report.md": b"# Final $x$\n"}
    requests: list[str] = []
    api = FakeApi({"r2": f"https://cdn.test/r2/report.md?{FRESH}"})
    async with _cdn(bodies, requests) as cdn:
        with capture_logs() as logs:
            outcome = await _session(tmp_path, cdn, api).collect(
                "t1", extract_assets(inp), folder=None
            )
    by_uuid = {e["uuid"]: e for e in outcome.entries}
    assert by_uuid["toolu_01abc"]["status"] == "handle"
    assert by_uuid["n1"]["status"] == "no_channel"
    assert by_uuid["d1"]["source"] == "inline"
    assert outcome.files[by_uuid["d1"]["path"]] == b"--- a.py\n+x = 1"
    assert by_uuid["r2"]["path"] == "assets/report.v2.md"
    assert outcome.staged_paths()["assets/report.v2.md"].read_bytes() == b"# Final $x$\n"
    assert by_uuid["r2"]["sha256"] == hashlib.sha256(b"# Final $x$\n").hexdigest()
    assert api.calls == ["/rest/assets/r2/data"]
    assert not any("Signature=old" in r for r in requests)  # known-expired: refreshed first
    assert outcome.complete
    manifest = outcome.files[MANIFEST]
    assert b"?" not in manifest and b"Signature" not in manifest
    assert [(r.asset_uuid, r.version) for r in outcome.reports] == [("r1", 1), ("r2", 2)]
    refreshed = [e for e in logs if e["event"] == "ASSET_URL_REFRESHED"]
    assert refreshed and refreshed[0]["asset_uuid"] == "r2"
    assert "Signature" not in repr(logs)


async def test_refused_url_refreshed_once_then_failed(tmp_path: Path) -> None:
    """A CDN 403 triggers one refresh; a refresh answering 404 makes the version failed and the
    thread's assets incomplete, logged as ASSET_FAILED."""
    inp = _thread(
        [
            _asset("a1", "a.md", 100, "https://cdn.test/a1/a.md?Signature=bad"),
            _asset("a2", "b.md", 100, "https://cdn.test/a2/b.md?Signature=bad"),
        ]
    )
    requests: list[str] = []
    api = FakeApi({"a1": f"https://cdn.test/a1/a.md?{FRESH}"})
    async with _cdn({"/a1/a.md": b"# A\n"}, requests) as cdn:
        with capture_logs() as logs:
            outcome = await _session(tmp_path, cdn, api).collect("t2", extract_assets(inp))
    by_uuid = {e["uuid"]: e for e in outcome.entries}
    assert by_uuid["a1"]["status"] == "stored"
    assert by_uuid["a2"]["status"] == "failed"
    assert "404" in by_uuid["a2"]["reason"]
    assert not outcome.complete
    failed = [e for e in logs if e["event"] == "ASSET_FAILED"]
    assert [e["asset_uuid"] for e in failed] == ["a2"]
    assert failed[0]["url_path"] == "/a2/b.md"


async def test_too_large_is_recorded_not_stored(tmp_path: Path) -> None:
    """A version above the cap is recorded as too_large (final: assets still complete)."""
    inp = _thread([_asset("big", "big.md", 100, f"https://cdn.test/big/big.md?{FRESH}")])
    async with _cdn({"/big/big.md": b"x" * 5000}, []) as cdn:
        with capture_logs() as logs:
            outcome = await _session(tmp_path, cdn, None).collect("t3", extract_assets(inp))
    entry = outcome.entries[0]
    assert entry["status"] == "too_large" and "path" not in entry
    assert outcome.staged == () and outcome.complete
    assert [e["limit"] for e in logs if e["event"] == "ASSET_TOO_LARGE"] == [1000]


async def test_newest_empty_or_binary_report_is_skipped(tmp_path: Path) -> None:
    """report.md comes from the newest usable version; the empty and binary newer ones are
    skipped with REPORT_SKIPPED findings."""
    inp = _thread(
        [
            _asset("v1", "r.md", 100, f"https://cdn.test/v1/r.md?{FRESH}"),
            _asset("v2", "r.md", 200, f"https://cdn.test/v2/r.md?{FRESH}"),
            _asset("v3", "r.md", 300, f"https://cdn.test/v3/r.md?{FRESH}"),
        ]
    )
    bodies = {"/v1/r.md": b"# Usable\n", "/v2/r.md": b"\x89PNG\r\n\x1a\nxx", "/v3/r.md": b""}
    async with _cdn(bodies, []) as cdn:
        outcome = await _session(tmp_path, cdn, None).collect("t4", extract_assets(inp))
    result = render_thread(dataclasses.replace(inp, downloads=outcome.reports), b.CTX)
    assert result.files["report.md"] == b"# Usable\n"
    skipped = [dict(f.fields) for f in result.findings if f.event == "REPORT_SKIPPED"]
    assert [(s["asset_uuid"], s["reason"]) for s in skipped] == [("v3", "empty"), ("v2", "binary")]


async def test_stored_versions_are_reused(tmp_path: Path) -> None:
    """A stored file matching its manifest entry is not downloaded again; a damaged one is."""
    inp = _thread(
        [
            _asset("r1", "r.md", 100, f"https://cdn.test/r1/r.md?{FRESH}"),
            _asset("r2", "r.md", 200, f"https://cdn.test/r2/r.md?{FRESH}"),
        ]
    )
    bodies = {"/r1/r.md": b"# one\n", "/r2/r.md": b"# two\n"}
    folder = tmp_path / "thread"
    first: list[str] = []
    async with _cdn(bodies, first) as cdn:
        outcome = await _session(tmp_path, cdn, None).collect("t5", extract_assets(inp))
    for rel, staged in outcome.staged_paths().items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        staged.replace(folder / rel)
    (folder / MANIFEST).write_bytes(outcome.files[MANIFEST])
    (folder / "assets" / "r.v2.md").write_bytes(b"# tampered\n")
    again: list[str] = []
    async with _cdn(bodies, again) as cdn:
        second = await _session(tmp_path, cdn, None).collect(
            "t5", extract_assets(inp), folder=folder
        )
    assert len(first) == 2
    assert [u.split("?")[0] for u in again] == ["https://cdn.test/r2/r.md"]
    assert second.files[MANIFEST] == outcome.files[MANIFEST]
    assert [r.data for r in second.reports] == [b"# one\n", b"# two\n"]


async def test_offline_session_records_missing(tmp_path: Path) -> None:
    """Without a downloader, downloadable versions are recorded missing and assets incomplete."""
    inp = _thread([_asset("r1", "r.md", 100, f"https://cdn.test/r1/r.md?{FRESH}")])
    outcome = await _session(tmp_path, None, None).collect("t6", extract_assets(inp))
    assert outcome.entries[0]["status"] == "missing"
    assert not outcome.complete


def test_store_moves_staged_files_and_records_incomplete(tmp_path: Path) -> None:
    """The store moves staged files in before marking done and keeps a thread with failed assets
    for a retry."""
    inp = _thread([])
    result = render_thread(inp, b.CTX)
    staged = tmp_path / "index" / "staging" / "0.bin"
    staged.parent.mkdir(parents=True)
    staged.write_bytes(b"payload")
    with Archive(tmp_path) as archive:
        outcome = commit_thread(
            archive,
            "acct",
            result,
            b"{}",
            None,
            None,
            extra_files={MANIFEST: b"{}\n"},
            staged_files={"assets/a.v1.bin": staged},
            assets_complete=False,
        )
        folder = archive.folder(outcome.path)
        assert (folder / "assets" / "a.v1.bin").read_bytes() == b"payload"
        assert not staged.exists()
        state = archive.stored_state(result.thread_uuid)
        assert state is not None and state.status == "done" and not state.complete
