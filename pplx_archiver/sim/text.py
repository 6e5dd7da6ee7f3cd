"""Generated prose for the simulator: titles, questions, answers and asset file contents.

The simulated account should read like a real one, so a newcomer running ``make demo`` sees
what their own archive will look like: each thread has a topic (``sim/topics.py``), its title
and questions are about that topic, and its answers are built from a few hundred templates
(``sim/prose_en.py``, ``sim/prose_zh.py``, ``sim/prose_extras.py``) in English or, for about
one thread in eight, Chinese: an opening paragraph, often a section with bullet points,
numbered steps or a second paragraph, then the tables, code, math and the hostile Markdown
a renderer must survive (nested fences, ``</details>``, raw HTML, mixed LaTeX, a >50 KB body)
wherever a turn's features ask for it, and a closing line; sentences carry ``[n]`` citation
markers pointing into the turn's web results.

Every string comes from a ``random.Random`` seeded by the caller's identifiers, so the same
thread always reads the same. The planner (``sim/account.py``) keeps drawing the same random
numbers it always drew; these functions only turn identifiers into words, so the truth
manifest does not depend on them.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Sequence

from pplx_archiver.sim import prose_en as en
from pplx_archiver.sim import prose_extras as extras
from pplx_archiver.sim import prose_zh as zh
from pplx_archiver.sim.topics import TOPICS, Topic

__all__ = [
    "TOPICS",
    "Topic",
    "answer_text",
    "asset_bytes",
    "headline_text",
    "query_text",
    "sha256",
    "speaks_chinese",
    "subtask_text",
    "template_pools",
    "title_text",
    "topic_of",
]

KIND_SHARE = 0.35  # share of questions and sentences taken from the topic kind's own pool


def template_pools() -> dict[str, tuple[str, ...]]:
    """Every text template by pool name (for the tests and the simulator docs)."""
    pools: dict[str, tuple[str, ...]] = {}
    for lang, module in (("en", en), ("zh", zh)):
        for name in (
            "TITLES",
            "QUESTIONS",
            "FOLLOWUPS",
            "OPENERS",
            "SENTENCES",
            "HEADINGS",
            "BULLETS",
            "STEPS",
            "CLOSERS",
            "TABLE_INTROS",
            "CODE_INTROS",
            "MATH_INTROS",
        ):
            pools[f"{lang}.{name}"] = getattr(module, name)
    for kind, questions in en.KIND_QUESTIONS.items():
        pools[f"en.KIND_QUESTIONS.{kind}"] = questions
    for kind, sentences in en.KIND_SENTENCES.items():
        pools[f"en.KIND_SENTENCES.{kind}"] = sentences
    for lang, samples in extras.CODE.items():
        pools[f"code.{lang}"] = samples
    pools["math.display"] = extras.DISPLAY_MATH
    for kind, formulas in extras.KIND_DISPLAY_MATH.items():
        pools[f"math.display.{kind}"] = formulas
    pools["math.inline.en"] = extras.INLINE_MATH
    pools["math.inline.zh"] = extras.INLINE_MATH_ZH
    return pools


@functools.lru_cache(maxsize=4096)
def topic_of(seed: int | str, index: int | str) -> Topic:
    """The topic of thread ``index`` of the account with ``seed``."""
    rng = random.Random(f"{seed}:topic:{index}")
    return TOPICS[rng.randrange(len(TOPICS))]


@functools.lru_cache(maxsize=4096)
def speaks_chinese(seed: int | str, index: int | str) -> bool:
    """True for the threads (about one in eight) held in Chinese."""
    return random.Random(f"{seed}:lang:{index}").random() < 0.125


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(template: str, topic: Topic, rng: random.Random, chinese: bool = False) -> str:
    terms = topic.zh_terms if chinese else topic.terms
    count = len(terms)
    first = int(rng.random() * count)
    t = terms[first]
    u = terms[(first + 1 + int(rng.random() * (count - 1))) % count]
    subject = topic.zh if chinese else topic.subject
    values = {"s": subject, "S": _cap(subject), "t": t, "T": _cap(t), "u": u, "U": _cap(u)}
    if "{y" in template:  # draw only the numbers the template shows
        year = 2012 + int(rng.random() * 13)
        values["y"] = str(year)
        values["y2"] = str(year + 3 + int(rng.random() * 6))
    if "{p}" in template:
        values["p"] = str(5 + int(rng.random() * 56))
    if "{n}" in template:
        values["n"] = str(2 + int(rng.random() * 8))
    return template.format_map(values)


def _pool(rng: random.Random, general: Sequence[str], own: Sequence[str]) -> Sequence[str]:
    """The kind's own pool for about a third of the draws, else the general one."""
    return own if own and rng.random() < KIND_SHARE else general


