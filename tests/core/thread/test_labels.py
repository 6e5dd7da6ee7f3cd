"""Tests for the label table (en/zh) and the label lookup."""

from __future__ import annotations

import pytest

from pplx_archiver.core.thread.labels import LABELS, label

REQUIRED = [
    "query",
    "answer",
    "work_process",
    "subagent",
    "subagent_work",
    "background_unassigned",
    "limit_interrupted",
    "interrupted",
    "canceled",
    "sources",
    "citations",
    "turn",
    "prompt",
    "steps",
    "conclusion",
    "council_member",
    "round",
    "queries",
    "unknown_item",
    "report",
    "no_answer",
    "thoughts",
    "todo_list",
    "table",
    "user_questions",
    "user_response",
    "code",
    "output",
    "assets",
    "model",
    "mode",
    "created",
    "updated",
    "space",
    "appendix_note",
]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_required_key_is_present_and_non_empty(lang: str) -> None:
    """Each language set carries every key the renderer needs, none of them blank."""
    for key in REQUIRED:
        assert label(key, lang).strip(), key


def test_both_languages_have_the_same_keys() -> None:
    """en and zh define exactly the same keys, so no lookup can fail in one language only."""
    assert set(LABELS["en"]) == set(LABELS["zh"])


def test_zh_uses_the_original_strings() -> None:
    """The zh set carries the system's original strings for the special sections."""
    assert label("background_unassigned", "zh") == "后台任务（未归入轮次）"
    assert label("limit_interrupted", "zh") == "⏸ 限额中断（内容截至中断点）"
    assert label("interrupted", "zh") == "⏸ 中断待续"
    assert label("canceled", "zh") == "⛔ 已取消"
    assert label("subagent_work", "zh") == "子代理工作"


def test_en_strings_of_the_special_sections() -> None:
    """The en set carries the documented English strings."""
    assert label("background_unassigned", "en") == "Background tasks (unassigned to turns)"
    assert label("limit_interrupted") == (
        "⏸ limit-interrupted (content stops at the interruption point)"
    )
    assert label("interrupted") == "⏸ interrupted, pending continuation"
    assert label("canceled") == "⛔ canceled"


def test_unknown_language_falls_back_to_english() -> None:
    """A language without a label set renders the English labels."""
    assert label("answer", "fr") == label("answer", "en") == "Answer"


def test_unknown_key_raises_key_error() -> None:
    """Asking for a key that does not exist fails loudly instead of rendering nothing."""
    with pytest.raises(KeyError):
        label("no_such_label")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_placeholders_are_filled(lang: str) -> None:
    """Labels with placeholders take the item type and row count from keyword fields."""
    assert "WORKFLOW_ITEM_FOO" in label("unknown_item", lang, type="WORKFLOW_ITEM_FOO")
    assert "7" in label("empty_table", lang, rows=7)


def test_table_is_read_only() -> None:
    """The label table cannot be changed at run time by a caller."""
    with pytest.raises(TypeError):
        LABELS["en"]["answer"] = "x"  # type: ignore[index]
