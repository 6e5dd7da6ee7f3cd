"""What an ask sends: the model table, mode/model resolution and the request envelope.

The models config (``GET /rest/models/config/v2``) names every model id with the mode it
serves; ids drift monthly, so ``pplx-ask`` reads them at run time and falls back to
:data:`PINNED_CONFIG` offline. Four ask modes are offered (never computer); each carries the
real mode in ``model_preference``. The envelope is built here so its field names live in one
place; uuids, language and time zone come in from the shell.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from pplx_archiver.core.thread import mode_table
from pplx_archiver.errors import ConfigError, PayloadError

ASK_PATH = "/rest/sse/perplexity_ask"
COUNCIL_MIN, COUNCIL_MAX = 2, 3
RECENCY = ("day", "week", "month", "year")
SOURCES = ("web", "scholar", "social", "edgar")

# A pinned copy of the live config's shape, used when it cannot be fetched or cached.
PINNED_CONFIG: dict[str, Any] = {
    "models": {
        "turbo": {"label": "Best", "mode": "search", "provider": "PERPLEXITY"},
        "pplx_pro": {"label": "Pro Search", "mode": "search", "provider": "PERPLEXITY"},
        "experimental": {"label": "Sonar 2", "mode": "search", "provider": "PERPLEXITY"},
        "gpt55_thinking": {"label": "GPT-5.5 Thinking", "mode": "search", "provider": "OPENAI"},
        "claude48opusthinking": {
            "label": "Claude Opus 4.8 Thinking",
            "mode": "search",
            "provider": "ANTHROPIC",
        },
        "gemini31pro_high": {"label": "Gemini 3.1 Pro", "mode": "search", "provider": "GOOGLE"},
        "pplx_alpha": {"label": "Research", "mode": "research", "provider": "PERPLEXITY"},
        "pplx_agentic_research": {
            "label": "Model Council",
            "mode": "agentic_research",
            "provider": "PERPLEXITY",
        },
        "pplx_study": {"label": "Study", "mode": "study", "provider": "PERPLEXITY"},
    },
    "default_models": {
        "search": "pplx_pro",
        "research": "pplx_alpha",
        "agentic_research": "pplx_agentic_research",
        "study": "pplx_study",
    },
    "agentic_research_compare_models": [
        "gpt55_thinking",
        "claude48opusthinking",
        "gemini31pro_high",
    ],
}


@dataclasses.dataclass(frozen=True, slots=True)
class ModelRow:
    """One model of the config."""

    id: str
    label: str
    mode: str
    provider: str


@dataclasses.dataclass(frozen=True, slots=True)
class ModelTable:
    """The models an account can ask with, and the default of each mode."""

    rows: tuple[ModelRow, ...]
    defaults: Mapping[str, str]
    council_defaults: tuple[str, ...]

    def ids(self, config_mode: str) -> list[str]:
        """Model ids serving one config mode, in config order."""
        return [r.id for r in self.rows if r.mode == config_mode]


def parse_models_config(decoded: Any, where: str = "models config") -> ModelTable:
    """The :class:`ModelTable` of a models-config document; PayloadError for another shape."""
    if not isinstance(decoded, dict) or not isinstance(decoded.get("models"), dict):
        raise PayloadError(f"{where}.models", "expected an object of model ids")
    rows = []
    for model_id, info in decoded["models"].items():
        if not isinstance(info, dict):
            raise PayloadError(f"{where}.models.{model_id}", "expected an object")
        rows.append(
            ModelRow(
                id=str(model_id),
                label=str(info.get("label") or model_id),
                mode=str(info.get("mode") or ""),
                provider=str(info.get("provider") or ""),
            )
        )
    defaults = decoded.get("default_models")
    defaults = {str(k): str(v) for k, v in defaults.items()} if isinstance(defaults, dict) else {}
    compare = decoded.get("agentic_research_compare_models")
    council = tuple(str(m) for m in compare) if isinstance(compare, list) else ()
    return ModelTable(rows=tuple(rows), defaults=defaults, council_defaults=council)


def table_lines(table: ModelTable, source: str) -> list[str]:
    """The printed model table: the ask modes first, each with its models (``*`` = default)."""
    lines = [f"models ({source})", f"{'mode':<14} {'model id':<28} label"]
    for ask_mode, config_mode in mode_table.VIEWS.ask_modes.items():
        ids = table.ids("search") if ask_mode == "council" else table.ids(config_mode)
        default = table.defaults.get(config_mode, "")
        if ask_mode == "council":
            lines.append(f"{ask_mode:<14} {default or '-':<28} (model preference)")
        for row in table.rows:
            if row.id in ids:
                council_default = ask_mode == "council" and row.id in table.council_defaults
                mark = (
                    "*" if council_default or (ask_mode != "council" and row.id == default) else ""
                )
                shown = ask_mode if ask_mode != "council" else "council --model"
                lines.append(f"{shown:<14} {row.id + mark:<28} {row.label}")
    return lines


@dataclasses.dataclass(frozen=True, slots=True)
class ModelChoice:
    """The resolved ``model_preference`` (and council members) of one ask."""

    mode: str
    model_preference: str
    compare_models: tuple[str, ...] = ()


def resolve_models(table: ModelTable, mode: str, models: Sequence[str]) -> ModelChoice:
    """Check ``--mode``/``--model`` against the table; ConfigError names the valid ids."""
    ask_modes = mode_table.VIEWS.ask_modes  # ask mode → mode name in the models config
    if mode not in ask_modes:
        raise ConfigError(f"--mode {mode!r} is not an ask mode; choose from {', '.join(ask_modes)}")
    config_mode = ask_modes[mode]
    if mode == "council":
        valid = table.ids("search")
        chosen = tuple(models) or table.council_defaults
        for model in chosen:
            if model not in valid:
                raise ConfigError(
                    f"--model {model!r} is not a council member model; valid: {', '.join(valid)}"
                )
        if not COUNCIL_MIN <= len(chosen) <= COUNCIL_MAX:
            raise ConfigError(
                f"council needs --model {COUNCIL_MIN} to {COUNCIL_MAX} times, got {len(chosen)}"
            )
        preference = table.defaults.get(config_mode) or "pplx_agentic_research"
        return ModelChoice(mode, preference, tuple(chosen))
    valid = table.ids(config_mode)
    if len(models) > 1:
        raise ConfigError(f"--model may be given once for --mode {mode} (council takes 2-3)")
    if models:
        if models[0] not in valid:
            raise ConfigError(
                f"--model {models[0]!r} is not a {mode} model; valid: {', '.join(valid) or 'none'}"
            )
        return ModelChoice(mode, models[0])
    default = table.defaults.get(config_mode) or (valid[0] if valid else "")
    if not default:
        raise ConfigError(f"the models config names no model for --mode {mode}")
    return ModelChoice(mode, default)


@dataclasses.dataclass(frozen=True, slots=True)
class FollowUp:
    """Where a follow-up continues: the thread's last entry and its write token."""

    last_backend_uuid: str
    read_write_token: str