def title_text(seed: int, index: int, key: str) -> str:
    """A plausible thread title; ``key`` varies it among the thread's own templates."""
    topic = topic_of(seed, index)
    rng = random.Random(f"{seed}:title:{index}:{key}")
    chinese = speaks_chinese(seed, index)
    return _fill(rng.choice(zh.TITLES if chinese else en.TITLES), topic, rng, chinese)


def query_text(seed: int, index: int, turn_no: int, key: str) -> str:
    """The question of turn ``turn_no`` (0-based): an opening question, then follow-ups."""
    topic = topic_of(seed, index)
    rng = random.Random(f"{seed}:query:{index}:{turn_no}:{key}")
    fresh = turn_no == 0 or rng.random() < 0.25  # a later turn may open a new line of questions
    if speaks_chinese(seed, index):
        return _fill(rng.choice(zh.QUESTIONS if fresh else zh.FOLLOWUPS), topic, rng, True)
    if not fresh:
        return _fill(rng.choice(en.FOLLOWUPS), topic, rng)
    pool = _pool(rng, en.QUESTIONS, en.KIND_QUESTIONS.get(topic.kind, ()))
    return _fill(rng.choice(pool), topic, rng)


def subtask_text(seed: int, index: int, key: str, part: int) -> str:
    """The objective of one part of a sub-agent's task."""
    topic = topic_of(seed, index)
    term = topic.terms[(len(key) + part) % len(topic.terms)]
    return f"{en.SUBTASKS[part % len(en.SUBTASKS)]} {term}"


def headline_text(seed: int, index: int, key: str) -> str:
    """The headline of a sub-agent's workflow."""
    topic = topic_of(seed, index)
    return f"Research {topic.terms[len(key) % len(topic.terms)]}"


def _cite(text: str, rng: random.Random, cites: int) -> str:
    if cites and rng.getrandbits(2):
        return f"{text}[{rng.randrange(cites) + 1}]"
    return text


def _paragraph(topic: Topic, rng: random.Random, cites: int, chinese: bool, count: int) -> str:
    """``count`` different sentences, each perhaps with a citation marker."""
    if chinese:
        chosen = rng.sample(zh.SENTENCES, count)
    else:
        own = en.KIND_SENTENCES.get(topic.kind, ())
        chosen = []
        while len(chosen) < count:
            sentence = rng.choice(_pool(rng, en.SENTENCES, own))
            if sentence not in chosen:
                chosen.append(sentence)
    sentences = [_cite(_fill(s, topic, rng, chinese), rng, cites) for s in chosen]
    return ("" if chinese else " ").join(sentences)


def _section(topic: Topic, rng: random.Random, cites: int, chinese: bool) -> str | None:
    """A headed section after the opening paragraph: bullets, steps or prose (or none)."""
    prose = zh if chinese else en
    shape = rng.random()
    if shape >= 0.8:
        return None
    heading = "### " + _fill(rng.choice(prose.HEADINGS), topic, rng, chinese)
    if shape < 0.35:
        items = rng.sample(prose.BULLETS, rng.randint(3, 4))
        body = "\n".join("- " + _fill(b, topic, rng, chinese) for b in items)
    elif shape < 0.55:
        picked = sorted(rng.sample(range(len(prose.STEPS)), rng.randint(3, 5)))  # in order
        steps = [_fill(prose.STEPS[k], topic, rng, chinese) for k in picked]
        body = "\n".join(f"{n}. {step}" for n, step in enumerate(steps, 1))
    else:
        body = _paragraph(topic, rng, cites, chinese, rng.randint(2, 3))
    return heading + "\n\n" + body


