"""Generated prose for the simulator: titles, questions, answers and asset file contents.

The simulated account should read like a real one, so a newcomer running ``make demo`` sees
what their own archive will look like: each thread has a topic, its title and questions are
about that topic, and its answers are paragraphs built from a few hundred sentence
templates, in English or (for about one thread in eight) Chinese, with citation markers,
lists, tables, code, math and the hostile Markdown a renderer must survive (nested fences,
``</details>``, raw HTML, mixed LaTeX, a >50 KB body) wherever a turn's features ask for it.

Every string comes from a ``random.Random`` seeded by the caller's identifiers, so the same
thread always reads the same. The planner (``sim/account.py``) keeps drawing the same random
numbers it always drew; these functions only turn identifiers into words, so the truth
manifest does not depend on them.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random


@dataclasses.dataclass(frozen=True, slots=True)
class Topic:
    """What one thread is about, in both languages."""

    subject: str  # "solid-state batteries"
    terms: tuple[str, ...]  # things an answer mentions
    zh: str  # "固态电池"
    zh_terms: tuple[str, ...]
    lang: str = "python"  # language of code samples


_T = Topic
TOPICS: tuple[Topic, ...] = (
    _T(
        "solid-state batteries",
        (
            "energy density",
            "lithium metal anodes",
            "sulfide electrolytes",
            "dendrite growth",
            "manufacturing cost",
        ),
        "固态电池",
        ("能量密度", "锂金属负极", "硫化物电解质"),
    ),
    _T(
        "the Rust borrow checker",
        ("lifetimes", "mutable references", "ownership", "the Drop trait", "interior mutability"),
        "Rust 借用检查器",
        ("生命周期", "可变引用", "所有权"),
        "rust",
    ),
    _T(
        "sourdough baking",
        ("starter hydration", "bulk fermentation", "autolyse", "oven spring", "crumb structure"),
        "酸面包烘焙",
        ("酵种含水量", "整体发酵", "烤箱膨胀"),
    ),
    _T(
        "the James Webb Space Telescope",
        (
            "infrared imaging",
            "the NIRSpec instrument",
            "high-redshift galaxies",
            "exoplanet atmospheres",
            "the L2 orbit",
        ),
        "詹姆斯·韦伯太空望远镜",
        ("红外成像", "高红移星系", "系外行星大气"),
    ),
    _T(
        "PostgreSQL query planning",
        (
            "index scans",
            "the EXPLAIN ANALYZE output",
            "join order",
            "table statistics",
            "partial indexes",
        ),
        "PostgreSQL 查询规划",
        ("索引扫描", "连接顺序", "统计信息"),
        "sql",
    ),
    _T(
        "CRISPR gene editing",
        ("Cas9", "guide RNA design", "off-target effects", "base editing", "clinical trials"),
        "CRISPR 基因编辑",
        ("Cas9 蛋白", "向导 RNA", "脱靶效应"),
    ),
    _T(
        "index funds versus active management",
        ("expense ratios", "tracking error", "survivorship bias", "tax efficiency", "rebalancing"),
        "指数基金与主动管理",
        ("费用率", "跟踪误差", "幸存者偏差"),
    ),
    _T(
        "the causes of the 1929 stock market crash",
        (
            "margin buying",
            "the Federal Reserve",
            "bank failures",
            "the gold standard",
            "consumer debt",
        ),
        "1929 年股市崩盘的原因",
        ("保证金交易", "美联储", "银行倒闭"),
    ),
    _T(
        "heat pumps in cold climates",
        (
            "the coefficient of performance",
            "refrigerant choice",
            "defrost cycles",
            "backup heating",
            "installation cost",
        ),
        "寒冷地区的热泵",
        ("性能系数", "制冷剂", "除霜循环"),
    ),
    _T(
        "transformer language models",
        ("self-attention", "tokenization", "context length", "fine-tuning", "inference cost"),
        "Transformer 语言模型",
        ("自注意力", "分词", "上下文长度"),
    ),
    _T(
        "marathon training plans",
        ("long runs", "tempo workouts", "tapering", "carbohydrate loading", "recovery weeks"),
        "马拉松训练计划",
        ("长距离跑", "节奏跑", "赛前减量"),
    ),
    _T(
        "Kubernetes autoscaling",
        (
            "the Horizontal Pod Autoscaler",
            "resource requests",
            "cluster autoscaler",
            "custom metrics",
            "cold starts",
        ),
        "Kubernetes 自动扩缩容",
        ("水平扩缩容", "资源请求", "自定义指标"),
        "bash",
    ),
    _T(
        "the history of the printing press",
        ("Gutenberg", "movable type", "the Reformation", "literacy rates", "paper supply"),
        "印刷术的历史",
        ("古腾堡", "活字印刷", "识字率"),
    ),
    _T(
        "urban heat islands",
        ("tree canopy", "albedo", "green roofs", "night-time temperatures", "zoning rules"),
        "城市热岛效应",
        ("树冠覆盖", "反照率", "绿色屋顶"),
    ),
    _T(
        "TypeScript generics",
        ("type parameters", "conditional types", "the infer keyword", "variance", "utility types"),
        "TypeScript 泛型",
        ("类型参数", "条件类型", "工具类型"),
        "typescript",
    ),
    _T(
        "the Mediterranean diet",
        ("olive oil", "legumes", "cardiovascular outcomes", "the PREDIMED trial", "processed meat"),
        "地中海饮食",
        ("橄榄油", "豆类", "心血管结局"),
    ),
    _T(
        "quantum error correction",
        (
            "surface codes",
            "logical qubits",
            "decoherence",
            "the threshold theorem",
            "magic state distillation",
        ),
        "量子纠错",
        ("表面码", "逻辑量子比特", "退相干"),
    ),
    _T(
        "carbon pricing",
        ("emissions trading", "carbon taxes", "border adjustments", "revenue recycling", "leakage"),
        "碳定价",
        ("排放交易", "碳税", "碳边境调节"),
    ),
    _T(
        "Git branching strategies",
        (
            "trunk-based development",
            "feature flags",
            "rebasing",
            "release branches",
            "merge conflicts",
        ),
        "Git 分支策略",
        ("主干开发", "功能开关", "变基"),
        "bash",
    ),
    _T(
        "sleep and memory consolidation",
        ("slow-wave sleep", "REM sleep", "the hippocampus", "sleep spindles", "caffeine"),
        "睡眠与记忆巩固",
        ("慢波睡眠", "快速眼动睡眠", "海马体"),
    ),
    _T(
        "the economics of container shipping",
        ("freight rates", "port congestion", "vessel sizes", "the Suez Canal", "fuel costs"),
        "集装箱航运经济学",
        ("运价", "港口拥堵", "苏伊士运河"),
    ),
    _T(
        "WebAssembly outside the browser",
        ("WASI", "sandboxing", "startup time", "the component model", "language support"),
        "浏览器之外的 WebAssembly",
        ("WASI", "沙箱", "组件模型"),
        "rust",
    ),
    _T(
        "honeybee colony collapse",
        (
            "varroa mites",
            "neonicotinoids",
            "forage diversity",
            "overwintering losses",
            "queen health",
        ),
        "蜜蜂群体崩溃",
        ("瓦螨", "新烟碱类农药", "越冬损失"),
    ),
    _T(
        "the Roman road network",
        (
            "the Via Appia",
            "milestones",
            "military logistics",
            "construction layers",
            "trade routes",
        ),
        "罗马道路网络",
        ("阿庇亚大道", "里程碑", "军事后勤"),
    ),
    _T(
        "pandas performance tuning",
        (
            "vectorized operations",
            "categorical dtypes",
            "the groupby method",
            "memory usage",
            "Arrow-backed columns",
        ),
        "pandas 性能调优",
        ("向量化操作", "分类类型", "内存占用"),
    ),
    _T(
        "green hydrogen",
        ("electrolyzers", "capacity factors", "storage", "ammonia", "the levelized cost"),
        "绿色氢能",
        ("电解槽", "容量系数", "储运"),
    ),
    _T(
        "the psychology of habit formation",
        (
            "cue-routine-reward loops",
            "implementation intentions",
            "streaks",
            "environment design",
            "relapse",
        ),
        "习惯养成心理学",
        ("提示-行为-奖励", "执行意图", "环境设计"),
    ),
    _T(
        "React server components",
        ("hydration", "streaming", "data fetching", "bundle size", "caching"),
        "React 服务端组件",
        ("水合", "流式渲染", "数据获取"),
        "typescript",
    ),
    _T(
        "coral reef bleaching",
        (
            "marine heatwaves",
            "symbiotic algae",
            "ocean acidification",
            "reef restoration",
            "monitoring programs",
        ),
        "珊瑚白化",
        ("海洋热浪", "共生藻", "海洋酸化"),
    ),
    _T(
        "monetary policy and inflation",
        (
            "interest rates",
            "quantitative tightening",
            "inflation expectations",
            "the labor market",
            "supply shocks",
        ),
        "货币政策与通胀",
        ("利率", "量化紧缩", "通胀预期"),
    ),
)

_EN_TITLES = (
    "How does {s} work?",
    "{S} explained",
    "What changed in {s} this year",
    "{S}: pros and cons",
    "Best practices for {s}",
    "Is {s} worth it?",
    "A beginner's guide to {s}",
    "{S} and {t}",
    "Why {s} depends on {t}",
    "The state of {s} in 2026",
    "Common mistakes with {s}",
    "{S} — a short history",
    "Comparing approaches to {s}",
)
_ZH_TITLES = (
    "{s}是如何运作的？",
    "{s}详解",
    "{s}的优缺点",
    "{s}入门指南",
    "{s}与{t}",
    "2026 年的{s}",
)

_EN_QUESTIONS = (
    "How does {s} actually work?",
    "What are the main arguments for and against {s}?",
    "Can you summarize recent research on {t}?",
    "How would I get started with {s}?",
    "Compare {t} and {u} — which matters more?",
    "What is the role of {t} in {s}?",
    "Explain {t} like I'm a first-year student.",
    "What are the biggest open problems in {s}?",
    "Which sources are most reliable on {s}?",
    "Give me a step-by-step plan involving {t}.",
    "What does the evidence say about {t}?",
    "How has {s} changed over the last decade?",
)
_EN_FOLLOWUPS = (
    "Can you go deeper on {t}?",
    "What are the sources for that?",
    "Give me a concrete example.",
    "How does this apply to {u}?",
    "Summarize that in a table.",
    "What would an expert disagree with?",
    "Can you show the code for that?",
    "What are the numbers behind {t}?",
    "Is there a simpler way to think about it?",
    "What should I read next?",
)
_ZH_QUESTIONS = (
    "{s}的原理是什么？",
    "请总结一下关于{t}的最新研究。",
    "{t}和{u}有什么区别？",
    "我该如何开始了解{s}？",
    "{t}在{s}中起什么作用？",
    "能举一个具体的例子吗？",
    "关于{t}，证据怎么说？",
)

_EN_OPENERS = (
    "In short, {s} comes down to a handful of ideas, and the one most people underestimate is {t}.",
    "The most useful way to think about {s} is as a set of trade-offs rather than a single answer.",
    "Short answer: it depends on {t}, but the evidence points in a fairly clear direction.",
    "Work on {s} has changed a lot in the last few years, mostly because of progress on {t}.",
    "There is broad agreement on the basics of {s}; the debate is about {t} and {u}.",
    "Here is an overview of {s}, starting with the parts that matter most in practice.",
)
_EN_SENTENCES = (
    "The key mechanism is {t}, which determines how far the rest of the system can go.",
    "Most studies since {y} attribute roughly {p}% of the observed effect to {t}.",
    "In practice, {t} and {u} interact, so improving one without the other rarely helps.",
    "A common misconception puts the bottleneck at {t}; measurements usually point to {u}.",
    "Reviews published around {y} found consistent results across {n} independent datasets.",
    "Costs have fallen by about {p}% over the past decade, largely thanks to better {t}.",
    "Experts still disagree on how much weight to give {u}.",
    "For most people the practical advice is simple: start with {t}, then look at {u}.",
    "The trade-off is between speed and reliability, and {t} decides where a project lands.",
    "Historically, {s} developed in fits and starts, with {t} as the turning point.",
    "A good rule of thumb is to revisit {t} whenever anything about {u} changes.",
    "The strongest evidence comes from long-running studies rather than single experiments.",
    "Regulators have started to pay attention to {t}, which may change the picture by {y2}.",
    "If you only remember one thing, remember that most of the outcome comes from {t}.",
    "Smaller projects can usually ignore {u}; larger ones cannot.",
    "The numbers vary by region, but the direction of the trend is the same almost everywhere.",
    "One caveat: much of the published work on {t} uses small samples.",
    "The theory behind {t} is well understood; getting it right in practice is harder.",
    "Early adopters reported gains of {n}× in the best cases and none at all in the worst.",
    "Critics argue that the benefits of {t} are overstated once you account for {u}.",
    "There are at least {n} competing approaches, and none dominates in every setting.",
    "The picture becomes clearer once you separate short-term effects from long-term ones.",
    "Recent work combines {t} with {u}, which looks promising but is not yet widely tested.",
    "Getting {t} wrong is the most common reason projects in this area fail.",
    "Surveys from {y} suggest that about {p}% of practitioners rely on {t} today.",
    "It helps to treat {u} as a constraint rather than a goal.",
    "The underlying physics is the same; what differs is the handling of {t}.",
    "Standard textbooks cover {t} well, while recent papers focus on {u}.",
)
_EN_BULLETS = (
    "**{T}**: the factor with the largest measured effect.",
    "**{U}**: important, but its impact depends on the context.",
    "**Cost**: expect it to dominate the early decisions.",
    "**Risk**: the main failure mode is neglecting {t}.",
    "**Evidence**: strongest for {t}, weaker for {u}.",
    "**Next step**: measure {t} before optimizing anything else.",
)
_EN_CLOSERS = (
    "If you tell me more about your situation, I can narrow this down further.",
    "The sources above go into more detail on each point.",
    "Overall, most of the gains come from {t}.",
    "I can also compare specific options side by side if that helps.",
)
_ZH_SENTENCES = (
    "简单来说，{s}的关键在于{t}。",
    "自 {y} 年以来的大多数研究表明，{t}大约解释了 {p}% 的效果。",
    "在实践中，{t}和{u}相互影响，只改进其中一个往往效果有限。",
    "一个常见的误解是认为{t}是瓶颈，而实际测量通常指向{u}。",
    "过去十年里成本下降了约 {p}%，主要得益于{t}的进步。",
    "专家们对{u}的重要性仍有分歧。",
    "如果只记住一点，那就是{t}决定了大部分结果。",
    "不同地区的数据有所差异，但趋势的方向基本一致。",
    "需要注意的是，很多关于{t}的研究样本量较小。",
    "最近的工作把{t}和{u}结合起来，前景不错，但还没有经过充分验证。",
    "总体而言，{s}仍在快速发展，值得持续关注。",
)
_JA = "日本語の資料でも同じ傾向が報告されています（２０２５年）。"

_CODE = {
    "python": (
        "import statistics\n\nsamples = [12.1, 11.8, 12.6, 13.0, 12.2]\n"
        'print(f"mean={statistics.mean(samples):.2f} sd={statistics.stdev(samples):.2f}")\n',
        "from dataclasses import dataclass\n\n@dataclass\nclass Reading:\n    label: str\n"
        '    value: float\n\nreadings = [Reading("a", 1.5), Reading("b", 2.25)]\n'
        "print(max(readings, key=lambda r: r.value))\n",
    ),
    "rust": (
        "fn longest<'a>(x: &'a str, y: &'a str) -> &'a str {\n"
        "    if x.len() > y.len() { x } else { y }\n}\n\nfn main() {\n"
        '    println!("{}", longest("borrow", "checker"));\n}\n',
    ),
    "sql": (
        "EXPLAIN ANALYZE\nSELECT o.customer_id, count(*) AS orders\nFROM orders o\n"
        "WHERE o.created_at >= now() - interval '30 days'\nGROUP BY o.customer_id\n"
        "ORDER BY orders DESC\nLIMIT 10;\n",
    ),
    "bash": (
        "kubectl autoscale deployment web --cpu-percent=70 --min=2 --max=10\n"
        "kubectl get hpa web --watch\n",
        "git switch -c feature/search\ngit rebase origin/main\ngit push --force-with-lease\n",
    ),
    "typescript": (
        "function first<T>(items: readonly T[]): T | undefined {\n  return items[0];\n}\n\n"
        "type ElementOf<A> = A extends readonly (infer E)[] ? E : never;\n"
        "const n: ElementOf<number[]> = first([1, 2, 3]) ?? 0;\n",
    ),
}
_DISPLAY_MATH = (
    "\\[ E = mc^2 \\quad \\int_0^1 x\\,dx = \\tfrac{1}{2} \\]",
    "\\[ \\bar{x} = \\frac{1}{n} \\sum_{i=1}^{n} x_i \\]",
    "\\[ P(A \\mid B) = \\frac{P(B \\mid A)\\,P(A)}{P(B)} \\]",
    "\\[ \\mathrm{COP} = \\frac{Q_h}{W} \\]",
    "\\[ \\mathrm{softmax}(z)_i = \\frac{e^{z_i}}{\\sum_j e^{z_j}} \\]",
)
_INLINE_MATH = (
    "The usual identity \\( a^2 + b^2 = c^2 \\) still applies here.",
    "With a growth rate \\( r \\), doubling takes about \\( \\ln 2 / r \\) years.",
    "The error shrinks like \\( O(1/\\sqrt{n}) \\) as the sample grows.",
)
_TABLE_HEADS = (
    ("Option", "Strength", "Trade-off"),
    ("Factor", "Effect size", "Confidence"),
    ("Approach", "Typical cost", "Best for"),
)
_STRENGTH = ("high", "medium", "low", "mixed", "strong", "weak")
_BEST_FOR = ("small teams", "large deployments", "beginners", "research", "tight budgets")


@functools.lru_cache(maxsize=4096)
def topic_of(seed: int | str, index: int | str) -> Topic:
    """The topic of thread ``index`` of the account with ``seed``."""
    rng = random.Random(f"{seed}:topic:{index}")
    return TOPICS[rng.randrange(len(TOPICS))]


@functools.lru_cache(maxsize=4096)
def speaks_chinese(seed: int | str, index: int | str) -> bool:
    """True for the threads (about one in eight) held in Chinese."""
    return random.Random(f"{seed}:lang:{index}").random() < 0.125


def _fill(template: str, topic: Topic, rng: random.Random, zh: bool = False) -> str:
    terms = topic.zh_terms if zh else topic.terms
    count = len(terms)
    first = int(rng.random() * count)
    t = terms[first]
    u = terms[(first + 1 + int(rng.random() * (count - 1))) % count]
    subject = topic.zh if zh else topic.subject
    values = {
        "s": subject,
        "S": subject[:1].upper() + subject[1:],
        "t": t,
        "T": t[:1].upper() + t[1:],
        "u": u,
        "U": u[:1].upper() + u[1:],
    }
    if "{y" in template:  # draw only the numbers the template shows
        year = 2012 + int(rng.random() * 13)
        values["y"] = str(year)
        values["y2"] = str(year + 3 + int(rng.random() * 6))
    if "{p}" in template:
        values["p"] = str(5 + int(rng.random() * 56))
    if "{n}" in template:
        values["n"] = str(2 + int(rng.random() * 8))
    return template.format_map(values)


def title_text(seed: int, index: int, key: str) -> str:
    """A plausible thread title; ``key`` varies it among the thread's own templates."""
    topic = topic_of(seed, index)
    rng = random.Random(f"{seed}:title:{index}:{key}")
    zh = speaks_chinese(seed, index)
    return _fill(rng.choice(_ZH_TITLES if zh else _EN_TITLES), topic, rng, zh)


