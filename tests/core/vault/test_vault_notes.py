"""The vault's pure parts: safe names, user text kept around the markers, footnotes (#42)."""

from __future__ import annotations

import pytest

from pplx_archiver.core.vault import vault
from pplx_archiver.core.vault.vault_names import MAX_STEM, is_reserved, safe_stem, unique_names

PROPS: list[tuple[str, str | list[str]]] = [("pplx_uuid", "u-1"), ("title", "T"), ("models", ["a"])]


@pytest.mark.parametrize("name", ["aux", "AUX", "aux.txt", "Con", "com1", "LPT9.md", "nul.tar.gz"])
def test_windows_device_names_are_reserved(name: str) -> None:
    assert is_reserved(name)
    assert not is_reserved(safe_stem(name))
    assert safe_stem(name).startswith("_")


def test_names_drop_what_a_file_system_or_a_wikilink_refuses() -> None:
    assert safe_stem('a<b>c:d"e/f\\g|h?i*j#k^l[m]n') == "a b c d e f g h i j k l m n"
    assert safe_stem(" ..hidden. ") == "hidden"
    assert safe_stem("\x00\x1f") == "untitled"
    assert safe_stem("café") == "café" and safe_stem("cafe\u0301") == "café"  # NFC


def test_long_names_are_cut_and_keep_their_suffix() -> None:
    stem = safe_stem("word " * 100, suffix=" (abcd1234)")
    assert len(stem) <= MAX_STEM and stem.endswith("word (abcd1234)")
    wide = safe_stem("经济" * 200, suffix=" (abcd1234)")
    assert len(wide.encode("utf-8")) <= 180 and wide.endswith(" (abcd1234)")


def test_unique_names_ignore_case() -> None:
    names = unique_names({"b": "Research", "a": "research", "c": "Other"}, taken=["other"])
    assert names == {"a": "research", "b": "Research (2)", "c": "Other (2)"}


@pytest.mark.parametrize("flavor", vault.FLAVORS)
def test_user_text_around_the_markers_is_kept(flavor: str) -> None:
    first = vault.merge(None, PROPS, "generated 1\n", flavor)
    assert vault.merge(first, PROPS, "generated 1\n", flavor) == first
    edited = first.replace(vault.BEGIN, "above\n" + vault.BEGIN) + "\nbelow\n"
    again = vault.merge(edited, PROPS, "generated 2\n", flavor)
    assert "above\n" + vault.BEGIN + "\ngenerated 2\n" + vault.END + "\n\nbelow\n" in again
    assert "generated 1" not in again
    assert vault.merge(again, PROPS, "generated 2\n", flavor) == again


def test_user_properties_are_kept_and_ours_replaced() -> None:
    note = vault.merge(None, PROPS, "g\n", "obsidian")
    note = note.replace("---\n", "---\ntags:\n  - mine\n", 1).replace('"T"', '"old"')
    again = vault.merge(note, PROPS, "g\n", "obsidian")
    assert again.startswith(
        '---\npplx_uuid: "u-1"\ntitle: "T"\nmodels: ["a"]\ntags:\n  - mine\n---\n'
    )


def test_a_note_whose_markers_were_removed_keeps_all_its_text() -> None:
    again = vault.merge('---\npplx_uuid: "u-1"\n---\nall mine\n', PROPS, "g\n", "obsidian")
    assert "all mine\n\n" + vault.BEGIN + "\ng\n" + vault.END in again


def test_citation_marks_become_footnotes_outside_code() -> None:
    answer = "Fact.[1][2] Not [9].\n```\nx[1]\n```\n~~~~\n[2]\n~~~~\nEnd[2]\n````\nopen"
    out = vault.footnoted(answer, 3, 2)
    assert out.startswith("Fact.[^3-1][^3-2] Not [9].\n```\nx[1]\n```\n~~~~\n[2]\n~~~~\nEnd[^3-2]")
    assert out.endswith("open\n````"), "a fence left open is closed"


def test_a_turn_file_is_parsed_past_headings_in_code() -> None:
    text = (
        "# Turn 1\n\n## Query\n\nq?\n\n## Answer\n\n```md\n## Not a heading\n```\nA.[1]\n\n"
        "## Citations (1)\n\n1. [Name](<https://x.example/a>) — s\n"
    )
    turn = vault.parse_turn(text)
    assert turn.query == "q?" and turn.answer.endswith("A.[1]") and "Not a heading" in turn.answer
    assert turn.citations == (("Name", "https://x.example/a"),)
    zh = vault.parse_turn("## 提问\n\n问\n\n## 回答\n\n答\n", "zh")
    assert (zh.query, zh.answer) == ("问", "答")


def test_a_note_saved_with_windows_line_ends_is_merged_once() -> None:
    note = vault.merge(None, PROPS, "g\n", "obsidian").replace("\n", "\r\n") + "mine\r\n"
    again = vault.merge(note, PROPS, "g\n", "obsidian")
    assert again.count("pplx_uuid") == 1 and again.endswith("mine\n")
