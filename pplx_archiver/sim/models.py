"""The models-config document (``GET /rest/models/config/v2``) of the simulator."""

from __future__ import annotations

from typing import Any

_MODELS = {
    "turbo": ("Best", "search", "PERPLEXITY"),
    "pplx_pro": ("Pro Search", "search", "PERPLEXITY"),
    "experimental": ("Sonar 2", "search", "PERPLEXITY"),
    "pplx_alpha": ("Research", "research", "PERPLEXITY"),
    "pplx_beta": ("Labs", "studio", "PERPLEXITY"),
    "pplx_study": ("Study", "study", "PERPLEXITY"),
    "pplx_agentic_research": ("Model Council", "agentic_research", "PERPLEXITY"),
    "pplx_asi": ("Computer", "asi", "PERPLEXITY"),
    "pplx_asi_opus": ("Computer (Opus)", "asi", "ANTHROPIC"),
    "pplx_asi_opus_thinking": ("Computer (Opus Thinking)", "asi", "ANTHROPIC"),
    "gpt55_thinking": ("GPT-5.5 Thinking", "search", "OPENAI"),
    "claude48opusthinking": ("Claude Opus 4.8 Thinking", "search", "ANTHROPIC"),
    "claude46sonnetthinking": ("Claude Sonnet 4.6 Thinking", "search", "ANTHROPIC"),
    "gemini31pro_high": ("Gemini 3.1 Pro", "search", "GOOGLE"),
    "pplx_document_review": ("Document review", "document_review", "PERPLEXITY"),
    "comet_browser_agent_sonnet": ("Browser agent", "browser_agent", "ANTHROPIC"),
}


def models_config() -> dict[str, Any]:
    """The config document: models, picker slots, default model per mode."""
    models = {
        slug: {"label": label, "description": f"{label} model", "mode": mode, "provider": prov}
        for slug, (label, mode, prov) in _MODELS.items()
    }
    slot = {
        "label": "Claude Opus 4.8",
        "description": "Anthropic's flagship",
        "subheading": None,
        "has_new_tag": False,
        "subscription_tier": "pro",
        "non_reasoning_model": "claude48opusthinking",
        "reasoning_model": None,
        "text_only_model": False,
        "audience": None,
        "is_default": False,
    }
    return {
        "models": models,
        "config": [slot],
        "search_config": [slot],
        "computer_config": [],
        "default_models": {
            "search": "pplx_pro",
            "research": "pplx_alpha",
            "agentic_research": "pplx_agentic_research",
            "studio": "pplx_beta",
            "study": "pplx_study",
            "document_review": "pplx_document_review",
            "browser_agent": "comet_browser_agent_sonnet",
            "asi": "pplx_asi",
        },
        "agentic_research_compare_models": [
            "gpt55_thinking",
            "claude48opusthinking",
            "gemini31pro_high",
        ],
    }