def query_text(seed: int, index: int, turn_no: int, key: str) -> str:
    """The question of turn ``turn_no`` (0-based): an opening question, then follow-ups."""
    topic = topic_of(seed, index)
    rng = random.Random(f"{seed}:query:{index}:{turn_no}:{key}")
    if speaks_chinese(seed, index):
        return _fill(rng.choice(_ZH_QUESTIONS), topic, rng, zh=True)
    pool = _EN_QUESTIONS if turn_no == 0 else _EN_FOLLOWUPS
    return _fill(rng.choice(pool), topic, rng)


def subtask_text(seed: int, index: int, key: str, part: int) -> str:
    """The objective of one part of a sub-agent's task."""
    topic = topic_of(seed, index)
    term = topic.terms[(len(key) + part) % len(topic.terms)]
    verbs = ("Collect recent sources on", "Summarize the evidence for", "Check the numbers on")
    return f"{verbs[part % len(verbs)]} {term}"


def headline_text(seed: int, index: int, key: str) -> str:
    """The headline of a sub-agent's workflow."""
    topic = topic_of(seed, index)
    return f"Research {topic.terms[len(key) % len(topic.terms)]}"


def _cite(text: str, rng: random.Random, cites: int) -> str:
    if cites and rng.getrandbits(2):
        return f"{text}[{rng.randrange(cites) + 1}]"
    return text


