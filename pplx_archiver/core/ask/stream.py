"""The ask stream: SSE framing, JSON-Patch diff blocks and the answer they build, as plain code.

An ask (``POST /rest/sse/perplexity_ask``) answers with ``data: {json}`` frames separated by
blank lines (``\\r\\n`` or ``\\n``). Three payload generations are understood:

1. a ``text`` field holding JSON: an object with ``answer``, or a list of steps ending with a
   ``FINAL`` step whose ``content.answer`` is JSON again;
2. schematized ``blocks[]`` sent whole (``markdown_block`` with ``chunks`` that continue at
   ``chunk_starting_offset``, ``answer``; ``web_result_block``);
3. ``blocks[]`` whose ``diff_block`` carries RFC 6902 patches (add/replace/remove/move/copy)
   against the block of the same ``intended_usage`` sent earlier; the answer then lives in a
   ``workflow_block`` text item of variant ``answer`` or in the ``ask_text`` markdown block.

``final: true`` may arrive on a frame that is still PENDING; only ``status: COMPLETED``, a
``final_sse_message`` or the end of the stream end an answer. In-band errors (``error_code``,
``status: FAILED``, clarifying questions, a 200 that never starts a thread) become the
:class:`~pplx_archiver.errors.AskError` family. No I/O: the shell feeds text and reads state.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterable, Iterator
from typing import Any

from pplx_archiver.core.ask.stream_wire import (
    Frame,
    SseDecoder,
    apply_patch,
    in_band_error,
    merge_markdown,
)
from pplx_archiver.errors import (
    AskError,
    AskIncompleteError,
    AskSessionError,
    ClarifyingQuestionsError,
    PayloadError,
)

Json = dict[str, Any]

AWAITING_USER = "WORKFLOW_AWAITING_USER"
_META = (
    "backend_uuid",
    "context_uuid",
    "thread_url_slug",
    "read_write_token",
    "frontend_context_uuid",
    "display_model",
    "search_mode",
    "mode",
    "query_str",
)


# --------------------------------------------------------------------------- stream state


@dataclasses.dataclass(frozen=True, slots=True)
class Source:
    """One source listed under an answer."""

    title: str
    url: str


@dataclasses.dataclass(frozen=True, slots=True)
class AskResult:
    """What a finished ask stream established."""

    answer: str
    sources: tuple[Source, ...]
    backend_uuid: str
    context_uuid: str
    thread_url_slug: str
    read_write_token: str
    display_model: str
    search_mode: str
    frames: int
    questions: tuple[str, ...] = ()
    early_final: bool = False


class AskStream:
    """The state an ask stream has built so far; fed frames or decoded payloads, in order."""

    def __init__(self) -> None:
        self.blocks: dict[str, Json] = {}
        self.meta: dict[str, str] = {}
        self.status = ""
        self.frames = 0
        self.final_seen = False
        self.early_final = False
        self.completed = False
        self.closed = False
        self.questions: tuple[str, ...] = ()
        self._text_answer = ""
        self._text_sources: list[Source] = []
        self._decoder = SseDecoder()

    # --- input --------------------------------------------------------------------
    def feed(self, text: str) -> list[Json]:
        """Decode stream text; returns the payloads it completed (each already applied)."""
        return self._take(self._decoder.feed(text))

    def close(self) -> list[Json]:
        """The stream ended: apply a last unterminated frame if it is whole."""
        return self._take(self._decoder.close(), last=True)

    def _take(self, frames: list[Frame], last: bool = False) -> list[Json]:
        out = []
        for frame in frames:
            if frame.event == "end_of_stream":
                self.closed = True
                continue
            data = frame.data.strip()
            if not data or data == "[DONE]":
                continue
            try:
                payload = json.loads(data)
            except ValueError:
                if last:  # a truncated last frame: the result says the answer is incomplete
                    continue
                raise PayloadError(f"stream frame {self.frames + 1}", "data is not JSON") from None
            if isinstance(payload, dict):
                self.apply(payload)
                out.append(payload)
        return out

    def apply(self, payload: Json) -> None:
        """Apply one decoded payload; raises the in-band errors it carries."""
        if not payload:
            return
        self.frames += 1
        for key in _META:
            value = payload.get(key)
            if isinstance(value, str) and value:
                self.meta[key] = value
        status = payload.get("status")
        if isinstance(status, str) and status:
            self.status = status.upper()
        self._check_error(payload)
        if payload.get("final") is True:
            if self.status != "COMPLETED" and not payload.get("final_sse_message"):
                self.early_final = True
            self.final_seen = True
        blocks = payload.get("blocks")
        if isinstance(blocks, list):
            for n, block in enumerate(blocks):
                if isinstance(block, dict):
                    self._block(block, n)
        text = payload.get("text")
        if isinstance(text, str) and text[:1] in ("{", "["):
            self._legacy_text(text)
        self._check_questions()
        if self.status == "COMPLETED" or payload.get("final_sse_message") is True:
            self.completed = True

    def _check_error(self, payload: Json) -> None:
        error = in_band_error(payload, self.status, self.meta.get("backend_uuid", ""))
        if error is not None:
            raise error

    def _block(self, block: Json, n: int) -> None:
        usage = str(block.get("intended_usage") or f"#{n}")
        held = self.blocks.setdefault(usage, {})
        diff = block.get("diff_block")
        if isinstance(diff, dict):
            field = str(diff.get("field") or "")
            patches = diff.get("patches")
            if field and isinstance(patches, list):
                try:
                    held[field] = apply_patch(held.get(field), patches)
                except (ValueError, KeyError, IndexError, TypeError) as exc:
                    where = f"stream frame {self.frames}: blocks[{n}] ({usage})"
                    raise PayloadError(where, f"diff patch does not apply: {exc}") from None
            return
        for field, value in block.items():
            if field in ("intended_usage", "diff_block") or not field.endswith("_block"):
                continue
            if field == "markdown_block" and isinstance(value, dict):
                held[field] = merge_markdown(held.get(field), value)
            else:
                held[field] = copy.deepcopy(value)

    def _legacy_text(self, text: str) -> None:
        try:
            decoded = json.loads(text)
        except ValueError:
            return
        if isinstance(decoded, list):
            for step in decoded:
                if not isinstance(step, dict):
                    continue
                content = step.get("content")
                content = content if isinstance(content, dict) else {}
                kind = step.get("step_type")
                if kind == "FINAL":
                    answer = content.get("answer")
                    if isinstance(answer, str) and answer[:1] == "{":
                        try:
                            answer = json.loads(answer)
                        except ValueError:
                            pass
                    self._text_object(answer)
                elif kind == "RESEARCH_CLARIFYING_QUESTIONS":
                    asked = content.get("questions") or content.get("clarifying_questions")
                    if isinstance(asked, list):
                        self.questions = tuple(str(q) for q in asked if q)
        else:
            self._text_object(decoded)

    def _text_object(self, value: Any) -> None:
        if isinstance(value, str):
            if value:
                self._text_answer = value
            return
        if not isinstance(value, dict):
            return
        answer = value.get("answer")
        if not isinstance(answer, str) or not answer:
            chunks = value.get("chunks")
            answer = "".join(c for c in chunks if isinstance(c, str)) if chunks else ""
        if answer:
            self._text_answer = answer
        results = value.get("web_results")
        if isinstance(results, list) and results:
            self._text_sources = _sources(results)

    def _check_questions(self) -> None:
        workflow = self._workflow()
        if workflow.get("status") != AWAITING_USER:
            return
        for item in _items(workflow):
            if item.get("type") == "WORKFLOW_ITEM_USER_QUESTIONS":
                payload = item.get("payload")
                asked = payload.get("user_questions_payload") if isinstance(payload, dict) else None
                if isinstance(asked, dict):
                    fields = asked.get("fields") or []
                    names = [f.get("field_name") for f in fields if isinstance(f, dict)]
                    title = asked.get("title")
                    questions = [str(title)] if title else []
                    self.questions = tuple(questions + [str(x) for x in names if x])

    # --- output -------------------------------------------------------------------
    def _workflow(self) -> Json:
        held = self.blocks.get("workflow_root", {}).get("workflow_block")
        return held if isinstance(held, dict) else {}

    @property
    def awaiting_user(self) -> bool:
        """True while deep research waits for answers to clarifying questions."""
        return self._workflow().get("status") == AWAITING_USER and bool(self.questions)

    @property
    def answer(self) -> str:
        """The answer text as far as it has arrived."""
        for item in reversed(list(_items(self._workflow()))):
            payload = item.get("payload")
            text = payload.get("text_payload") if isinstance(payload, dict) else None
            if item.get("type") == "WORKFLOW_ITEM_TEXT" and isinstance(text, dict):
                if text.get("variant", "answer") != "answer":
                    continue
                value = text.get("text")
                if isinstance(value, str) and value:
                    return value
                joined = _join(text.get("chunks"))
                if joined:
                    return joined
        markdown = self.blocks.get("ask_text", {}).get("markdown_block")
        if isinstance(markdown, dict):
            value = markdown.get("answer")
            if isinstance(value, str) and value:
                return value
            joined = _join(markdown.get("chunks"))
            if joined:
                return joined
        return self._text_answer

    @property
    def sources(self) -> tuple[Source, ...]:
        """The sources of the answer (web results), in the order the service ranks them."""
        held = self.blocks.get("web_results", {}).get("web_result_block")
        if isinstance(held, dict) and isinstance(held.get("web_results"), list):
            found = _sources(held["web_results"])
            if found:
                return tuple(found)
        for item in _items(self._workflow()):
            payload = item.get("payload")
            if item.get("type") == "WORKFLOW_ITEM_SOURCES" and isinstance(payload, dict):
                listed = (payload.get("sources_payload") or {}).get("sources")
                if isinstance(listed, list):
                    found = _sources(listed)
                    if found:
                        return tuple(found)
        return tuple(self._text_sources)

    def result(self) -> AskResult:
        """The finished answer; raises when the stream did not deliver one."""
        thread = self.meta.get("backend_uuid", "")
        if not self.completed:
            if self.awaiting_user:
                raise ClarifyingQuestionsError(
                    "deep research stopped to ask clarifying questions: "
                    + " | ".join(self.questions),
                    questions=self.questions,
                    thread_uuid=thread,
                )
            if not thread:
                raise AskSessionError(
                    "the service answered 200 but started no thread "
                    "(the session has probably expired or the quota is used up)"
                )
            raise AskIncompleteError(
                f"the stream ended after {self.frames} frames before the answer completed",
                code="INCOMPLETE",
                thread_uuid=thread,
            )
        if not thread:
            raise AskSessionError(
                "the service answered 200 without a thread id "
                "(the session has probably expired or the quota is used up)"
            )
        return AskResult(
            answer=self.answer,
            sources=self.sources,
            backend_uuid=thread,
            context_uuid=self.meta.get("context_uuid", ""),
            thread_url_slug=self.meta.get("thread_url_slug", thread),
            read_write_token=self.meta.get("read_write_token", ""),
            display_model=self.meta.get("display_model", ""),
            search_mode=self.meta.get("search_mode", ""),
            frames=self.frames,
            questions=self.questions,
            early_final=self.early_final,
        )


def _join(chunks: Any) -> str:
    if not isinstance(chunks, list):
        return ""
    return "".join(c for c in chunks if isinstance(c, str))


def _items(workflow: Json) -> Iterator[Json]:
    steps = workflow.get("steps")
    for step in steps if isinstance(steps, list) else ():
        items = step.get("items") if isinstance(step, dict) else None
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                yield item


def _sources(results: list[Any]) -> list[Source]:
    out: list[Source] = []
    seen: set[str] = set()
    for row in results:
        if not isinstance(row, dict):
            continue
        url = row.get("url")
        if not isinstance(url, str) or not url or url in seen:
            continue
        seen.add(url)
        title = row.get("name") or row.get("title") or url
        out.append(Source(str(title), url))
    return out


def replay(payloads: Iterable[Json]) -> AskStream:
    """An :class:`AskStream` that has applied ``payloads`` (decoded frames) in order."""
    stream = AskStream()
    for payload in payloads:
        stream.apply(payload)
    return stream


__all__ = [
    "AskError",
    "AskResult",
    "AskStream",
    "Frame",
    "Source",
    "SseDecoder",
    "apply_patch",
    "replay",
]
