"""The render-core rules (docs/dev/render-core.md), one behaviour per test, on small payloads."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from pplx_archiver.core.thread.answers import extract_answer
from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.interruptions import kind_of
from pplx_archiver.core.thread.model import ListingRow, RawPage
from pplx_archiver.core.thread.modes import detect_mode, needs_blocks
from pplx_archiver.core.thread.render import render_thread
from pplx_archiver.core.thread.values import SideBySide, Thread
from pplx_archiver.core.thread.variants import is_variant
from tests.core import builders as b
from tests.core.scenarios import computer, council, search_plain, study_variant


def _thread(*entries: dict[str, Any], background: list[Any] | None = None, **meta: Any) -> Thread:
    return decode_thread((), (RawPage({}, b.page(list(entries), background, **meta)),))


def _record(inp) -> dict:
    return orjson.loads(render_thread(inp, b.CTX).files["thread.json"])


@pytest.mark.parametrize(
    ("search_mode", "mode"),
    [
        ("ASI", "computer"),
        ("AGENTIC_RESEARCH", "council"),
        ("STUDY", "study"),
        ("RESEARCH", "deep-research"),
        ("SEARCH", "search"),
        ("STUDIO", "search"),
    ],
)
def test_search_mode_map(search_mode: str, mode: str) -> None:
    """search_mode maps to the archive mode."""
    assert detect_mode(_thread(b.entry("e", 0, search_mode=search_mode)), None).mode == mode


def test_mode_switch_most_specific() -> None:
    """Disagreeing entries resolve to the most specific mode with a MODE_SWITCH finding."""
    decision = detect_mode(
        _thread(b.entry("a", 0, search_mode="SEARCH"), b.entry("c", 9, search_mode="RESEARCH")),
        None,
    )
    assert decision.mode == "deep-research"
    assert [f[0] for f in decision.findings] == ["MODE_SWITCH"]


def test_search_mode_beats_display_model() -> None:
    """A conflicting display_model loses to search_mode and is reported."""
    decision = detect_mode(
        _thread(b.entry("a", 0, search_mode="SEARCH", display_model="pplx_study")), None
    )
    assert decision.mode == "search"
    assert decision.findings[0][0] == "MODE_SIGNAL_CONFLICT"


def test_fallbacks_without_search_mode() -> None:
    """Without search_mode: metadata mode 4, listing ASI, display model, step names, default."""
    plain = b.entry("a", 0, search_mode=None, display_model=None)
    assert detect_mode(_thread(plain, mode="4"), None).mode == "computer"
    assert detect_mode(_thread(plain), ListingRow("t", mode="asi")).mode == "computer"
    study = b.entry("a", 0, search_mode=None, display_model="pplx_study")
    assert detect_mode(_thread(study), None).mode == "study"
    research = b.entry(
        "a",
        0,
        search_mode=None,
        display_model="pplx_alpha",
        text=[{"step_type": "RESEARCH_ANSWER", "content": {}}],
    )
    assert detect_mode(_thread(research), None).mode == "deep-research"
    assert detect_mode(_thread(plain), None).mode == "search"


def test_display_model_wins_over_step_name() -> None:
    """Without search_mode the display_model map wins over a conflicting step name."""
    e = b.entry(
        "a",
        0,
        search_mode=None,
        display_model="pplx_study",
        text=[{"step_type": "COUNCIL_RESEARCH", "content": {}}],
    )
    decision = detect_mode(_thread(e), None)
    assert decision.mode == "study"
    assert decision.findings[0][0] == "MODE_SIGNAL_CONFLICT"


def test_needs_blocks_uncertain_search() -> None:
    """A search thread without any display_model still gets the schematized fetch."""
    without = RawPage({}, b.page([b.entry("a", 0, display_model=None)]))
    with_dm = RawPage({}, b.page([b.entry("a", 0)]))
    assert needs_blocks([without], None) is True
    assert needs_blocks([with_dm], None) is False


def test_subagent_landings_and_counts() -> None:
    """Each background payload lands once: anchored, stub (10 s window) or appendix."""
    result = render_thread(computer(), b.CTX)
    record = orjson.loads(result.files["thread.json"])
    turns = "".join(v.decode() for k, v in result.files.items() if k.startswith("turns/"))
    # conversation.md repeats a stub turn's sub-agents; its appendix holds the unplaced ones
    conv = result.files["conversation.md"].decode()
    appendix = conv.split("## Background tasks", 1)[1]
    rendered = turns.count("#### Sub-agent:") + appendix.count("#### Sub-agent:")
    assert rendered == record["counts"]["background_payloads"] == 5
    assert "toolu\\_A" in result.files["turns/turn_0001.md"].decode()
    stub = result.files["turns/turn_0002.md"].decode()
    assert "toolu\\_B" in stub and "toolu\\_C" in stub
    appendix = conv.split("## Background tasks (unassigned to turns)")[1]
    assert "toolu\\_D" in appendix and "toolu\\_E" in appendix


def test_stub_answer_not_backfilled() -> None:
    """A stub turn shows no answer even though its sub-agents have conclusions."""
    stub = render_thread(computer(), b.CTX).files["turns/turn_0002.md"].decode()
    assert stub.split("## Answer")[1].strip().startswith("*(no answer")


def test_interruption_records() -> None:
    """Interrupted workflows are recorded with location, kind, headline and status."""
    records = _record(computer())["interruptions"]
    assert [(r["location"], r["kind"]) for r in records] == [
        ("turn_0001", "limit_interrupted"),
        ("turn_0001/subagent", "canceled"),  # background side wins over the anchor
        ("turn_0002/subagent_stub", "canceled"),
        ("background_unassigned", "limit_interrupted"),
    ]


def test_healthy_thread_has_no_interruptions_key() -> None:
    """A healthy thread's record has no interruptions or answer_variants key."""
    record = _record(council())
    assert "interruptions" not in record and "answer_variants" not in record


