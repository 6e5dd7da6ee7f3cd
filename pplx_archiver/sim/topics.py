"""The topics of the simulated account: what each thread is about, in English and Chinese.

Each topic names its subject, the terms an answer mentions, the language of its code samples
and its kind (``tech``, ``science``, ``economy``, ``history``, ``life``), which picks the
kind-specific question and sentence templates of ``sim/prose_en.py`` and ``sim/prose_zh.py``.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True)
class Topic:
    """What one thread is about, in both languages."""

    subject: str  # "solid-state batteries"
    terms: tuple[str, ...]  # things an answer mentions
    zh: str  # "固态电池"
    zh_terms: tuple[str, ...]
    lang: str = "python"  # language of code samples
    kind: str = "science"  # tech, science, economy, history, life


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
        kind="science",
    ),
    _T(
        "the Rust borrow checker",
        ("lifetimes", "mutable references", "ownership", "the Drop trait", "interior mutability"),
        "Rust 借用检查器",
        ("生命周期", "可变引用", "所有权"),
        "rust",
        kind="tech",
    ),
    _T(
        "sourdough baking",
        ("starter hydration", "bulk fermentation", "autolyse", "oven spring", "crumb structure"),
        "酸面包烘焙",
        ("酵种含水量", "整体发酵", "烤箱膨胀"),
        kind="life",
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
        kind="science",
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
        kind="tech",
    ),
    _T(
        "CRISPR gene editing",
        ("Cas9", "guide RNA design", "off-target effects", "base editing", "clinical trials"),
        "CRISPR 基因编辑",
        ("Cas9 蛋白", "向导 RNA", "脱靶效应"),
        kind="science",
    ),
    _T(
        "index funds versus active management",
        ("expense ratios", "tracking error", "survivorship bias", "tax efficiency", "rebalancing"),
        "指数基金与主动管理",
        ("费用率", "跟踪误差", "幸存者偏差"),
        kind="economy",
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
        kind="history",
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
        kind="science",
    ),
    _T(
        "transformer language models",
        ("self-attention", "tokenization", "context length", "fine-tuning", "inference cost"),
        "Transformer 语言模型",
        ("自注意力", "分词", "上下文长度"),
        kind="tech",
    ),
    _T(
        "marathon training plans",
        ("long runs", "tempo workouts", "tapering", "carbohydrate loading", "recovery weeks"),
        "马拉松训练计划",
        ("长距离跑", "节奏跑", "赛前减量"),
        kind="life",
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
        kind="tech",
    ),
    _T(
        "the history of the printing press",
        ("Gutenberg", "movable type", "the Reformation", "literacy rates", "paper supply"),
        "印刷术的历史",
        ("古腾堡", "活字印刷", "识字率"),
        kind="history",
    ),
    _T(
        "urban heat islands",
        ("tree canopy", "albedo", "green roofs", "night-time temperatures", "zoning rules"),
        "城市热岛效应",
        ("树冠覆盖", "反照率", "绿色屋顶"),
        kind="science",
    ),
    _T(
        "TypeScript generics",
        ("type parameters", "conditional types", "the infer keyword", "variance", "utility types"),
        "TypeScript 泛型",
        ("类型参数", "条件类型", "工具类型"),
        "typescript",
        kind="tech",
    ),
    _T(
        "the Mediterranean diet",
        ("olive oil", "legumes", "cardiovascular outcomes", "the PREDIMED trial", "processed meat"),
        "地中海饮食",
        ("橄榄油", "豆类", "心血管结局"),
        kind="life",
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
        kind="science",
    ),
    _T(
        "carbon pricing",
        ("emissions trading", "carbon taxes", "border adjustments", "revenue recycling", "leakage"),
        "碳定价",
        ("排放交易", "碳税", "碳边境调节"),
        kind="economy",
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
        kind="tech",
    ),
    _T(
        "sleep and memory consolidation",
        ("slow-wave sleep", "REM sleep", "the hippocampus", "sleep spindles", "caffeine"),
        "睡眠与记忆巩固",
        ("慢波睡眠", "快速眼动睡眠", "海马体"),
        kind="life",
    ),
    _T(
        "the economics of container shipping",
        ("freight rates", "port congestion", "vessel sizes", "the Suez Canal", "fuel costs"),
        "集装箱航运经济学",
        ("运价", "港口拥堵", "苏伊士运河"),
        kind="economy",
    ),
    _T(
        "WebAssembly outside the browser",
        ("WASI", "sandboxing", "startup time", "the component model", "language support"),
        "浏览器之外的 WebAssembly",
        ("WASI", "沙箱", "组件模型"),
        "rust",
        kind="tech",
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
        kind="science",
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
        kind="history",
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
        kind="tech",
    ),
    _T(
        "green hydrogen",
        ("electrolyzers", "capacity factors", "storage", "ammonia", "the levelized cost"),
        "绿色氢能",
        ("电解槽", "容量系数", "储运"),
        kind="economy",
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
        kind="life",
    ),
    _T(
        "React server components",
        ("hydration", "streaming", "data fetching", "bundle size", "caching"),
        "React 服务端组件",
        ("水合", "流式渲染", "数据获取"),
        "typescript",
        kind="tech",
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
        kind="science",
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
        kind="economy",
    ),
)
