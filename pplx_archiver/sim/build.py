"""Response bodies from thread plans: entries (plain and schematized), listings, assets.

Pure functions of a :class:`~pplx_archiver.sim.account.ThreadPlan`; the only outside input
is ``sign``, which turns an asset into a signed CDN URL. Field names, nesting and value types
follow docs/dev/api.md and the real captures; each timestamp field uses the format the real service
uses for it (naive ISO, ``+00:00``, ``Z``, epoch-second strings, microsecond integers).
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from typing import Any

import orjson

from pplx_archiver.sim.account import (
    COUNCIL_MODELS,
    DOMAINS,
    SPENDING,
    US,
    AssetVersion,
    Payload,
    ThreadPlan,
    Turn,
)
from pplx_archiver.sim.text import answer_text

Json = dict[str, Any]
Signer = Callable[[AssetVersion], str]
_EPOCH = dt.datetime(1970, 1, 1)
AUTHOR = "simuser"


def _dt(us: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=us)


def iso_naive(us: int) -> str:
    """``2026-07-20T08:02:14.816554`` (entries' ``updated_datetime``, listings)."""
    return _dt(us).isoformat(timespec="microseconds")


def iso_offset(us: int) -> str:
    """``2026-07-20T08:02:14.816554+00:00`` (``entry_*_datetime``, workflow times)."""
    return iso_naive(us) + "+00:00"


def iso_z(us: int, drop_zeros: bool = False) -> str:
    """``…Z``; with ``drop_zeros`` the fraction loses trailing zeros like the real API."""
    text = iso_naive(us)
    if drop_zeros:
        text = text.rstrip("0").rstrip(".")
    return text + "Z"


def url_of(plan: ThreadPlan, n: int) -> str:
    """The cited URL number ``n`` of a thread."""
    return f"https://{DOMAINS[n % len(DOMAINS)]}/t{plan.index}/article-{n}"


def web_result(plan: ThreadPlan, n: int) -> Json:
    """One web result object."""
    url = url_of(plan, n)
    return {
        "name": f"Source {n} for thread {plan.index}",
        "snippet": f"Snippet of source {n}.",
        "timestamp": "2026-05-01T10:00:00",
        "url": url,
        "meta_data": {
            "client": "web",
            "citation_domain_name": DOMAINS[n % len(DOMAINS)],
            "domain_name": DOMAINS[n % len(DOMAINS)],
            "description": f"Description {n}",
            "published_date": "2026-05-01",
        },
        "is_attachment": False,
        "is_image": False,
        "is_code_interpreter": False,
        "is_knowledge_card": False,
        "is_navigational": False,
        "is_widget": False,
        "is_focused_web": False,
        "is_client_context": False,
        "is_memory": False,
        "is_conversation_history": False,
        "is_conversation_summary": False,
    }


def answer_of(plan: ThreadPlan, turn: Turn) -> str:
    """The answer Markdown of a turn (a rewritten answer reads differently)."""
    seed = turn.answer_seed + (":rewritten" if turn.rewritten else "")
    seed += f":edit{turn.edited}" if turn.edited else ""
    return answer_text(seed, turn.features, len(turn.web))


def _item(item_id: str, kind: str, payload: Json) -> Json:
    return {"id": item_id, "type": kind, "payload": payload, "display_mode": None, "variant": None}


def _step(step_id: str, title: str, items: list[Json], start: int, end: int, **extra: Any) -> Json:
    step = {
        "id": step_id,
        "status": "WORKFLOW_COMPLETED",
        "title": title,
        "items": items,
        "started_at": iso_offset(start),
        "completed_at": iso_offset(end),
        "source_tier": "SOURCE_TIER_DEFAULT",
    }
    step.update(extra)
    return step


def _sources_item(plan: ThreadPlan, urls: tuple[int, ...], item_id: str = "_0") -> Json:
    payload = {"sources_payload": {"sources": [web_result(plan, n) for n in urls]}}
    return _item(item_id, "WORKFLOW_ITEM_SOURCES", payload)


def _queries_item(turn: Turn) -> Json:
    return _item("_0", "WORKFLOW_ITEM_QUERIES", {"queries_payload": {"queries": [turn.query]}})


def _text_item(text: str, variant: str, item_id: str = "_1") -> Json:
    payload = {
        "text_payload": {
            "text": text,
            "chunks": [text],
            "variant": variant,
            "is_streaming": False,
            "is_mono": False,
        }
    }
    return _item(item_id, "WORKFLOW_ITEM_TEXT", payload)


def _table_item(plan: ThreadPlan, turn: Turn) -> Json:
    rows = [
        {"cells": {"Name": "a|b pipe", "Notes": "line one\nline two", "Score": {"value": 3}}},
        {"cells": {"Name": f"row {turn.index}", "Notes": "plain", "Score": {"value": 1}}},
        ["list|row", "multi\nline", "7"],
    ]
    payload = {"table_payload": {"columns": ["Name", "Notes", "Score"], "rows": rows}}
    return _item("_t", "WORKFLOW_ITEM_TABLE", payload)


def _time_at(plan: ThreadPlan, us: int | None) -> str:
    if us is None:
        return ""
    return iso_z(us) if plan.index % 2 else iso_offset(us)


def anchor_payload(plan: ThreadPlan, p: Payload) -> Json:
    """The anchor of a sub-agent inside a main entry's workflow (status may lag)."""
    return {
        "version": "1.0",
        "status": p.anchor_status,
        "headline": p.headline,
        "started_at": "",
        "completed_at": "",
        "predicted_completion_at": "",
        "steps": [],
        "snapshots": [],
        "id": p.payload_id,
        "is_background_anchor": True,
        "objective_chunks": list(p.objective),
        "icon": "subagent",
    }


def subagent_payload(plan: ThreadPlan, p: Payload) -> Json:
    """The full nested workflow of a background sub-agent (authoritative status)."""
    steps = [
        _step(
            f"{p.payload_id}:s0",
            "Search",
            [_sources_item(plan, p.sources)],
            p.created_us,
            p.created_us + US,
            tool_name="search_web",
            icon="search",
        ),
        _step(
            f"{p.payload_id}:s1",
            "Answer",
            [_text_item(f"Result of {p.headline}.", "answer")],
            p.created_us + US,
            p.created_us + 2 * US,
            tool_name="write",
            icon="store",
        ),
    ]
    return {
        "version": "1.0",
        "model": p.model,
        "status": p.status,
        "headline": p.headline,
        "started_at": _time_at(plan, p.created_us),
        "completed_at": _time_at(plan, p.completed_us),
        "predicted_completion_at": "",
        "steps": steps,
        "snapshots": [{"type": "USAGE_TOTAL", "usage_total": {"compute_time_s": 12}}],
        "id": p.payload_id,
        "objective_chunks": list(p.objective),
    }


def _workflow_steps(plan: ThreadPlan, turn: Turn, answer: str) -> tuple[list[Json], str | None]:
    s, e = turn.created_us, turn.updated_us
    base = [
        _step(
            f"{turn.backend_uuid[:8]}-search",
            "Searching the web",
            [_queries_item(turn), _sources_item(plan, turn.wsrc)],
            s,
            s + US,
            tool_name="search_web",
            icon="search",
        ),
    ]
    if turn.kind == "council":
        members = []
        chosen = turn.members or COUNCIL_MODELS
        for i, model in enumerate(chosen):
            urls = turn.wsrc[i :: len(chosen)]
            member = {
                "mode": "LLM_COUNCIL",
                "model": model,
                "status": "WORKFLOW_COMPLETED",
                "headline": f"{model} answer",
                "steps": [
                    _step(f"{model}-q", "Queries", [_queries_item(turn)], s, s + US),
                    _step(f"{model}-s", "Sources", [_sources_item(plan, urls)], s, s + US),
                    _step(
                        f"{model}-a",
                        "Answer",
                        [_text_item(f"{model}: {answer[:200]}", "answer")],
                        s,
                        e,
                    ),
                ],
            }
            members.append(
                _item(
                    f"{turn.backend_uuid}_{model}",
                    "WORKFLOW_ITEM_WORKFLOW",
                    {"workflow_payload": member},
                )
            )
        council = _step(
            f"{turn.backend_uuid[:8]}-council",
            "Model council",
            members,
            s,
            e,
            tool_name="council_research",
            icon="plan",
        )
        return [council], "LLM_COUNCIL"
    if turn.kind == "deep-research":
        insights = _item(
            "_c",
            "WORKFLOW_ITEM_CONTENT",
            {"content_payload": {"entities": [{"description": "Key insight."}]}},
        )
        steps = [
            *base,
            _step(
                f"{turn.backend_uuid[:8]}-ins",
                "Insights",
                [insights, _table_item(plan, turn)],
                s + US,
                e,
                tool_name="insights",
                icon="extract",
            ),
        ]
        return steps, "DEEP_RESEARCH"
    if turn.kind == "computer":
        steps = list(base)
        steps.append(
            _step(
                f"{turn.backend_uuid[:8]}-bash",
                "Running code",
                [
                    _text_item("Thinking about the next step.", "thought", "_0"),
                    _text_item("$ ls\nreport.md", "thinking", "_1"),
                    _table_item(plan, turn),
                ],
                s + US,
                s + 2 * US,
                tool_name="bash",
                icon="plan",
            )
        )
        by_id = {p.payload_id: p for p in plan.payloads}
        for pid in turn.anchors:
            p = by_id[pid]
            steps.append(
                {
                    "id": f"{pid}:workflow",
                    "status": p.anchor_status,
                    "title": p.headline,
                    "items": [
                        _item(
                            pid,
                            "WORKFLOW_ITEM_WORKFLOW",
                            {"workflow_payload": anchor_payload(plan, p)},
                        )
                    ],
                    "started_at": "",
                    "completed_at": "",
                    "tool_name": "run_subagent",
                    "icon": "subagent",
                    "unnest_items": True,
                }
            )
        steps.append(
            _step(
                f"{turn.backend_uuid[:8]}-ans",
                "Answer",
                [_text_item(answer, "answer")],
                e - US,
                e,
                tool_name="write",
                icon="store",
            )
        )
        return steps, None
    return base, None


def asset_object(a: AssetVersion, sign: Signer) -> Json:
    """One asset as blocks and ``/rest/assets/.../data`` describe it."""
    handle = a.content == "handle"
    url = None if handle else sign(a)
    typed: Json = {"url": url, "filename": a.file_name, "final": True}
    if a.typed_key == "research_report":
        typed = {"url": url, "file_name": a.file_name, "final": True, "source_content": None}
    obj: Json = {
        "uuid": a.uuid,
        "asset_type": a.asset_type,
        "created_at": str(a.created_s),
        "title": a.file_name,
        a.typed_key: typed,
        "root_asset_id": a.root,
        "preview_info": [
            {
                "type": "text",
                "media_type": "text/markdown",
                "is_streaming": False,
                "file_handle": f"file:{a.file_name}",
            }
        ],
    }
    obj["download_info"] = (
        None
        if handle
        else [{"url": url, "s3_url": url, "filename": a.file_name, "is_exportable": True}]
    )
    return obj


def _blocks(plan: ThreadPlan, turn: Turn, sign: Signer) -> list[Json]:
    if turn.stub:
        return []
    answer = answer_of(plan, turn)
    blocks: list[Json] = []
    goal = {
        "id": "0",
        "description": f"Plan for {turn.query}",
        "final": True,
        "todo_task_status": "INCOMPLETE",
    }
    plan_block = {"progress": "DONE", "goals": [goal], "final": True}
    blocks.append({"intended_usage": "plan", "plan_block": plan_block})
    md = {
        "progress": "DONE",
        "chunks": [answer],
        "chunk_starting_offset": 0,
        "answer": answer,
        "inline_token_annotations": [],
    }
    blocks.append({"intended_usage": "ask_text_0_markdown", "markdown_block": dict(md)})
    blocks.append({"intended_usage": "ask_text", "markdown_block": md})
    steps, mode = _workflow_steps(plan, turn, answer)
    workflow: Json = {
        "version": "1.0",
        "status": turn.status,
        "headline": "",
        "started_at": iso_offset(turn.created_us),
        "completed_at": iso_offset(turn.updated_us),
        "predicted_completion_at": "",
        "snapshots": [],
        "steps": steps,
    }
    if mode:
        workflow["mode"] = mode
    blocks.append({"intended_usage": "workflow_root", "workflow_block": workflow})
    blocks.append(
        {
            "intended_usage": "web_results",
            "web_result_block": {
                "progress": "DONE",
                "web_results": [web_result(plan, n) for n in turn.web],
            },
        }
    )
    if turn.assets:
        blocks.append(
            {
                "intended_usage": "unified_assets",
                "unified_assets_block": {"assets": [asset_object(a, sign) for a in turn.assets]},
            }
        )
    return blocks


def _plain_steps(plan: ThreadPlan, turn: Turn, sign: Signer) -> list[Json]:
    if turn.stub:
        return []
    answer = answer_of(plan, turn)
    web = [web_result(plan, n) for n in turn.web]
    steps: list[Json] = [
        {
            "step_type": "INITIAL_QUERY",
            "content": {"goal_id": None, "query": turn.query},
            "uuid": "",
        },
        {
            "step_type": "SEARCH_WEB",
            "content": {"goal_id": "0", "queries": [{"engine": "default", "query": turn.query}]},
            "uuid": turn.frontend_uuid[:8] + "-sw",
        },
        {
            "step_type": "SEARCH_RESULTS",
            "content": {"goal_id": "0", "web_results": web},
            "uuid": turn.frontend_uuid[:8] + "-sr",
        },
    ]
    if turn.council_step:
        steps.append(
            {
                "step_type": "COUNCIL_RESEARCH",
                "content": {"goal_id": "0", "models": list(turn.members or COUNCIL_MODELS)},
                "uuid": turn.frontend_uuid[:8] + "-cr",
            }
        )
    if turn.research_answer:
        report = next((a for a in turn.assets if plan.report and a.uuid == plan.report[0]), None)
        steps.append(
            {
                "step_type": "RESEARCH_ANSWER",
                "content": {
                    "goal_id": "0",
                    "title": plan.title,
                    "file_name": plan.report[2] if plan.report else "",
                    "url": sign(report) if report else "",
                    "summary": answer[:120],
                },
                "uuid": turn.frontend_uuid[:8] + "-ra",
            }
        )
    if turn.kind == "computer":
        by_id = {p.payload_id: p for p in plan.payloads}
        items = [_sources_item(plan, turn.wsrc)] + [
            _item(
                pid,
                "WORKFLOW_ITEM_WORKFLOW",
                {"workflow_payload": anchor_payload(plan, by_id[pid])},
            )
            for pid in turn.anchors
        ]
        ts = iso_offset(turn.created_us + US)
        steps.append(
            {
                "step_type": "ASI_TOOL_INPUT",
                "content": {
                    "goal_id": "1",
                    "workflow_items": [],
                    "workflow_snapshots": [],
                    "timestamp": ts,
                },
                "uuid": turn.frontend_uuid[:8] + "-ti",
            }
        )
        steps.append(
            {
                "step_type": "ASI_TOOL_OUTPUT",
                "content": {
                    "goal_id": "1",
                    "workflow_items": items,
                    "workflow_snapshots": [],
                    "timestamp": ts,
                },
                "uuid": turn.frontend_uuid[:8] + "-to",
            }
        )
    if turn.answer_in_text:
        final: Json = {
            "answer": answer,
            "web_results": web,
            "chunks": [answer],
            "extra_web_results": [],
            "structured_answer": [],
        }
    else:
        final = {"workflow_snapshots": {"": [{"type": "TODO_LIST", "todo_list": {"items": []}}]}}
    steps.append(
        {
            "step_type": "FINAL",
            "content": {"goal_id": None, "answer": orjson.dumps(final).decode()},
            "uuid": "",
        }
    )
    return steps


def _space(plan: ThreadPlan, spaces: list[Json] | None) -> Json | None:
    if plan.space is None or spaces is None:
        return None
    return spaces[plan.space]


def _entry_common(plan: ThreadPlan, turn: Turn, collection: Json | None) -> Json:
    entry: Json = {
        "backend_uuid": turn.backend_uuid,
        "context_uuid": plan.context_uuid,
        "uuid": turn.frontend_uuid,
        "frontend_context_uuid": plan.frontend_context_uuid,
        "frontend_uuid": turn.frontend_uuid,
        "status": "COMPLETED",
        "thread_title": plan.title,
        "related_queries": [] if turn.stub else [f"More about {turn.query}"],
        "display_model": turn.served_model or turn.display_model,
        "user_selected_model": turn.display_model,
        "personalized": True,
        "mode": "ASI" if turn.kind == "computer" else "COPILOT",
        "query_str": turn.query,
        "search_focus": "internet",
        "source": "default",
        "attachments": [],
        "updated_datetime": iso_naive(turn.updated_us),
        "read_write_token": plan.rw_token,
        "step_type": "FINAL",
        "author_id": "00000000-0000-4000-8000-00000000a11c",
        "author_username": AUTHOR,
        "author_image": None,
        "bookmark_state": "NOT_BOOKMARKED",
        "s3_social_preview_url": None,
        "thread_access": 1,
        "thread_url_slug": plan.uuid,
        "query_source": "default" if turn.index == 0 else "followup",
        "privacy_state": "NONE",
        "gpt4": False,
        "sources": {"sources": ["web"]},
        "entry_created_datetime": iso_offset(turn.created_us),
        "entry_updated_datetime": iso_offset(turn.updated_us),
        "access_level": "PRIVATE_READ",
        "search_implementation_mode": "multi_step" if turn.kind != "search" else "fast",
        "query_language": "en",
        "social_info": {"view_count": 0, "fork_count": 0, "like_count": 0, "user_likes": False},
        "featured_images": [],
        "collection_info": collection,
        "trigger": "subagent_result" if turn.stub else None,
        "is_background": False if turn.stub else None,
        "locked_reason": SPENDING if turn.locked else None,
        "side_by_side_metadata": None,
        "related_query_items": (
            [] if turn.stub else [{"text": f"More about {turn.query}", "type": "DEFAULT"}]
        ),
        "answer_modes": [{"answer_mode_type": "SOURCES"}],
        "structured_answer_block_usages": [] if turn.stub else ["workflow_root", "ask_text"],
        "reconnectable": False,
        "classifier_results": {"personal_search": False, "skip_search": False},
    }
    if turn.search_mode_key:
        entry["search_mode"] = turn.search_mode
    if turn.display_model is None and turn.index % 2:
        del entry["display_model"]
        del entry["user_selected_model"]
    if turn.variant is not None:
        v = turn.variant
        meta: Json = {
            "experiment_role": v.experiment_role,
            "sibling_uuid": v.sibling_uuid,
            "experiment_override": {"model": "qwen3_instruct"},
            "execution_log": {},
        }
        if v.selection_status is not None:
            meta["selection_status"] = v.selection_status
        entry["side_by_side_metadata"] = meta
    return entry


def entry(
    plan: ThreadPlan, turn: Turn, blocks: bool, sign: Signer, spaces: list[Json] | None
) -> Json:
    """One main entry in the plain (``text`` steps) or schematized (``blocks``) flavour."""
    out = _entry_common(plan, turn, _space(plan, spaces))
    if blocks:
        out["blocks"] = _blocks(plan, turn, sign)
    elif plan.shape:
        _old_shape(plan, turn, out)
    else:
        out["text"] = orjson.dumps(_plain_steps(plan, turn, sign)).decode()
        out["created_us"] = turn.created_us
        out["updated_us"] = turn.updated_us
    return out


def _old_shape(plan: ThreadPlan, turn: Turn, out: Json) -> None:
    """Give a plain entry of an old search thread the payload shape of its era.

    ``2023``: ``text`` is one JSON object, the answer prose and its ``web_results`` inside,
    ``mode`` ``concise``; ``2023-early``: the same object, no ``mode`` and no display model
    at all, only the ``gpt4`` flag (true on every other turn). ``2024``: ``text`` is the JSON
    list of steps whose FINAL answer is JSON again, ``mode`` ``copilot``. ``2025``: no
    ``text``; an ``ask_text`` block holds the answer and a ``sources_answer_mode`` block the
    sources. None carries ``search_mode``; the display model is ``turbo`` except in
    ``2023-early`` (docs/dev/formats.md).
    """
    answer = answer_of(plan, turn)
    web = [web_result(plan, n) for n in turn.web]
    for key in ("search_mode", "related_query_items", "structured_answer_block_usages"):
        out.pop(key, None)
    out["display_model"] = out["user_selected_model"] = "turbo"
    if plan.shape == "2023-early":
        for key in ("mode", "display_model", "user_selected_model"):
            del out[key]
        out["gpt4"] = turn.index % 2 == 0
    elif plan.shape == "2023":
        out["mode"] = "concise"
    if plan.shape.startswith("2023"):
        doc = {"answer": answer, "web_results": web, "chunks": [answer], "extra_web_results": []}
        out["text"] = orjson.dumps(doc).decode()
    elif plan.shape == "2024":
        out["mode"] = "copilot"
        out["text"] = orjson.dumps(_plain_steps(plan, turn, lambda _a: "")).decode()
    else:
        md = {"progress": "DONE", "chunks": [answer], "chunk_starting_offset": 0, "answer": answer}
        sources = {"answer_mode_type": "SOURCES", "progress": "DONE", "web_results": web}
        out["blocks"] = [
            {"intended_usage": "ask_text", "markdown_block": md},
            {"intended_usage": "sources_answer_mode", "sources_mode_block": sources},
        ]


def background_entry(plan: ThreadPlan, p: Payload, blocks: bool) -> Json:
    """One ``background_entries`` item carrying a sub-agent's full workflow."""
    created = p.created_us
    out: Json = {
        "backend_uuid": p.bg_uuid,
        "context_uuid": plan.context_uuid,
        "uuid": p.bg_frontend,
        "frontend_context_uuid": plan.frontend_context_uuid,
        "frontend_uuid": p.bg_frontend,
        "status": "COMPLETED",
        "thread_title": plan.title,
        "display_model": "pplx_asi",
        "mode": "ASI",
        "search_mode": "ASI",
        "query_str": "",
        "query_source": "scheduled",
        "updated_datetime": iso_naive(p.updated_us),
        "entry_created_datetime": iso_offset(created),
        "entry_updated_datetime": iso_offset(p.updated_us),
        "read_write_token": plan.rw_token,
        "author_username": AUTHOR,
        "thread_url_slug": plan.uuid,
        "trigger": None,
        "is_background": True,
        "locked_reason": SPENDING if p.locked else None,
        "side_by_side_metadata": None,
    }
    run = {
        "id": p.payload_id,
        "status": "WORKFLOW_COMPLETED",
        "title": p.headline,
        "items": [],
        "started_at": iso_offset(created),
        "completed_at": "",
        "tool_name": "run_subagent",
        "icon": "subagent",
    }
    nested = _item(
        p.payload_id, "WORKFLOW_ITEM_WORKFLOW", {"workflow_payload": subagent_payload(plan, p)}
    )
    holder = {
        "id": f"{p.payload_id}:workflow",
        "status": p.status,
        "title": p.headline,
        "items": [nested],
        "started_at": "",
        "completed_at": "",
        "unnest_items": True,
    }
    if blocks:
        out["blocks"] = [
            {
                "intended_usage": "workflow_root",
                "workflow_block": {
                    "version": "1.0",
                    "status": p.status,
                    "headline": p.headline,
                    "started_at": iso_offset(created),
                    "completed_at": _time_at(plan, p.completed_us),
                    "predicted_completion_at": "",
                    "snapshots": [],
                    "steps": [run, holder],
                },
            }
        ]
    else:
        ts = iso_offset(created)
        steps = [
            {"step_type": "INITIAL_QUERY", "content": {"goal_id": None, "query": ""}, "uuid": ""},
            {
                "step_type": "ASI_TOOL_OUTPUT",
                "content": {
                    "goal_id": "0",
                    "workflow_items": [nested],
                    "workflow_snapshots": [],
                    "timestamp": ts,
                },
                "uuid": p.payload_id,
            },
            {
                "step_type": "FINAL",
                "content": {
                    "goal_id": None,
                    "answer": orjson.dumps(
                        {"answer": f"Result of {p.headline}.", "web_results": []}
                    ).decode(),
                },
                "uuid": "",
            },
        ]
        out["text"] = orjson.dumps(steps).decode()
        out["created_us"] = created
        out["updated_us"] = p.updated_us
    return out


def thread_metadata(plan: ThreadPlan, spaces: list[Json] | None) -> Json:
    """The ``thread_metadata`` object of thread detail."""
    locked = any(t.locked for t in plan.turns) or any(p.locked for p in plan.payloads)
    snapshots = None
    files = [a for t in plan.turns for a in t.assets if a.content == "handle"]
    if files:
        snapshots = {
            "SHARED_FILES": {
                "type": "SHARED_FILES",
                "shared_files": {
                    "items": [
                        {
                            "uuid": a.uuid,
                            "asset_type": a.asset_type,
                            "doc_file": {"filename": a.file_name, "final": True},
                            "created_at": str(a.created_s),
                        }
                        for a in files
                    ]
                },
            }
        }
    space = _space(plan, spaces)
    return {
        "author_id": "00000000-0000-4000-8000-00000000a11c",
        "author_image": None,
        "author_username": AUTHOR,
        "bookmark_state": "NOT_BOOKMARKED",
        "collection_info": space,
        "created_at": iso_naive(plan.created_us),
        "crons": None,
        "is_frozen_thread": False,
        "local_workspace_directories": None,
        "locked_reason": SPENDING if locked else None,
        "mode": plan.metadata_mode,
        "parent_info": None,
        "sensitive_claims_visibility": None,
        "subscribe_entry_uuids": None,
        "thread_status": "blocked" if locked else "completed",
        "thread_status_summary": "Add credits to continue" if locked else None,
        "thread_status_summary_enum": "add_credits" if locked else None,
        "title": plan.title,
        "updated_at": iso_naive(plan.updated_us),
        "wake_at": None,
        "workflow_snapshots": snapshots,
    }


def _first_answer(plan: ThreadPlan) -> str:
    first = plan.turns[0]
    return answer_of(plan, first)[:300]


def list_item(plan: ThreadPlan, number: int, spaces: list[Json] | None) -> Json:
    """One ``list_ask_threads`` / ``list_collection_threads`` item (without paging fields)."""
    first = plan.turns[0]
    preview = _first_answer(plan)
    space = _space(plan, spaces)
    item: Json = {
        "thread_number": number,
        "last_query_datetime": iso_naive(plan.updated_us),
        "mode": "asi" if plan.kind == "computer" else "copilot",
        "context_uuid": plan.context_uuid,
        "uuid": plan.uuid,
        "frontend_uuid": first.frontend_uuid,
        "frontend_context_uuid": plan.frontend_context_uuid,
        "slug": plan.uuid,
        "title": plan.title,
        "query_str": first.query,
        "first_answer": orjson.dumps({"answer": preview}).decode(),
        "answer_preview": preview[:200],
        "thread_access": 1,
        "status": "COMPLETED",
        "display_model": None if plan.no_display_model else plan.turns[-1].display_model,
        "expiry_time": None,
        "source": "default",
        "source_metadata": None,
        "thread_status": "completed",
        "thread_status_summary": None,
        "thread_status_summary_enum": None,
        "locked_reason": None,
        "wake_at": None,
        "crons": None,
        "stream_created_at": None,
        "persona_id": None,
        "query_source": None,
        "dream_mode": None,
        "unread": plan.index % 3 == 0,
        "query_count": sum(1 for t in plan.turns if not t.stub),
        "search_focus": "internet",
        "sources": ["web"],
        "featured_images": [],
        "read_write_token": plan.rw_token,
        "social_info": {"view_count": 0, "fork_count": 0, "like_count": 0, "user_likes": False},
        "assets": [],
        "num_assets": sum(len(t.assets) for t in plan.turns),
        "attachments": [],
    }
    if space is not None:
        item["collection"] = {k: space[k] for k in ("uuid", "title", "emoji", "slug")}
    return item


def graphql_node(plan: ThreadPlan, spaces: list[Json] | None) -> Json:
    """One GraphQL library ``Thread`` node."""
    raw_id = orjson.dumps({"c": plan.context_uuid})
    space = _space(plan, spaces)
    dm = None if plan.no_display_model else plan.turns[-1].display_model
    return {
        "id": "TH:" + base64.b64encode(raw_id).decode(),
        "contextUUID": plan.context_uuid,
        "frontendContextUUID": plan.frontend_context_uuid,
        "entryId": plan.uuid,
        "slug": plan.uuid,
        "readWriteToken": plan.rw_token,
        "name": plan.title,
        "mode": {
            "studio": "STUDIO",
            "search": "SEARCH",
            "deep-research": "RESEARCH",
            "computer": "ASI",
            "council": "AGENTIC_RESEARCH",
            "study": "STUDY",
        }[plan.kind],
        "variant": "THREAD",
        "displayModel": None if dm is None else {"modelID": dm},
        "isPinned": False,
        "isArchived": False,
        "isUnread": plan.index % 3 == 0,
        "status": "COMPLETED",
        "statusSummary": None,
        "answerPreview": _first_answer(plan)[:200],
        "updatedAt": iso_z(plan.updated_us, plan.drop_zeros),
        "space": None
        if space is None
        else {
            "spaceUuid": space["uuid"],
            "uuid": space["uuid"],
            "title": space["title"],
            "slug": space["slug"],
            "emoji": space["emoji"],
            "__typename": "Space",
        },
        "topAssets": [],
        "attachmentURLs": [],
        "taskSchedule": None,
        "__typename": "Thread",
    }


def space_object(seed: int, k: int, uuid: str, thread_count: int, updated_us: int) -> Json:
    """One space (collection) as ``list_user_collections``/``get_collection`` show it."""
    return {
        "number": k,
        "has_next_page": False,
        "updated_datetime": iso_naive(updated_us),
        "uuid": uuid,
        "title": f"Space {k} ✨" if k % 2 else f"Research space {k}",
        "description": f"Synthetic space {k}",
        "instructions": "",
        "suggested_queries": [{"query": "Summarize key insights in this space"}],
        "visual_concepts": None,
        "emoji": "1f4c1",
        "access": 1,
        "user_permission": 4,
        "thread_count": thread_count,
        "page_count": 0,
        "slug": f"space-{k}-{uuid[:8]}",
        "s3_social_preview_url": None,
        "owner_user": {
            "username": AUTHOR,
            "permission": 4,
            "image": None,
            "email": "sim@example.invalid",
            "name": "Sim User",
        },
        "contributor_users": [],
        "model_selection": None,
        "template_id": None,
        "file_count": 0,
        "focused_web_config": {"link_configs": []},
        "max_contributors": 5,
        "enable_web_by_default": True,
        "knowledge_enabled": False,
        "knowledge_dream_instructions": None,
        "primers": [],
        "threads": None,
        "is_pinned": None,
        "is_invited": None,
        "space_type": None,
        "pending_join_request_status": None,
        "can_request_to_join": False,
    }
