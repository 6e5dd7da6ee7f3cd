"""Decoding: page merge, de-duplication, turn order, plain/schematized join, error paths."""

from __future__ import annotations

from typing import Any

import pytest

from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.model import RawPage
from pplx_archiver.core.thread.node import Node
from pplx_archiver.errors import PayloadError
from tests.core import builders as b


def _pages(*bodies: object) -> tuple[RawPage, ...]:
    return tuple(RawPage({}, body) for body in bodies)


def test_pages_merge_dedupe_and_sort() -> None:
    """Newest-window-first pages merge into creation order with repeated entries dropped."""
    newer = b.page([b.entry("e3", 30), b.entry("e4", 40)], next_cursor="c1")
    older = b.page([b.entry("e1", 10), b.entry("e2", 20), b.entry("e3", 30)])
    thread = decode_thread(_pages(newer, older), ())
    assert [e.key for e in thread.entries] == ["e1", "e2", "e3", "e4"]


def test_background_entries_deduplicated_by_uuid() -> None:
    """A background entry repeated on two pages is kept once."""
    bg = b.entry("bg1", 50, is_background=True)
    thread = decode_thread(_pages(b.page([b.entry("e1", 1)], [bg]), b.page([], [bg])), ())
    assert [e.key for e in thread.background] == ["bg1"]


def test_order_falls_back_to_created_us() -> None:
    """Without entry_created_datetime, created_us (µs integer) orders the turns."""
    first = b.entry("a", 0)
    second = b.entry("b", 0)
    for e, us in ((first, 2_000_000_000_000_000), (second, 1_000_000_000_000_000)):
        del e["entry_created_datetime"]
        e["created_us"] = us
    thread = decode_thread(_pages(b.page([first, second])), ())
    assert [e.key for e in thread.entries] == ["b", "a"]


def test_plain_and_schematized_join_by_uuid() -> None:
    """Plain text steps and schematized blocks of the same entry end up in one Entry."""
    plain = b.entry("e1", 1, text=[b.final_step("plain answer", 1)])
    schem = b.entry("e1", 1, blocks=[b.workflow([b.step([b.sources_item(2)])])])
    thread = decode_thread(_pages(b.page([plain])), _pages(b.page([schem])))
    (entry,) = thread.entries
    assert entry.final_answer == "plain answer"
    assert entry.final_web_results[0].url == "https://example.com/1"
    assert entry.blocks.workflow is not None


def test_bad_block_is_skipped_and_named() -> None:
    """A wrong type deep inside one block skips that block only and names its JSON path."""
    bad = b.entry("e1", 1, blocks=[b.answer_block("x"), b.workflow([])])
    bad["blocks"][1]["workflow_block"]["steps"] = "oops"
    (entry,) = decode_thread((), _pages(b.page([bad]))).entries
    assert entry.blocks.answer == "x"
    assert entry.blocks.workflow is None
    assert entry.problems == (
        ("blocks_pages[0].entries[0].blocks[1].workflow_block.steps", "expected array, got string"),
    )


def test_text_that_is_not_json_is_the_answer_prose() -> None:
    """Plain text that is not JSON is kept as the answer and the entry is degraded there."""
    bad = b.entry("e1", 1)
    bad["text"] = "{not json"
    (entry,) = decode_thread(_pages(b.page([bad])), ()).entries
    assert entry.final_answer == "{not json"
    assert [path for path, _ in entry.problems] == ["plain_pages[0].entries[0].text"]


def test_final_answer_prose_is_read_as_markdown() -> None:
    """A FINAL answer string that is prose, not JSON, is the answer text (not degraded)."""
    entry_ = b.entry("e1", 1, text=[{"step_type": "FINAL", "content": {"answer": "Paris."}}])
    (entry,) = decode_thread(_pages(b.page([entry_])), ()).entries
    assert entry.final_answer == "Paris."
    assert entry.problems == ()