@pytest.mark.parametrize(
    ("status", "locked", "kind"),
    [
        ("WORKFLOW_AWAITING_NEXT_STEPS", "spending_limit_exceeded", "limit_interrupted"),
        ("WORKFLOW_AWAITING_NEXT_STEPS", "", "interrupted"),
        ("WORKFLOW_CANCELED", "", "canceled"),
        ("WORKFLOW_COMPLETED", "spending_limit_exceeded", None),
        ("WORKFLOW_AWAITING_USER", "", None),
        ("WORKFLOW_SOMETHING_NEW", "", None),
    ],
)
def test_interruption_kinds(status: str, locked: str, kind: str | None) -> None:
    """Only the three interrupted states are annotated; others stay silent."""
    assert kind_of(status, locked) == kind


@pytest.mark.parametrize(
    ("sibling", "status", "role", "hit"),
    [
        ("s", "SELECTED", "[control]x", True),
        ("s", "SELECTION_STATUS_UNSPECIFIED", "treat", True),
        ("s", "SELECTION_STATUS_UNSPECIFIED", "[control]x", False),
        ("", "SELECTED", "t", False),
        ("s", "", "[control]x", False),
    ],
)
def test_variant_criterion(sibling: str, status: str, role: str, hit: bool) -> None:
    """The narrowed answer-variant criterion."""
    assert is_variant(SideBySide(sibling, status, role)) is hit


def test_variant_records_and_findings() -> None:
    """A hit becomes a registry record, a thread.json entry and a finding."""
    result = render_thread(study_variant(), b.CTX)
    (rec,) = result.variants
    assert rec["entry_uuid"] == "s2" and rec["experiment_override"] == {"model": "q"}
    assert orjson.loads(result.files["thread.json"])["answer_variants"] == [rec]
    assert "ANSWER_VARIANT_DETECTED" in [f.event for f in result.findings]


def test_citations_three_channels_deduplicated() -> None:
    """entry.sources, FINAL web_results and workflow sources merge unique by URL."""
    e = b.entry(
        "a",
        0,
        text=[b.final_step("x", 1, 2)],
        blocks=[b.workflow([b.step([b.sources_item(2, 3)])])],
        sources=[b.web(3), b.web(4)],
    )
    result = render_thread(b.thread_input([b.page([e])]), b.CTX)
    sources = orjson.loads(result.files["sources.json"])
    assert [s["url"][-1] for s in sources["sources"]] == ["3", "4", "1", "2"]
    assert "## Citations (4)" in result.files["turns/turn_0001.md"].decode()


def test_answer_order() -> None:
    """ask_text beats sections, which beat workflow answers, which beat plain FINAL."""
    sections = [
        {"intended_usage": f"ask_text_{i}_markdown", "markdown_block": {"answer": f"S{i}"}}
        for i in (1, 0)
    ]
    e = decode_thread(
        (),
        (
            RawPage(
                {},
                b.page(
                    [
                        b.entry(
                            "a",
                            0,
                            text=[b.final_step("final")],
                            blocks=[*sections, b.workflow([b.step([b.text_item("wf")])])],
                        )
                    ]
                ),
            ),
        ),
    ).entries[0]
    assert extract_answer(e, "search") == "S0S1"


def test_search_plain_unknown_step_placeholder() -> None:
    """An unknown plain step type renders a placeholder and a finding, not silence."""
    result = render_thread(search_plain(), b.CTX)
    assert (
        "Unrecognised item type BRAND\\_NEW\\_STEP" in result.files["turns/turn_0001.md"].decode()
    )
    assert "UNKNOWN_STEP_TYPE" in [f.event for f in result.findings]


def test_assets_versioned_per_file_name() -> None:
    """Asset versions of one file name are numbered by created_at; handles are flagged."""

    def asset(uid: str, created: str) -> dict:
        return {
            "uuid": uid,
            "asset_type": "DOC_FILE",
            "created_at": created,
            "doc_file": {"filename": "a.md", "url": f"https://cdn/{uid}"},
        }

    block = {
        "intended_usage": "unified_assets",
        "unified_assets_block": {
            "assets": [
                asset("u2", "1782190090"),
                asset("u1", "1782190058"),
                asset("toolu_x", "1782190100"),
            ]
        },
    }
    refs = extract_assets(b.thread_input([], [b.page([b.entry("a", 0, blocks=[block])])]))
    assert [(r.uuid, r.version, r.is_handle) for r in refs] == [
        ("u1", 1, False),
        ("u2", 2, False),
        ("toolu_x", 3, True),
    ]
