"""The simulated account reads like a real one: plausible questions and answers, no word salad."""

from __future__ import annotations

import re

from pplx_archiver.sim import account
from pplx_archiver.sim.build import answer_of
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.state import AccountState
from pplx_archiver.sim.text import (
    answer_text,
    query_text,
    speaks_chinese,
    template_pools,
    title_text,
)

SAMPLED_THREADS = 300
ALL_FEATURES = (
    "table",
    "fence",
    "nested_fence",
    "details",
    "html",
    "latex_display",
    "latex_inline",
    "latex_mixed",
    "cjk",
)
FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
NOT_PROSE = re.compile(
    r"`[^`\n]*`|<[^<>\n]*>|\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$|&amp;|^Mixed: .*$",
    re.MULTILINE | re.DOTALL,
)
REPEATED_WORD = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
SENTENCE_END = re.compile(r"[.!?](?:\[\d+\])?(?=\s|$)|[。！？]")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")
PLACEHOLDER = re.compile(r"\{[A-Za-z0-9]+\}")


def prose_of(answer: str) -> str:
    """The answer without code blocks, inline code, tags, math and the hostile sample line."""
    return NOT_PROSE.sub(" ", FENCE.sub(" ", answer))


def cjk_share(text: str) -> float:
    cjk, latin = len(CJK.findall(text)), len(LATIN.findall(text))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def sampled_turns() -> list[tuple[bool, str, str]]:
    """(held in Chinese, question, answer) of every turn of the default account's threads.

    Sub-agent result stubs ask nothing: their question is empty.
    """
    config = SimConfig()
    state = AccountState(config)
    out: list[tuple[bool, str, str]] = []
    for index in range(SAMPLED_THREADS):
        plan = state.plan(index)
        chinese = speaks_chinese(config.seed, index)
        out.extend(
            (chinese, "" if turn.stub else turn.query, answer_of(plan, turn)) for turn in plan.turns
        )
    return out


def test_a_few_hundred_templates_exist() -> None:
    """At least 300 distinct templates, in non-empty pools, questions ending with a ?."""
    pools = template_pools()
    assert all(pools.values()), [name for name, pool in pools.items() if not pool]
    distinct = {template for pool in pools.values() for template in pool}
    assert len(distinct) >= 300, len(distinct)
    for name, pool in pools.items():
        if "QUESTIONS" in name or "FOLLOWUPS" in name:
            bad = [q for q in pool if not q.endswith(("?", "？"))]
            assert not bad, (name, bad)
        if name.startswith("zh."):
            assert all(CJK.search(t) for t in pool), name


def test_sampled_threads_read_like_questions_and_answers() -> None:
    """Questions end with ?, answers have ≥ 2 sentences, no doubled words, Chinese is Chinese."""
    turns = sampled_turns()
    assert len(turns) > 1000
    problems: list[tuple[str, str]] = []
    for chinese, query, answer in turns:
        if query and query not in account.CJK_TITLES:  # not stubs, nor the foreign queries
            if not query.endswith(("?", "？")):
                problems.append(("question without a question mark", query))
            if REPEATED_WORD.search(query):
                problems.append(("doubled word in question", query))
        prose = prose_of(answer)
        if len(SENTENCE_END.findall(prose)) < 2:
            problems.append(("fewer than two sentences", answer[:200]))
        if match := REPEATED_WORD.search(prose):
            problems.append(("doubled word in answer", match.group()))
        opening = answer.split("\n\n", 1)[0]
        if chinese and (min(cjk_share(prose), cjk_share(opening)) < 0.6):
            problems.append(("Chinese thread answered in another language", answer[:200]))
        if not chinese and cjk_share(opening) > 0:
            problems.append(("English thread opening in CJK", opening))
    assert problems == []
    assert any(chinese for chinese, _, _ in turns)


def test_answers_carry_structure_and_citations() -> None:
    """Across the sample: citations, sections, lists, steps, tables, code and math all occur."""
    answers = [answer for _, _, answer in sampled_turns()]
    joined = "\n".join(answers)
    assert re.search(r"\.\[\d+\]", joined)  # a citation marker after a sentence
    assert "\n### " in joined
    assert "\n- **" in joined
    assert "\n1. " in joined
    assert "\n|---|---|---|\n" in joined
    assert "```python\n" in joined
    assert "\\[" in joined and "\\(" in joined


def _template_regex(template: str) -> re.Pattern[str] | None:
    """A pattern finding a filled-in ``template`` (None when it has no literal text)."""
    parts = PLACEHOLDER.split(template)
    while parts and not parts[0]:
        parts.pop(0)
    while parts and not parts[-1]:
        parts.pop()
    if not parts:
        return None
    return re.compile(r"[^\n]+?".join(re.escape(p) for p in parts))


def _sweep() -> str:
    """Titles, questions and answers of many simulated threads, with every feature."""
    texts: list[str] = []
    for seed in (1, 2, 3):
        for index in range(300):
            texts.extend(title_text(seed, index, key) for key in ("a", "b", "c"))
            texts.extend(query_text(seed, index, turn, "k") for turn in range(6))
            texts.extend(
                answer_text(f"{seed}:{index}:{turn}", ALL_FEATURES, 5) for turn in range(3)
            )
    return "\n".join(texts)


def test_every_template_is_used() -> None:
    """Each template shows up in the text of a few hundred simulated threads."""
    corpus = _sweep()
    unused = []
    for name, pool in template_pools().items():
        for template in pool:
            pattern = _template_regex(template)
            if pattern is not None and pattern.search(corpus) is None:
                unused.append((name, template))
    assert unused == []


def test_text_is_deterministic() -> None:
    """The same seed and identifiers give the same words, whatever was generated before."""
    first = [answer_text(f"7:{i}:0", ALL_FEATURES, 3) for i in range(20)]
    title_text(9, 3, "x")
    again = [answer_text(f"7:{i}:0", ALL_FEATURES, 3) for i in range(20)]
    assert first == again
    assert len(set(first)) == 20
    assert query_text(7, 4, 2, "w") == query_text(7, 4, 2, "w")
