"""The variant registry appends only new or changed records and survives torn appends."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.archive.index import Index
from pplx_archiver.shell.archive.registry import Registry, read_lines

REC = {
    "thread_uuid": "t1",
    "uuid8": "t1",
    "title": "T",
    "entry_uuid": "e1",
    "sibling_uuid": "s1",
    "selection_status": "SELECTED",
    "experiment_role": "[treatment]",
}


def _clock() -> str:
    return "2026-08-01T00:00:00Z"


def test_register_is_idempotent_and_tracks_changes(tmp_path: Path) -> None:
    """Same record twice appends once; a changed record is appended and reported as changed."""
    idx = Index(tmp_path / "a.sqlite")
    path = tmp_path / "log.jsonl"
    reg = Registry(path, idx, clock=_clock)
    assert reg.register([REC], "online") == [(REC, "new")]
    assert reg.register([REC], "online") == []
    assert Registry(path, idx).register([REC], "offline") == []
    changed = {**REC, "selection_status": "NOT_SELECTED"}
    assert reg.register([changed, changed], "offline") == [(changed, "changed")]
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert [(ln["change"], ln["source"]) for ln in lines] == [
        ("new", "online"),
        ("changed", "offline"),
    ]
    assert Registry(path).current() == {("t1", "e1"): changed}
    assert idx.variants() == [changed]
    idx.close()


def test_bad_source_and_keyless_record_are_refused(tmp_path: Path) -> None:
    """A source other than online/offline, or a record without its keys, is a StoreError."""
    reg = Registry(tmp_path / "log.jsonl")
    with pytest.raises(StoreError, match="source"):
        reg.register([REC], "web")
    with pytest.raises(StoreError, match="entry_uuid"):
        reg.register([{"thread_uuid": "t"}], "online")


@pytest.mark.parametrize("tail", [b'{"thread_uuid": "t2", "entr', b"\x00\x00\x00\n"])
def test_torn_last_line_is_repaired_on_open(tmp_path: Path, tail: bytes) -> None:
    """A half-written (or zero-filled) last line is cut off; the good lines stay."""
    path = tmp_path / "log.jsonl"
    Registry(path, clock=_clock).register([REC], "online")
    good = path.read_bytes()
    path.write_bytes(good + tail)
    reg = Registry(path)
    assert reg.repaired is True
    assert path.read_bytes() == good
    assert reg.register([REC], "online") == []


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    """A garbled line that is not the last one is reported with its line number."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"garbage\n" + orjson.dumps(REC) + b"\n")
    with pytest.raises(StoreError, match=":1:"):
        read_lines(path)