def test_final_answer_that_is_not_json_is_prose() -> None:
    """A FINAL answer string that does not parse (or is a bare number) is the answer text."""
    for raw in ("{x", "42"):
        bad = b.entry("e1", 1, text=[{"step_type": "FINAL", "content": {"answer": raw}}])
        (entry,) = decode_thread(_pages(b.page([bad])), ()).entries
        assert entry.final_answer == raw
        assert entry.problems == ()


def test_entry_without_id_gets_one_from_its_path() -> None:
    """An entry with neither backend_uuid nor uuid is kept under an id made of its path."""
    bad = b.entry("e1", 1)
    del bad["uuid"], bad["backend_uuid"]
    (entry,) = decode_thread(_pages(b.page([bad])), ()).entries
    assert entry.key == "entry:plain_pages[0].entries[0]"
    assert "neither" in entry.problems[0][1]


def test_wrong_typed_field_is_left_out() -> None:
    """A top-level field of the wrong type is left out; the rest of the entry is read."""
    bad = b.entry("e1", 1, text=[b.final_step("kept", 0)])
    bad["search_mode"] = ["PRO"]
    (entry,) = decode_thread(_pages(b.page([bad])), ()).entries
    assert entry.search_mode == ""
    assert entry.final_answer == "kept"
    assert entry.problems == (
        ("plain_pages[0].entries[0].search_mode", "expected string, got array"),
    )


def test_entry_that_is_not_an_object_is_an_empty_degraded_turn() -> None:
    """An entry that is a number is an empty turn with its reason; its neighbours decode."""
    entries: list[Any] = [b.entry("e1", 1), 42]
    thread = decode_thread(_pages(b.page(entries)), ())
    assert [e.key for e in thread.entries] == ["e1", "entry:plain_pages[0].entries[1]"]
    assert thread.entries[1].problems == (
        ("plain_pages[0].entries[1]", "expected object, got integer"),
    )
    assert thread.entries[0].problems == ()


def test_nothing_readable_still_fails() -> None:
    """A page whose entries are not an array cannot be read at all: PayloadError with its path."""
    with pytest.raises(PayloadError) as info:
        decode_thread(_pages({"entries": {"x": 1}}), ())
    assert info.value.path == "plain_pages[0].entries"


def test_unknown_fields_are_ignored() -> None:
    """Fields the decoder does not know do not matter."""
    e = b.entry("e1", 1, brand_new_field={"x": [1, 2]})
    assert decode_thread(_pages(b.page([e], future=True)), ()).entries[0].key == "e1"


def test_node_path_rendering() -> None:
    """Node paths show keys with dots and indexes in brackets."""
    root = Node({"a": [{"b": 1}]}, None, "root")
    child = root.get_list("a")[0]
    with pytest.raises(PayloadError) as info:
        child.get_str("b")
    assert info.value.path == "root.a[0].b"


@pytest.mark.parametrize("value", [0, "", False, {}, 0.0, "x", {"a": 1}, 3])
def test_get_list_refuses_every_other_type_even_falsy(value: Any) -> None:
    """An empty array and null give []; any other value, falsy or not, names its path."""
    root = Node({"a": value, "e": [], "n": None}, None, "p")
    assert root.get_list("e") == [] and root.get_list("n") == [] and root.get_list("m") == []
    with pytest.raises(PayloadError) as err:
        root.get_list("a")
    assert err.value.path == "p.a" and "expected array" in err.value.message


def test_readers_of_the_common_type_and_of_the_others() -> None:
    """Strings and objects come back as they are; null is the default; a wrong type raises."""
    root = Node({"s": "v", "o": {"k": 1}, "n": None, "i": 4, "b": True}, None, "p")
    assert root.get_str("s") == "v" and root.get_str("n", "d") == "d"
    assert root.get_text("s") == "v" and root.get_text("i") == "4" and root.get_text("b") == "true"
    obj = root.get_obj("o")
    assert obj is not None and obj.v == {"k": 1} and obj.path == "p.o"
    assert root.get_obj("n") is None and root.get_strs("s", "n") == ["v", ""]
    for read in (root.get_str, root.get_obj, lambda k: root.get_strs("s", k)):
        with pytest.raises(PayloadError):
            read("i")
