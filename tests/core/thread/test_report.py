"""Tests for report classification, choice among versions and report.md rendering."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.core.thread.model import AssetFile
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.core.thread.report import classify_report_bytes, pick_report, render_report
from tests.core import builders as b


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"# Report\n\nBody", "ok"),
        ("# 报告\n正文".encode(), "ok"),
        (b"", "empty"),
        (b" \n\t\r\n ", "empty"),
        (b"\xef\xbb\xbf  \n", "empty"),
        (b"%PDF-1.7\n...", "binary"),
        (b"PK\x03\x04rest", "binary"),
        (b"\x89PNG\r\n\x1a\n", "binary"),
        (b"text with a \x00 NUL", "binary"),
        (b"\xff\xfe invalid utf-8", "binary"),
    ],
)
def test_classify_report_bytes(data: bytes, kind: str) -> None:
    """Bytes are ok Markdown, empty (whitespace only) or binary (magic, NUL, bad UTF-8)."""
    assert classify_report_bytes(data) == kind


def test_render_report_normalizes_line_endings_and_math() -> None:
    """CRLF becomes LF, one trailing newline is kept and LaTeX is normalized outside code."""
    data = b"# R\r\n\r\nInline \\(x^2\\) here.\r\n```\r\n\\(code\\)\r\n```"
    assert render_report(data, file_name="r.md") == (
        "# R\n\nInline $x^2$ here.\n```\n\\(code\\)\n```\n"
    )


@pytest.mark.parametrize("data", [b"", b"  \n", b"%PDF-1.4", b"\x00\x01"])
def test_render_report_rejects_empty_and_binary(data: bytes) -> None:
    """Empty or binary report bytes produce no report.md."""
    assert render_report(data, file_name="r.md") is None


def test_render_report_keeps_the_whole_body() -> None:
    """A long report is rendered in full, never shortened."""
    body = "".join(f"Paragraph {n} " + "x" * 200 + "\n\n" for n in range(2000))
    out = render_report(body.encode(), file_name="big.md")
    assert out is not None
    assert out == body.rstrip("\n") + "\n"


def test_pick_report_prefers_newest_exact_match_that_is_usable() -> None:
    """The newest exact-name version wins; a newer empty draft is skipped with its reason."""
    candidates = [
        ("report.md", 1, "1782190000", b"# old"),
        ("report.md", 3, "1782190300", b""),
        ("report.md", 2, "1782190200", b"# v2"),
        ("other.md", 9, "1782199999", b"# other"),
    ]
    assert pick_report(candidates, "report.md") == (2, [(1, "empty")])


def test_pick_report_falls_back_to_other_names_newest_first() -> None:
    """Without a usable exact match the newest other usable candidate is chosen."""
    candidates = [
        ("report.md", 1, "1", b"%PDF-1.4"),
        ("a.md", 1, "5", b"# a"),
        ("b.md", 2, "3", b"# b"),
    ]
    index, skipped = pick_report(candidates, "report.md")
    assert index == 2
    assert skipped == [(0, "binary")]


def test_pick_report_orders_epoch_strings_numerically() -> None:
    """Creation times given as epoch-second strings compare as numbers, not as text."""
    candidates = [("r.md", 1, "999", b"# older"), ("r.md", 1, "1000", b"# newer")]
    assert pick_report(candidates, "r.md")[0] == 1


def test_pick_report_nothing_usable() -> None:
    """When every candidate is unusable, no index is returned and all are reported."""
    candidates = [("r.md", 1, "1", b""), ("r.md", 2, "2", b"\x00")]
    assert pick_report(candidates, "r.md") == (None, [(1, "binary"), (0, "empty")])


def test_pick_report_no_candidates() -> None:
    """No candidates means no report and nothing skipped."""
    assert pick_report([], None) == (None, [])


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_render_report_is_deterministic_and_total(data: bytes) -> None:
    """Any bytes give the same result twice, and text results end with exactly one newline."""
    first = render_report(data, file_name="r.md")
    assert first == render_report(data, file_name="r.md")
    assert (first is None) == (classify_report_bytes(data) != "ok")
    if first is not None:
        assert first.endswith("\n")
        assert not first.endswith("\n\n")
        assert "\r" not in first


def test_research_answer_url_is_the_report_fallback() -> None:
    """No report asset: the RESEARCH_ANSWER step's URL is the report version to download,
    and its bytes become report.md."""
    inp = b.research_thread(asset=False)
    (ref,) = extract_assets(inp)
    assert (ref.asset_type, ref.file_name, ref.url, ref.version) == (
        "RESEARCH_REPORT",
        "research-report.md",
        "https://cdn.example/files/research-report.md",
        1,
    )
    assert ref.path.endswith(".content.url")
    done = dataclasses.replace(
        inp, downloads=(AssetFile(ref.uuid, 1, ref.file_name, b"# Full report\r\n"),)
    )
    result = render_thread(done, b.CTX)
    assert result.files["report.md"] == b"# Full report\n"


def test_report_asset_wins_over_the_research_answer_url() -> None:
    """With a report asset present the step adds no second report version."""
    refs = extract_assets(b.research_thread(asset=True))
    assert [(r.uuid, r.url) for r in refs] == [("asset-1", "https://x/r.md")]
