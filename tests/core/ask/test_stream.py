"""The ask stream parser replays every real capture and maps in-band errors to the error tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pplx_archiver import errors
from pplx_archiver.core.ask.stream import AskStream, SseDecoder, apply_patch, replay

REAL = Path(__file__).resolve().parents[2] / "samples" / "real"
SSE_CAPTURES = ("sse_search_1.sse", "sse_search_2.sse")


def _sse_payloads(name: str) -> list[dict[str, Any]]:
    """Decoded ``data:`` payloads of a raw capture, cut independently of the parser."""
    raw = (REAL / name).read_bytes().decode()
    out = []
    for block in raw.replace("\r\n", "\n").split("\n\n"):
        data = "".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if data:
            out.append(json.loads(data))
    return out


def _jsonl(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (REAL / name).read_text().splitlines() if line.strip()]


def _closing_answer(payload: dict[str, Any], key: str = "answer") -> str:
    """The answer the capture's last (FULL) frame carries, read straight from its blocks.

    ``key="chunks"`` gives the streamed chunks joined instead of the closing text (they can
    differ: one capture renumbers citations in its closing answer).
    """
    for block in payload["blocks"]:
        if block["intended_usage"] == "workflow_root":
            for step in block["workflow_block"]["steps"]:
                for item in step["items"]:
                    text = item["payload"].get("text_payload")
                    if item["type"] == "WORKFLOW_ITEM_TEXT" and text["variant"] == "answer":
                        return "".join(text["chunks"]) if key == "chunks" else str(text["text"])
    for block in payload["blocks"]:
        if block["intended_usage"] == "ask_text":
            markdown = block["markdown_block"]
            return "".join(markdown["chunks"]) if key == "chunks" else str(markdown["answer"])
    raise AssertionError("capture carries no answer")


def _last_full(payloads: list[dict[str, Any]]) -> int:
    return max(i for i, p in enumerate(payloads) if p.get("message_mode") == "FULL")


@pytest.mark.parametrize("name", SSE_CAPTURES)
@pytest.mark.parametrize("piece", [7, 997, 10**7])
def test_raw_capture_gives_closing_answer(name: str, piece: int) -> None:
    """Fed as raw SSE text in pieces of any size, a capture yields exactly its closing answer."""
    raw = (REAL / name).read_bytes().decode()
    stream = AskStream()
    for start in range(0, len(raw), piece):
        stream.feed(raw[start : start + piece])
    stream.close()
    payloads = _sse_payloads(name)
    result = stream.result()
    assert result.answer == _closing_answer(payloads[_last_full(payloads)])
    assert result.backend_uuid == payloads[0]["backend_uuid"]
    assert stream.closed  # event: end_of_stream was seen
    assert result.sources


@pytest.mark.parametrize("name", SSE_CAPTURES)
def test_diffs_alone_rebuild_the_answer(name: str) -> None:
    """Without the closing FULL frame, the JSON-Patch diffs alone rebuild the streamed answer."""
    payloads = _sse_payloads(name)
    last = _last_full(payloads)
    stream = replay(payloads[:last])
    assert stream.answer == _closing_answer(payloads[last], "chunks")
    assert len(stream.answer) > 500
    assert not stream.completed


def test_chunk_offsets_rebuild_the_answer() -> None:
    """Whole-block frames continuing at chunk_starting_offset rebuild the closing answer."""
    payloads = _jsonl("sse_search_3.jsonl")
    last = _last_full(payloads)
    assert replay(payloads[:last]).answer == _closing_answer(payloads[last])
    result = replay(payloads).result()
    assert result.answer == _closing_answer(payloads[last])
    final_step = json.loads(payloads[last]["text"])[-1]
    assert final_step["step_type"] == "FINAL"
    assert result.answer == json.loads(final_step["content"]["answer"])["answer"]


def test_early_final_does_not_end_the_answer() -> None:
    """A ``final: true`` frame that is still PENDING leaves the stream open until COMPLETED."""
    payloads = _sse_payloads("sse_search_2.sse")
    early = next(i for i, p in enumerate(payloads) if p.get("final"))
    assert payloads[early]["status"] == "PENDING"
    stream = replay(payloads[: early + 1])
    assert stream.final_seen and not stream.completed
    with pytest.raises(errors.AskIncompleteError):
        stream.result()
    stream.apply(payloads[early + 1])
    assert stream.result().early_final  # result() raises unless the stream completed


def test_research_prefix_is_incomplete() -> None:
    """The deep-research prefix builds its workflow from diffs but has no answer yet (exit 15)."""
    stream = replay(_jsonl("sse_research_diff_prefix_2.jsonl"))
    workflow = stream.blocks["workflow_root"]["workflow_block"]
    assert workflow["mode"] == "DEEP_RESEARCH"
    assert [s.get("tool_name") for s in workflow["steps"]][:1] == ["load_skill"]
    assert stream.answer == ""
    with pytest.raises(errors.AskIncompleteError) as caught:
        stream.result()
    assert caught.value.exit_code == errors.EXIT_ASK_INCOMPLETE == 15


def test_clarifying_questions_raise_with_the_questions() -> None:
    """A workflow awaiting the user's answers ends as ClarifyingQuestionsError (exit 12)."""
    frames = json.loads((REAL / "sse_research_clarify_1.json").read_text())
    stream = replay([frames["asked"]])
    assert stream.awaiting_user
    with pytest.raises(errors.ClarifyingQuestionsError) as caught:
        stream.result()
    assert caught.value.exit_code == 12
    assert "What level of detail are you looking for?" in caught.value.questions
    stream.apply(frames["released"])
    assert not stream.awaiting_user


