"""Versions of a thread: chunks that rebuild a raw file, the word diff, what changed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pplx_archiver.core.findings.alerts import KINDS, fact_key
from pplx_archiver.core.thread.rawfile import encode_raw_pages
from pplx_archiver.core.thread.revisions import (
    EntryDigest,
    compare,
    rewrite_findings,
    split_chunks,
    word_diff,
)


@given(st.binary(max_size=400))
def test_chunks_join_back_to_any_bytes(data: bytes) -> None:
    assert b"".join(split_chunks(data)) == data


@given(st.lists(st.integers(0, 50), min_size=1, max_size=6))
def test_a_page_is_a_chunk_and_an_unchanged_page_keeps_its_chunk(values: list[int]) -> None:
    pages = [
        ({"path": "/t", "params": [["i", str(i)]]}, b'{"v":%d}' % v) for i, v in enumerate(values)
    ]
    raw = encode_raw_pages(pages)
    chunks = split_chunks(raw)
    assert len(chunks) == len(pages) + 1  # the file's opening, then one chunk a page
    grown = encode_raw_pages([*pages, ({"path": "/t"}, b"{}")])
    # every page but the last keeps its bytes (the last one also held the file's end)
    assert chunks[:-1] == split_chunks(grown)[: len(chunks) - 1]


@given(st.text(max_size=80), st.text(max_size=80))
def test_word_diff_gives_back_both_texts(old: str, new: str) -> None:
    ops = word_diff(old, new)
    assert "".join(t for op, t in ops if op != "+") == old
    assert "".join(t for op, t in ops if op != "-") == new


def test_word_diff_names_the_changed_words() -> None:
    ops = word_diff("the cat sat on the mat", "the dog sat on the mat")
    assert ("-", "cat") in ops and ("+", "dog") in ops
    assert next(t for op, t in ops if op == "=") == "the "


def _d(uuid: str, answer: str, sources: tuple[str, ...] = (), served: str = "m") -> EntryDigest:
    return EntryDigest(uuid, "q", answer, sources, "m", served, "COMPLETED")


def test_compare_finds_rewrites_added_turns_and_model_changes() -> None:
    old = [_d("a", "one", ("x", "y")), _d("b", "two")]
    new = [_d("a", "uno", ("y", "z")), _d("b", "two", served="n"), _d("c", "three")]
    changes = compare(old, new)
    assert changes.turns_added == ("c",) and changes.turns_removed == ()
    first, second = changes.entries
    assert first.answer and first.sources_added == ("z",) and first.sources_removed == ("x",)
    assert not second.answer and second.model == ("m", "n") and not second.rewritten
    found = rewrite_findings(changes, (1, 2), update_moved=False)
    assert [f[1]["entry_uuid"] for f in found] == ["a"]
    assert found[0][1]["silent"] is True and found[0][1]["changed"] == ["answer", "sources"]
    assert compare(new, new).empty


def test_a_fact_is_its_identifying_fields() -> None:
    one = {"thread_uuid": "t", "title": "A", "entry_uuid": "e", "to_version": 2}
    renamed = {**one, "title": "B"}
    assert fact_key("ANSWER_REWRITTEN", one) == fact_key("ANSWER_REWRITTEN", renamed)
    assert fact_key("ANSWER_REWRITTEN", one) != fact_key(
        "ANSWER_REWRITTEN", {**one, "to_version": 3}
    )
    assert fact_key("ANSWER_REWRITTEN", one) != fact_key("MODEL_SUBSTITUTED", one)
    assert "ANSWER_REWRITTEN" in KINDS and "THREAD_INCOMPLETE" in KINDS


def test_a_renewed_signed_url_is_the_same_content() -> None:
    from pplx_archiver.core.thread.revisions import same_content

    def url(expires: str, name: str = "a.pdf", amp: str = "&") -> bytes:
        tail = f"Expires={expires}{amp}Signature=REDACTED{amp}Key-Pair-Id=REDACTED"
        return f'{{"u":"https://cdn.example/{name}?{tail}"}}'.encode()

    assert same_content(url("1782190058"), url("1782199999"))
    assert same_content(url("1", amp="\\u0026"), url("2", amp="\\u0026"))
    assert not same_content(url("1"), url("1", name="b.pdf"))  # another file: another version
    amz = b'{"u":"https://s3.example/k?X-Amz-Date=20260101T000000Z&X-Amz-Expires=300"}'
    assert same_content(amz, amz.replace(b"20260101", b"20260202").replace(b"300", b"600"))
