"""The history of a thread folder: versions kept through the writer, verified, listed once."""

from __future__ import annotations

from pathlib import Path

from pplx_archiver.shell.archive.alerts import AlertBook
from pplx_archiver.shell.archive.history import CHUNKS, problems, raw_of, versions
from pplx_archiver.shell.archive.index import Index


def test_alerts_record_a_fact_once(tmp_path: Path) -> None:
    index = Index(tmp_path / "archive.sqlite")
    book = AlertBook(index)
    found = [("MODE_SWITCH", "warning", {"thread_uuid": "t", "mode": "study", "title": "x"})]
    assert book.record(found, 1) == found
    assert book.record(found, 2) == []  # the same fact found again
    renamed = [("MODE_SWITCH", "warning", {"thread_uuid": "t", "mode": "study", "title": "y"})]
    assert book.record(renamed, 3) == []
    other = [("MODE_SWITCH", "warning", {"thread_uuid": "u", "mode": "study"})]
    assert book.record(other, 3) == other
    assert [a.run_id for a in book.list()] == [1, 3]
    assert book.counts(run_id=3) == {"MODE_SWITCH": 1}
    assert [a.thread_uuid for a in book.list(kinds=["MODE_SWITCH"], thread_uuid="u")] == ["u"]
    assert index.forget("u") is False  # no thread row; its alerts go all the same
    assert [a.thread_uuid for a in book.list()] == ["t"]
    index.close()


def _history_folder(tmp_path: Path) -> Path:
    """A folder with two versions: v1 in chunks, v2 the raw file itself."""
    from pplx_archiver.core.thread.rawfile import encode_raw_pages
    from pplx_archiver.core.thread.revisions import sha256, split_chunks
    from pplx_archiver.shell.archive.history import VERSIONS, version_line

    folder = tmp_path / "t"
    (folder / CHUNKS).mkdir(parents=True)
    v1 = encode_raw_pages([({"path": "/a"}, b'{"entries":[]}'), ({"path": "/b"}, b"[1]")])
    v2 = encode_raw_pages([({"path": "/a"}, b'{"entries":[]}'), ({"path": "/b"}, b"[2]")])
    for chunk in split_chunks(v1):
        (folder / CHUNKS / sha256(chunk)).write_bytes(chunk)
    (folder / "raw_entries.json").write_bytes(v2)
    lines = [
        version_line(1, "t1", 1, None, {"raw_entries.json": v1}),
        version_line(2, "t2", 2, None, {"raw_entries.json": v2}),
    ]
    import orjson

    (folder / VERSIONS).write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return folder


def test_every_version_is_rebuilt_and_damage_is_seen(tmp_path: Path) -> None:
    folder = _history_folder(tmp_path)
    lines = versions(folder)
    assert [x["version"] for x in lines] == [1, 2]
    assert raw_of(folder, lines[0])["raw_entries.json"].endswith(b"[1]}\n]}\n")
    assert problems(folder) == []
    chunk = sorted((folder / CHUNKS).iterdir())[0]
    chunk.write_bytes(chunk.read_bytes() + b" ")
    found = problems(folder)
    assert found and any("altered" in p for p in found)
    chunk.unlink()
    assert any("missing" in p for p in problems(folder))


def test_a_fetch_that_renews_signed_urls_only_keeps_no_version(tmp_path: Path) -> None:
    """Pages whose only change is a signed URL's expiry are the version already kept; a page
    that changed is kept as a version; raw files a stopped commit left are not a version."""
    from pplx_archiver.core.archive.writes import ThreadCommit
    from pplx_archiver.shell.archive.commit import file_records
    from pplx_archiver.shell.archive.history import plan_step
    from pplx_archiver.shell.archive.index_schema import ThreadRow
    from tests.shell.store_helpers import raw, result

    def page(expires: int, text: str = "one") -> bytes:
        link = f"https://cdn.example/f.pdf?Expires={expires}&Signature=REDACTED"
        return raw(f'{{"entries":[],"text":"{text}","url":"{link}"}}'.encode())

    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "raw_entries.json").write_bytes(page(100))
    row = ThreadRow(
        uuid="u", account="a", mode="search", title="t", path="t", status="done",
        last_updated="2026-07-20", last_updated_key=None, created=None, attempts=0, error=None,
        error_path=None, updated_in_run=1, remote_deleted=None, completeness=None,
        interruptions=None, variant_count=0, listing=None, archived_at="2026-07-20T00:00:00Z",
        files=file_records({"raw_entries.json": page(100)}),
    )  # fmt: skip

    def plan(data: bytes) -> ThreadCommit:
        return ThreadCommit("a", result("u"), data, None, None, "2026-07-21")

    assert plan_step(folder, row, plan(page(999)), "now") is None
    step = plan_step(folder, row, plan(page(999, "two")), "now")
    assert step is not None and step.version == 2 and step.chunks
    import dataclasses

    stopped = dataclasses.replace(row, files=file_records({"raw_entries.json": page(5)}))
    assert plan_step(folder, stopped, plan(page(999, "two")), "now") is None