@pytest.mark.parametrize(
    ("payload", "kind", "code"),
    [
        ({"backend_uuid": "b", "error_code": "RATE_LIMIT"}, errors.AskRateLimitedError, 10),
        ({"backend_uuid": "b", "status": "FAILED"}, errors.AskFailedError, 11),
        ({"error_code": "SESSION_EXPIRED"}, errors.AskSessionError, 13),
        ({"status": "failed", "error_code": "INTERNAL_ERROR"}, errors.AskFailedError, 11),
    ],
)
def test_in_band_errors(payload: dict[str, Any], kind: type[errors.AskError], code: int) -> None:
    """Error codes and FAILED frames inside a 200 stream raise their own exit code."""
    stream = AskStream()
    with pytest.raises(kind) as caught:
        stream.feed("data: " + json.dumps(payload) + "\r\n\r\n")
    assert caught.value.exit_code == code


def test_empty_200_is_a_session_error() -> None:
    """A 200 stream that never names a thread is reported as a session problem (exit 13)."""
    stream = AskStream()
    stream.feed("event: end_of_stream\ndata: {}\n\n")
    stream.close()
    with pytest.raises(errors.AskSessionError):
        stream.result()


def test_decoder_framing() -> None:
    """Comments, ``data:`` without a space, ``[DONE]`` and an unterminated last frame decode."""
    decoder = SseDecoder()
    frames = decoder.feed(': ping\r\n\r\ndata:{"a":1}\r')
    frames += decoder.feed('\n\r\ndata: [DONE]\n\ndata: {"b":\n')
    frames += decoder.feed("data: 2}")
    frames += decoder.close()
    assert [f.data for f in frames] == ['{"a":1}', "[DONE]", '{"b":\n2}']


def test_truncated_last_frame_is_incomplete() -> None:
    """A stream cut inside a frame is incomplete, not a crash."""
    stream = AskStream()
    stream.feed('data: {"backend_uuid": "b", "status": "PENDING"}\n\ndata: {"status": "COMP')
    stream.close()
    with pytest.raises(errors.AskIncompleteError):
        stream.result()


def test_apply_patch_operations() -> None:
    """add inserts into lists, '-' appends, replace/remove/move/copy and root replace work."""
    doc: Any = {"a": [1, 3], "b": {"c": "x"}}
    doc = apply_patch(
        doc,
        [
            {"op": "add", "path": "/a/1", "value": 2},
            {"op": "add", "path": "/a/-", "value": 4},
            {"op": "replace", "path": "/b/c", "value": "y"},
            {"op": "copy", "from": "/b/c", "path": "/d"},
            {"op": "move", "from": "/b", "path": "/e"},
            {"op": "remove", "path": "/a/0"},
            {"op": "add", "path": "/n/0/k", "value": True},
            {"op": "add", "path": "/x~1y", "value": 0},
        ],
    )
    assert doc == {"a": [2, 3, 4], "d": "y", "e": {"c": "y"}, "n": [{"k": True}], "x/y": 0}
    assert apply_patch(doc, [{"op": "replace", "path": "", "value": {"z": 1}}]) == {"z": 1}
    with pytest.raises(ValueError):
        apply_patch({}, [{"op": "frobnicate", "path": "/a"}])
