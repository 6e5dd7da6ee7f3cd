"""The simulator's ask side: ``POST /rest/sse/perplexity_ask`` and the calls around an ask.

An ask creates a thread (or, with ``last_backend_uuid``, appends an entry to one) in the
account state, so it is then listed and served by ``GET /rest/thread/…`` like any other;
the streamed answer is exactly the answer the thread then holds. Streams come in the three
real payload generations (``POST /__sim/ask`` selects one): ``diff`` (workflow block patched
by ``diff_block`` JSON-Patch operations), ``blocks`` (whole markdown blocks continuing at
``chunk_starting_offset``) and ``text`` (a ``text`` field of JSON steps ending with FINAL).
Every stream sends an early ``final: true`` while still PENDING, then the COMPLETED frame.

``POST /__sim/ask`` also queues in-band faults for the next asks: ``rate_limit``, ``failed``,
``clarify`` (deep research waits for answers), ``expired`` (a bare 200), ``cut`` (the stream
stops before COMPLETED) and ``stall`` (frames stop; the connection stays open).
Also here: ``POST /rest/thread/mark_viewed``, ``POST /rest/collections/batch_move_threads``
and ``POST /rest/collections/create_collection``.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from pplx_archiver.sim import account, build, ids, sessions
from pplx_archiver.sim.account import COMPLETED, METADATA_MODE, SEARCH_MODE, TRUTH_MODE, US
from pplx_archiver.sim.models import models_config

if TYPE_CHECKING:
    from pplx_archiver.sim.account import ThreadPlan, Turn
    from pplx_archiver.sim.server import SimServer

Json = dict[str, Any]
GENERATIONS = ("diff", "blocks", "text")
FAULTS = ("rate_limit", "failed", "clarify", "expired", "cut", "stall")
# model_preference → the thread kind it creates
KIND_OF_MODEL = {
    "pplx_alpha": "deep-research",
    "pplx_agentic_research": "council",
    "pplx_study": "study",
}
CHUNK = 24


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status, media_type="application/json")


def _sse(payload: Json, event: str = "message") -> bytes:
    return f"event: {event}\r\ndata: ".encode() + orjson.dumps(payload) + b"\r\n\r\n"


def _chunks(text: str) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)] or [""]


@dataclasses.dataclass(slots=True)
class AskControl:
    """How the next asks stream: payload generation, delay between frames, queued faults."""

    generation: str = "diff"
    delay_s: float = 0.0
    faults: list[str] = dataclasses.field(default_factory=list)
    asks: int = 0
    viewed: list[str] = dataclasses.field(default_factory=list)
    moved: list[tuple[str, str]] = dataclasses.field(default_factory=list)


class AskSim:
    """Handlers of the ask endpoints of one simulator instance."""

    def __init__(self, server: SimServer) -> None:
        self.server = server
        self.state = server.state
        self.control = AskControl()

    # --- thread creation ------------------------------------------------------------
    def _turn(
        self,
        plan: ThreadPlan,
        kind: str,
        query: str,
        model: str,
        at_us: int,
        members: tuple[str, ...] = (),
    ) -> Turn:
        seed = self.state.seed
        tag = f":ask{len(plan.turns)}"
        rng = random.Random(f"{seed}:{plan.index}{tag}")
        builder = account.Builder(
            rng, seed, plan.index, kind, list(plan.turns), [], at_us, 6, False
        )
        turn = account.make_turn(
            builder,
            kind,
            search_mode=SEARCH_MODE[kind],
            sm_key=True,
            display_model=model,
            council_step=kind == "council",
            research_answer=False,
            big_ok=False,
            with_variant=False,
            with_assets=False,
            cont_tag=tag,
        )
        created = at_us - (turn.updated_us - turn.created_us)
        return dataclasses.replace(
            turn,
            query=query,
            status=COMPLETED,
            locked=False,
            created_us=created,
            updated_us=at_us,
            members=members if kind == "council" else (),
        )

    def _new_thread(
        self, kind: str, query: str, model: str, members: tuple[str, ...] = ()
    ) -> ThreadPlan:
        def make(index: int, at_us: int) -> ThreadPlan:
            base = account.plan_added(self.state.seed, index, self.state.size, at_us)
            empty = dataclasses.replace(base, turns=())
            turn = self._turn(empty, kind, query, model, at_us, members)
            turn = dataclasses.replace(turn, backend_uuid=base.uuid)
            return dataclasses.replace(
                base,
                title=" ".join(query.split())[:120] or "Untitled",
                kind=kind,
                mode=TRUTH_MODE[kind],
                mode_switch=False,
                no_search_mode=False,
                no_display_model=False,
                metadata_mode=METADATA_MODE[kind],
                space=None,
                turns=(turn,),
                payloads=(),
                created_us=turn.created_us,
                updated_us=at_us,
                report=None,
            )

        return self.state.put_new(make)

    def _follow_up(
        self, index: int, query: str, model: str | None, members: tuple[str, ...] = ()
    ) -> ThreadPlan:
        def make(plan: ThreadPlan, at_us: int) -> ThreadPlan:
            last = plan.turns[-1]
            kind = last.kind if last.kind in SEARCH_MODE else "search"
            asked = model or last.display_model or ""
            turn = self._turn(plan, kind, query, asked, at_us, members)
            return dataclasses.replace(plan, turns=(*plan.turns, turn), updated_us=at_us)

        return self.state.put(index, make)

    # --- the ask endpoint -------------------------------------------------------------
    async def ask(self, request: Request) -> Response:
        auth = self.server.check_auth(request, True)
        if auth == sessions.LOGGED_OUT:
            return _json({"detail": {"error_code": "UNAUTHORIZED"}}, 401)
        if auth != sessions.OK:
            return _json({"detail": {"error_code": "FORBIDDEN"}}, 403)
        try:
            body = orjson.loads(await request.body())
            query = body["query_str"]
            params = body.get("params") or {}
            if not isinstance(query, str) or not isinstance(params, dict):
                raise TypeError
        except (orjson.JSONDecodeError, KeyError, TypeError):
            loc = ["body", "query_str"]
            return _json({"detail": [{"loc": loc, "msg": "field required"}]}, 422)
        model = str(params.get("model_preference") or "pplx_pro")
        compare = params.get("compare_model_preferences")
        members = tuple(str(m) for m in compare) if isinstance(compare, list) else ()
        if model not in models_config()["models"]:
            return _json({"detail": {"error_code": "INVALID_MODEL_PREFERENCE"}}, 400)
        self.control.asks += 1
        fault = self.control.faults.pop(0) if self.control.faults else None
        generation = self.control.generation
        if fault in ("rate_limit", "failed", "clarify", "expired"):
            return self._stream(self._fault_frames(fault, query, model))
        last = params.get("last_backend_uuid")
        if last:
            decoded = ids.decode_id(str(last), self.state.seed)
            if decoded is None or decoded[1] >= self.state.total:
                return _json({"detail": {"error_code": "ENTRY_NOT_FOUND"}}, 400)
            index = decoded[1]
            if params.get("read_write_token") != self.state.plan(index).rw_token:
                return _json({"detail": {"error_code": "FORBIDDEN"}}, 403)
            plan = self._follow_up(index, query, None, members)
        else:
            kind = KIND_OF_MODEL.get(model, "search")
            plan = self._new_thread(kind, query, model, members)
        return self._stream(self._frames(plan, plan.turns[-1], generation, fault))

    def _stream(self, frames: list[bytes | None]) -> Response:
        delay = self.control.delay_s

        async def body() -> AsyncIterator[bytes]:
            for frame in frames:
                if frame is None:  # stall: keep the connection open, send nothing more
                    await anyio.sleep(3600)
                    return
                yield frame
                if delay:
                    await anyio.sleep(delay)

        return StreamingResponse(body(), media_type="text/event-stream")

    # --- frames -----------------------------------------------------------------------
    def _meta(self, plan: ThreadPlan, turn: Turn) -> Json:
        return {
            "backend_uuid": turn.backend_uuid,
            "context_uuid": plan.context_uuid,
            "uuid": turn.frontend_uuid,
            "frontend_context_uuid": plan.frontend_context_uuid,
            "frontend_uuid": turn.frontend_uuid,
            "display_model": turn.display_model,
            "user_selected_model": turn.display_model,
            "mode": "COPILOT",
            "query_str": turn.query,
            "search_focus": "internet",
            "source": "default",
            "attachments": [],
            "read_write_token": plan.rw_token,
            "thread_url_slug": plan.uuid,
            "text_completed": False,
            "message_mode": "STREAMING",
            "search_mode": turn.search_mode,
            "status": "PENDING",
            "final_sse_message": False,
        }

    def _frames(
        self, plan: ThreadPlan, turn: Turn, generation: str, fault: str | None
    ) -> list[bytes | None]:
        answer = build.answer_of(plan, turn)
        web = [build.web_result(plan, n) for n in turn.web]
        meta = self._meta(plan, turn)
        chunks = _chunks(answer)
        if generation == "text":
            bodies = _text_frames(turn, answer, chunks, web)
        elif generation == "blocks":
            bodies = _block_frames(answer, chunks, web)
        else:
            bodies = _diff_frames(turn, answer, chunks, web)
        frames: list[bytes | None] = [_sse(meta | b) for b in bodies[:-2]]
        if fault == "cut":
            return frames[: max(1, len(frames) // 2)]
        if fault == "stall":
            return [*frames[: max(1, len(frames) // 2)], None]
        early = meta | bodies[-2] | {"text_completed": True, "final": True}
        full = meta | bodies[-1]
        full.update(
            text_completed=True,
            message_mode="FULL",
            status="COMPLETED",
            final=True,
            final_sse_message=True,
        )
        return [*frames, _sse(early), _sse(full), _sse({}, "end_of_stream")]

    def _fault_frames(self, fault: str, query: str, model: str) -> list[bytes | None]:
        if fault == "expired":
            return [_sse({}, "end_of_stream")]
        rng = random.Random(f"{self.state.seed}:fault:{self.control.asks}")
        backend = ids.make_id(rng, self.state.seed, ids.OTHER, 0)
        meta = {"backend_uuid": backend, "query_str": query, "display_model": model}
        if fault == "rate_limit":
            error = meta | {
                "status": "FAILED",
                "error_code": "RATE_LIMIT",
                "error_message": "You have reached your limit of asks for now.",
            }
            return [_sse(meta | {"status": "PENDING"}), _sse(error)]
        if fault == "failed":
            return [_sse(meta | {"status": "PENDING"}), _sse(meta | {"status": "FAILED"})]
        question = {
            "id": "sim-questions",
            "type": "WORKFLOW_ITEM_USER_QUESTIONS",
            "payload": {
                "user_questions_payload": {
                    "title": "Help me focus the research",
                    "timeout_seconds": 60,
                    "fields": [{"field_name": "Which period should the report cover?"}],
                    "response_endpoint": "handle_perplexity_research_clarifying_answers",
                }
            },
        }
        workflow = {
            "mode": "DEEP_RESEARCH",
            "status": "WORKFLOW_AWAITING_USER",
            "steps": [{"status": "WORKFLOW_AWAITING_USER", "items": [question]}],
        }
        block = {"intended_usage": "workflow_root", "workflow_block": workflow}
        return [_sse(meta | {"status": "PENDING", "blocks": [block]})]

    # --- calls around an ask ----------------------------------------------------------
    def _thread_index(self, value: Any) -> int | None:
        decoded = ids.decode_id(str(value), self.state.seed)
        if decoded is None or decoded[1] >= self.state.total:
            return None
        if decoded[0] not in (ids.THREAD, ids.ENTRY, ids.CONTEXT):
            return None
        return decoded[1]

    async def mark_viewed(self, request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return _json({"detail": [{"loc": ["body"], "msg": "JSON decode error"}]}, 422)
        ref = body.get("context_uuid") or body.get("entry_uuid") if isinstance(body, dict) else None
        if ref is None or self._thread_index(ref) is None:
            return _json({"detail": {"error_code": "THREAD_NOT_FOUND"}}, 404)
        self.control.viewed.append(str(ref))
        return _json({"status": "success"})

    async def batch_move(self, request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
            contexts = list(body["context_uuids"])
            target = str(body["target_collection_uuid"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return _json({"detail": [{"loc": ["body"], "msg": "field required"}]}, 422)
        spaces = self.state.spaces()
        k = next((n for n, s in enumerate(spaces) if s["uuid"] == target), None)
        if k is None:
            return _json({"detail": {"error_code": "COLLECTION_NOT_FOUND"}}, 404)

        def into_space(plan: ThreadPlan, _at: int) -> ThreadPlan:
            return dataclasses.replace(plan, space=k)

        for ctx in contexts:
            index = self._thread_index(ctx)
            if index is None:
                return _json({"detail": {"error_code": "THREAD_NOT_FOUND"}}, 404)
            self.state.put(index, into_space)
            self.control.moved.append((str(ctx), target))
        return _json({"status": "success"})

    async def create_collection(self, request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
            title = str(body["title"]).strip()
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return _json({"detail": [{"loc": ["body", "title"], "msg": "field required"}]}, 422)
        if not title:
            return _json({"detail": [{"loc": ["body", "title"], "msg": "empty title"}]}, 422)
        state = self.state
        k = len(state.spaces())
        rng = random.Random(f"{state.seed}:created-space:{k}")
        uuid = ids.make_id(rng, state.seed, ids.OTHER, k)
        space = build.space_object(state.seed, k, uuid, 0, account.T0_US + k * US)
        space.update(title=title, description=str(body.get("description") or ""))
        space["slug"] = f"{'-'.join(title.lower().split())[:40]}-{uuid[:8]}"
        state.add_space(space)
        return _json({"status": "success", **space})

    async def control_endpoint(self, request: Request) -> Response:
        c = self.control
        if request.method == "POST":
            try:
                body = orjson.loads(await request.body() or b"{}")
                generation = body.get("generation", c.generation)
                faults = [str(f) for f in body.get("faults", [])]
                if generation not in GENERATIONS or any(f not in FAULTS for f in faults):
                    raise ValueError
                c.generation = generation
                c.delay_s = float(body.get("delay_ms", c.delay_s * 1000)) / 1000
                c.faults.extend(faults)
            except (orjson.JSONDecodeError, ValueError, TypeError, AttributeError):
                msg = f"generation one of {GENERATIONS}, faults from {FAULTS}, delay_ms a number"
                return _json({"error": f"bad ask control: {msg}"}, 400)
        return _json(
            {
                "generation": c.generation,
                "delay_ms": c.delay_s * 1000,
                "faults": c.faults,
                "asks": c.asks,
                "viewed": c.viewed,
                "moved": c.moved,
            }
        )


def _diff_frames(turn: Turn, answer: str, chunks: list[str], web: list[Json]) -> list[Json]:
    """Third generation: a workflow block, then JSON-Patch diffs against it."""
    search = {
        "status": "WORKFLOW_COMPLETED",
        "title": "Searching the web",
        "id": "prefill_search_web",
        "tool_name": "search_web",
        "items": [
            {
                "id": "prefill_search_web:item:0",
                "type": "WORKFLOW_ITEM_QUERIES",
                "payload": {"queries_payload": {"queries": [turn.query]}},
            }
        ],
    }
    workflow = {"version": "1.0", "status": "WORKFLOW_AWAITING_NEXT_STEPS", "steps": [search]}
    if turn.kind == "deep-research":
        workflow["mode"] = "DEEP_RESEARCH"
    elif turn.kind == "council":
        workflow["mode"] = "LLM_COUNCIL"

    def diff(usage: str, field: str, patches: list[Json]) -> Json:
        return {"intended_usage": usage, "diff_block": {"field": field, "patches": patches}}

    text_item = {
        "id": "answer-item",
        "type": "WORKFLOW_ITEM_TEXT",
        "payload": {"text_payload": {"text": "", "chunks": [chunks[0]], "variant": "answer"}},
    }
    sources = {
        "id": "prefill_search_web:item:1",
        "type": "WORKFLOW_ITEM_SOURCES",
        "payload": {"sources_payload": {"sources": web}},
    }
    bodies: list[Json] = [
        {"blocks": [{"intended_usage": "workflow_root", "workflow_block": workflow}]},
        {
            "blocks": [
                diff("workflow_root", "workflow_block", [
                    {"op": "add", "path": "/steps/0/items/1", "value": sources}]),
                diff("web_results", "web_result_block", [
                    {"op": "replace", "path": "", "value": {"web_results": web}}]),
            ]
        },
        {
            "blocks": [
                diff("workflow_root", "workflow_block", [
                    {"op": "replace", "path": "/status", "value": "WORKFLOW_EXECUTING_STEPS"},
                    {"op": "add", "path": "/steps/1", "value": {
                        "status": "WORKFLOW_PENDING", "items": [text_item]}},
                ])
            ]
        },
    ]  # fmt: skip
    path = "/steps/1/items/0/payload/text_payload"
    for n, chunk in enumerate(chunks[1:], start=1):
        bodies.append(
            {"blocks": [diff("workflow_root", "workflow_block", [
                {"op": "add", "path": f"{path}/chunks/{n}", "value": chunk}])]}
        )  # fmt: skip
    done = [
        {"op": "replace", "path": "/steps/1/status", "value": "WORKFLOW_COMPLETED"},
        {"op": "replace", "path": f"{path}/text", "value": answer},
        {"op": "replace", "path": "/status", "value": "WORKFLOW_COMPLETED"},
    ]
    bodies.append({"blocks": [diff("workflow_root", "workflow_block", done)]})
    final_workflow = orjson.loads(orjson.dumps(workflow))
    final_workflow["status"] = "WORKFLOW_COMPLETED"
    final_workflow["steps"][0]["items"].append(sources)
    final_text = {"text": answer, "chunks": chunks, "variant": "answer", "is_streaming": False}
    final_workflow["steps"].append(
        {
            "status": "WORKFLOW_COMPLETED",
            "items": [text_item | {"payload": {"text_payload": final_text}}],
        }
    )
    bodies.append(
        {
            "blocks": [
                {"intended_usage": "workflow_root", "workflow_block": final_workflow},
                {"intended_usage": "web_results", "web_result_block": {"web_results": web}},
            ]
        }
    )
    return bodies


def _markdown(chunks: list[str], offset: int, answer: str | None) -> Json:
    block: Json = {
        "progress": "DONE" if answer is not None else "IN_PROGRESS",
        "chunks": chunks,
        "chunk_starting_offset": offset,
    }
    if answer is not None:
        block["answer"] = answer
    return block


def _block_frames(answer: str, chunks: list[str], web: list[Json]) -> list[Json]:
    """Second generation: whole blocks, markdown chunks continuing at an offset."""
    bodies: list[Json] = [
        {"blocks": [{"intended_usage": "web_results", "web_result_block": {"web_results": web}}]}
    ]
    for n, chunk in enumerate(chunks):
        md = _markdown([chunk], n, None)
        bodies.append({"blocks": [{"intended_usage": "ask_text", "markdown_block": md}]})
    full = _markdown(chunks, 0, answer)
    bodies.append(
        {
            "blocks": [
                {"intended_usage": "ask_text", "markdown_block": full},
                {"intended_usage": "web_results", "web_result_block": {"web_results": web}},
            ]
        }
    )
    return bodies


def _text_frames(turn: Turn, answer: str, chunks: list[str], web: list[Json]) -> list[Json]:
    """First generation: a ``text`` field of JSON steps; the FINAL step's answer grows."""
    steps: list[Json] = [
        {"step_type": "INITIAL_QUERY", "content": {"query": turn.query}, "uuid": ""},
        {"step_type": "SEARCH_WEB", "content": {"queries": [{"query": turn.query}]}, "uuid": ""},
        {"step_type": "SEARCH_RESULTS", "content": {"web_results": web}, "uuid": ""},
    ]

    def with_final(text: str) -> Json:
        final = {"answer": text, "web_results": web, "chunks": [text]}
        step = {"step_type": "FINAL", "content": {"answer": orjson.dumps(final).decode()}}
        return {"text": orjson.dumps([*steps, step]).decode()}

    bodies: list[Json] = [{"text": orjson.dumps(steps[:1]).decode()}]
    bodies.append({"text": orjson.dumps(steps).decode()})
    for n in range(1, len(chunks) + 1):
        bodies.append(with_final("".join(chunks[:n])))
    bodies.append(with_final(answer) | {"step_type": "FINAL"})
    return bodies


def routes(server: SimServer) -> list[Route]:
    """The ask routes of ``server`` (``server.ask`` is the :class:`AskSim`)."""
    sim = AskSim(server)
    server.ask = sim  # type: ignore[attr-defined]
    return [
        Route("/rest/sse/perplexity_ask", sim.ask, methods=["POST"]),
        Route("/rest/thread/mark_viewed", sim.mark_viewed, methods=["POST"]),
        Route("/rest/collections/batch_move_threads", sim.batch_move, methods=["POST"]),
        Route("/rest/collections/create_collection", sim.create_collection, methods=["POST"]),
        Route("/__sim/ask", sim.control_endpoint, methods=["GET", "POST"]),
    ]