def ask_body(
    query: str,
    choice: ModelChoice,
    *,
    frontend_uuid: str,
    frontend_context_uuid: str,
    language: str = "en-US",
    timezone: str = "UTC",
    sources: Sequence[str] = ("web",),
    recency: str | None = None,
    incognito: bool = False,
    follow_up: FollowUp | None = None,
    collection_uuid: str | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST /rest/sse/perplexity_ask``."""
    params: dict[str, Any] = {
        "version": "2.18",
        "source": "default",
        "language": language,
        "timezone": timezone,
        "attachments": [],
        "frontend_uuid": frontend_uuid,
        "frontend_context_uuid": frontend_context_uuid,
        "mode": "concise" if choice.model_preference == "turbo" else "copilot",
        "model_preference": choice.model_preference,
        "sources": list(sources),
        "search_focus": "internet",
        "search_recency_filter": recency.upper() if recency else None,
        "is_incognito": incognito,
        "use_schematized_api": True,
        "prompt_source": "user",
        "query_source": "home",
        "send_back_text_in_streaming_api": False,
        "local_search_enabled": False,
    }
    if choice.compare_models:
        params["compare_model_preferences"] = list(choice.compare_models)
    if collection_uuid:
        params.update(
            target_collection_uuid=collection_uuid,
            target_thread_access_level=1,
            query_source="collection",
        )
    if follow_up is not None:
        params.update(
            last_backend_uuid=follow_up.last_backend_uuid,
            read_write_token=follow_up.read_write_token,
            query_source="followup",
        )
    return {"query_str": query, "params": params}


def follow_up_of(thread_body: Any, where: str = "thread") -> FollowUp:
    """The :class:`FollowUp` of a ``GET /rest/thread/…`` body (its newest entry)."""
    entries = thread_body.get("entries") if isinstance(thread_body, dict) else None
    if not isinstance(entries, list) or not entries or not isinstance(entries[-1], dict):
        raise PayloadError(f"{where}.entries", "expected a non-empty list of entries")
    last = entries[-1]
    backend = last.get("backend_uuid")
    if not isinstance(backend, str) or not backend:
        raise PayloadError(f"{where}.entries[-1].backend_uuid", "missing")
    token = last.get("read_write_token")
    return FollowUp(backend, token if isinstance(token, str) else "")


def mode_of_entry(entry: Mapping[str, Any]) -> str | None:
    """The ask mode an archived entry was asked in, from its ``search_mode`` (None if unsure
    or not a mode ``pplx-ask`` offers)."""
    views = mode_table.VIEWS
    mode = views.by_search_mode.get(str(entry.get("search_mode") or "").upper())
    return mode if mode in views.ask_modes else None


def _entries(thread_body: Any) -> list[Mapping[str, Any]]:
    entries = thread_body.get("entries") if isinstance(thread_body, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def refuse_computer_follow_up(thread_body: Any, thread_id: str) -> None:
    """ConfigError (one line) when the thread is of a mode pplx-ask does not offer (a computer
    task): asking in another mode would append a foreign turn to it."""
    meta = thread_body.get("thread_metadata") if isinstance(thread_body, dict) else None
    meta_mode = str(meta.get("mode") or "") if isinstance(meta, dict) else ""
    entries = _entries(thread_body)
    for row in mode_table.VIEWS.rows:
        if row.ask_config:
            continue
        found = meta_mode in row.metadata_modes
        for entry in entries:
            mode = str(entry.get("search_mode") or "").upper()
            model = str(entry.get("display_model") or "")
            family = bool(row.model_family) and model.startswith(row.model_family)
            found = found or mode in row.search_modes or family
        if found:
            raise ConfigError(
                f"--follow-up {thread_id}: a {row.name} task cannot be continued with pplx-ask "
                f"({row.name} mode is not offered); continue it in the web app"
            )


def thread_members(thread_body: Any) -> tuple[str, ...]:
    """The council member models the thread was last asked with (newest council turn's
    ``COUNCIL_RESEARCH`` step, else its ``LLM_COUNCIL`` workflows); () when none is named."""
    for entry in reversed(_entries(thread_body)):
        found = _plain_members(entry.get("text")) or _block_members(entry.get("blocks"))
        if found:
            return found
    return ()


def _plain_members(text: Any) -> tuple[str, ...]:
    try:
        steps = orjson.loads(text) if isinstance(text, str) else text
    except orjson.JSONDecodeError:
        return ()
    for step in steps if isinstance(steps, list) else ():
        if isinstance(step, dict) and step.get("step_type") == "COUNCIL_RESEARCH":
            content = step.get("content")
            models = content.get("models") if isinstance(content, dict) else None
            if isinstance(models, list):
                return tuple(str(m) for m in models if isinstance(m, str) and m)
    return ()


def _block_members(blocks: Any) -> tuple[str, ...]:
    found: list[str] = []
    for block in blocks if isinstance(blocks, list) else ():
        workflow = block.get("workflow_block") if isinstance(block, dict) else None
        for step in _list(workflow, "steps"):
            for item in _list(step, "items"):
                payload = item.get("payload") if isinstance(item, dict) else None
                nested = payload.get("workflow_payload") if isinstance(payload, dict) else None
                if isinstance(nested, dict) and nested.get("mode") == "LLM_COUNCIL":
                    model = nested.get("model")
                    if isinstance(model, str) and model and model not in found:
                        found.append(model)
    return tuple(found)


def _list(value: Any, key: str) -> list[Any]:
    got = value.get(key) if isinstance(value, dict) else None
    return got if isinstance(got, list) else []


def follow_up_members(table: ModelTable, thread_body: Any) -> tuple[str, ...]:
    """The members a council follow-up asks with: the thread's own that the models config
    still offers (at least two), else () for the config's default members."""
    valid = set(table.ids("search"))
    members = tuple(m for m in thread_members(thread_body) if m in valid)[:COUNCIL_MAX]
    return members if len(members) >= COUNCIL_MIN else ()