def _paragraph(topic: Topic, rng: random.Random, cites: int, zh: bool, count: int) -> str:
    pool = _ZH_SENTENCES if zh else _EN_SENTENCES
    sentences = [_cite(_fill(rng.choice(pool), topic, rng, zh), rng, cites) for _ in range(count)]
    return ("" if zh else " ").join(sentences)


def _table(topic: Topic, rng: random.Random) -> str:
    head = rng.choice(_TABLE_HEADS)
    rows = []
    for term in rng.sample(topic.terms, rng.randint(2, len(topic.terms))):
        if head[1] == "Typical cost":
            cells = (f"${rng.randint(1, 99) * 10}", rng.choice(_BEST_FOR))
        elif head[1] == "Effect size":
            cells = (f"{rng.randint(1, 60)}%", rng.choice(_STRENGTH))
        else:
            cells = (rng.choice(_STRENGTH), f"depends on {rng.choice(topic.terms)}")
        rows.append(f"| {term[:1].upper() + term[1:]} | {cells[0]} | {cells[1]} |")
    return f"| {head[0]} | {head[1]} | {head[2]} |\n|---|---|---|\n" + "\n".join(rows)


def answer_text(seed: str, features: tuple[str, ...], cites: int) -> str:
    """The Markdown answer of one turn; ``seed`` is ``"<account seed>:<thread index>:<turn>…"``."""
    rng = random.Random(f"answer:{seed}")
    account, index = [*seed.split(":"), "0", "0"][:2]
    topic = topic_of(account, index)
    zh = speaks_chinese(account, index)
    if zh:
        parts = [_paragraph(topic, rng, cites, True, rng.randint(2, 5))]
    else:
        opener = _cite(_fill(rng.choice(_EN_OPENERS), topic, rng), rng, cites)
        parts = [opener + " " + _paragraph(topic, rng, cites, False, rng.randint(1, 4))]
        if rng.random() < 0.4:
            bullets = rng.sample(_EN_BULLETS, 3)
            parts.append("\n".join("- " + _fill(b, topic, rng) for b in bullets))
    if "table" in features:
        parts.append(_table(topic, rng))
    if "fence" in features:
        snippets = _CODE.get(topic.lang) or _CODE["python"]
        lang = topic.lang if topic.lang in _CODE else "python"
        parts.append("For example:\n\n```" + lang + "\n" + rng.choice(snippets) + "```")
    if "nested_fence" in features:
        parts.append("A Markdown snippet that itself shows code:")
        parts.append("````markdown\nExample:\n```js\nconsole.log(1)\n```\n````")
        parts.append("``````text\n`````\nfive backticks inside six\n`````\n``````")
    if "details" in features:
        parts.append("Raw HTML in an answer: </details> then <details><summary>x</summary>")
    if "html" in features:
        parts.append('<div class="note">Some <b>HTML</b> &amp; <br/> tags</div>')
    if "latex_display" in features:
        parts.append("The relationship can be written as")
        parts.append(rng.choice(_DISPLAY_MATH))
    if "latex_inline" in features:
        parts.append(rng.choice(_INLINE_MATH))
    if "latex_mixed" in features:
        parts.append("Mixed: $$x_1$$ and \\(y\\) and `\\(not math\\)` and $5 and \\[z\\]")
    if "cjk" in features:
        parts.append(_paragraph(topic, rng, 0, True, 2) + _JA)
    if "big" in features:
        while sum(len(p) for p in parts) < 52_000:
            parts.append(_paragraph(topic, rng, cites, zh, 8))
    if not zh:
        parts.append(_fill(rng.choice(_EN_CLOSERS), topic, rng))
    return "\n\n".join(parts)


def asset_bytes(asset_uuid: str, content: str) -> bytes:
    """The bytes the CDN serves for one asset version."""
    if content == "empty":
        return b""
    rng = random.Random(f"asset:{asset_uuid}")
    if content == "binary":
        return b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(512))
    topic = TOPICS[rng.randrange(len(TOPICS))]
    lines = [
        f"# Document {asset_uuid[:8]}",
        "",
        f"## {topic.subject[:1].upper()}{topic.subject[1:]}",
        "",
    ]
    lines += [_fill(rng.choice(_EN_SENTENCES), topic, rng) for _ in range(rng.randint(5, 40))]
    return ("\n".join(lines) + "\n").encode()


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()