def _table(topic: Topic, rng: random.Random, chinese: bool) -> str:
    prose = zh if chinese else en
    terms = topic.zh_terms if chinese else topic.terms
    head = rng.choice(prose.TABLE_HEADS)
    rows = []
    for term in rng.sample(terms, rng.randint(2, len(terms))):
        if head[3] == "cost":
            cells = (f"${rng.randint(1, 99) * 10}", rng.choice(prose.BEST_FOR))
        elif head[3] == "effect":
            cells = (f"{rng.randint(1, 60)}%", rng.choice(prose.STRENGTH))
        else:
            other = rng.choice(terms)
            cells = (
                rng.choice(prose.STRENGTH),
                f"取决于{other}" if chinese else f"depends on {other}",
            )
        rows.append(f"| {_cap(term)} | {cells[0]} | {cells[1]} |")
    intro = rng.choice(prose.TABLE_INTROS)
    return f"{intro}\n\n| {head[0]} | {head[1]} | {head[2]} |\n|---|---|---|\n" + "\n".join(rows)


def _features(
    parts: list[str], features: tuple[str, ...], topic: Topic, rng: random.Random, chinese: bool
) -> None:
    """Append the parts a turn's features ask for (tables, code, math, hostile Markdown)."""
    prose = zh if chinese else en
    if "table" in features:
        parts.append(_table(topic, rng, chinese))
    if "fence" in features:
        lang = topic.lang if topic.lang in extras.CODE else "python"
        code = rng.choice(extras.CODE[lang])
        parts.append(rng.choice(prose.CODE_INTROS) + "\n\n```" + lang + "\n" + code + "```")
    if "nested_fence" in features:
        parts.append(
            "一段本身包含代码的 Markdown："
            if chinese
            else "A Markdown snippet that itself shows code:"
        )
        parts.append("````markdown\nExample:\n```js\nconsole.log(1)\n```\n````")
        parts.append("``````text\n`````\nfive backticks inside six\n`````\n``````")
    if "details" in features:
        parts.append(prose.HTML_LEAD + "</details> then <details><summary>x</summary>")
    if "html" in features:
        parts.append('<div class="note">Some <b>HTML</b> &amp; <br/> tags</div>')
    if "latex_display" in features:
        parts.append(rng.choice(prose.MATH_INTROS))
        own = extras.KIND_DISPLAY_MATH.get(topic.kind, ())
        parts.append(rng.choice(own if own and rng.random() < 0.7 else extras.DISPLAY_MATH))
    if "latex_inline" in features:
        parts.append(rng.choice(extras.INLINE_MATH_ZH if chinese else extras.INLINE_MATH))
    if "latex_mixed" in features:
        parts.append("Mixed: $$x_1$$ and \\(y\\) and `\\(not math\\)` and $5 and \\[z\\]")
    if "cjk" in features:
        parts.append(_paragraph(topic, rng, 0, True, 2) + zh.MIXED)


def answer_text(seed: str, features: tuple[str, ...], cites: int) -> str:
    """The Markdown answer of one turn; ``seed`` is ``"<account seed>:<thread index>:<turn>…"``."""
    rng = random.Random(f"answer:{seed}")
    account, index = [*seed.split(":"), "0", "0"][:2]
    topic = topic_of(account, index)
    chinese = speaks_chinese(account, index)
    prose = zh if chinese else en
    opener = _cite(_fill(rng.choice(prose.OPENERS), topic, rng, chinese), rng, cites)
    body = _paragraph(topic, rng, cites, chinese, rng.randint(1, 3))
    parts = [opener + ("" if chinese else " ") + body]
    section = _section(topic, rng, cites, chinese)
    if section is not None:
        parts.append(section)
    _features(parts, features, topic, rng, chinese)
    if "big" in features:
        while sum(len(p) for p in parts) < 52_000:
            parts.append(_paragraph(topic, rng, cites, chinese, 8))
    parts.append(_fill(rng.choice(prose.CLOSERS), topic, rng, chinese))
    return "\n\n".join(parts)


def asset_bytes(asset_uuid: str, content: str) -> bytes:
    """The bytes the CDN serves for one asset version."""
    if content == "empty":
        return b""
    rng = random.Random(f"asset:{asset_uuid}")
    if content == "binary":
        return b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(512))
    topic = TOPICS[rng.randrange(len(TOPICS))]
    lines = [f"# Document {asset_uuid[:8]}", "", f"## {_cap(topic.subject)}", ""]
    lines += [_fill(rng.choice(en.SENTENCES), topic, rng) for _ in range(rng.randint(5, 40))]
    return ("\n".join(lines) + "\n").encode()


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()
