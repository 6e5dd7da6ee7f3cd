"""Code samples and formulas the simulated answers show (fences, display and inline LaTeX).

Code samples are keyed by the topic's ``lang``; every sample is a small program that would
run. Formulas use the ``\\[ … \\]`` and ``\\( … \\)`` delimiters the service sends, which the
renderer turns into ``$$`` and ``$``.
"""

from __future__ import annotations

CODE = {
    "python": (
        "import statistics\n\nsamples = [12.1, 11.8, 12.6, 13.0, 12.2]\n"
        'print(f"mean={statistics.mean(samples):.2f} sd={statistics.stdev(samples):.2f}")\n',
        "from dataclasses import dataclass\n\n@dataclass\nclass Reading:\n    label: str\n"
        '    value: float\n\nreadings = [Reading("a", 1.5), Reading("b", 2.25)]\n'
        "print(max(readings, key=lambda r: r.value))\n",
        'import pandas as pd\n\ndf = pd.DataFrame({"group": ["a", "b", "a"], "x": [1, 2, 3]})\n'
        'print(df.groupby("group", observed=True)["x"].agg(["mean", "count"]))\n',
        "def compound(principal: float, rate: float, years: int) -> float:\n"
        "    return principal * (1 + rate) ** years\n\n"
        'print(f"{compound(1000, 0.05, 10):.2f}")\n',
        "from collections import Counter\n\n"
        'words = "the quick brown fox jumps over the lazy dog".split()\n'
        "print(Counter(words).most_common(3))\n",
    ),
    "rust": (
        "fn longest<'a>(x: &'a str, y: &'a str) -> &'a str {\n"
        "    if x.len() > y.len() { x } else { y }\n}\n\nfn main() {\n"
        '    println!("{}", longest("borrow", "checker"));\n}\n',
        "use std::cell::RefCell;\nuse std::rc::Rc;\n\nfn main() {\n"
        "    let shared = Rc::new(RefCell::new(vec![1, 2]));\n"
        "    shared.borrow_mut().push(3);\n"
        '    println!("{:?}", shared.borrow());\n}\n',
    ),
    "sql": (
        "EXPLAIN ANALYZE\nSELECT o.customer_id, count(*) AS orders\nFROM orders o\n"
        "WHERE o.created_at >= now() - interval '30 days'\nGROUP BY o.customer_id\n"
        "ORDER BY orders DESC\nLIMIT 10;\n",
        "CREATE INDEX CONCURRENTLY orders_open_idx\n    ON orders (created_at)\n"
        "    WHERE status = 'open';\n\nANALYZE orders;\n",
    ),
    "bash": (
        "kubectl autoscale deployment web --cpu-percent=70 --min=2 --max=10\n"
        "kubectl get hpa web --watch\n",
        "git switch -c feature/search\ngit rebase origin/main\ngit push --force-with-lease\n",
        "git log --oneline --graph --decorate -n 20\ngit merge --no-ff feature/search\n",
    ),
    "typescript": (
        "function first<T>(items: readonly T[]): T | undefined {\n  return items[0];\n}\n\n"
        "type ElementOf<A> = A extends readonly (infer E)[] ? E : never;\n"
        "const n: ElementOf<number[]> = first([1, 2, 3]) ?? 0;\n",
        "type Readonlyish<T> = { readonly [K in keyof T]: T[K] };\n\n"
        "interface User {\n  id: number;\n  name: string;\n}\n\n"
        'const u: Readonlyish<User> = { id: 1, name: "Ada" };\nconsole.log(u.name);\n',
    ),
}

DISPLAY_MATH = (  # fit any topic
    "\\[ \\bar{x} = \\frac{1}{n} \\sum_{i=1}^{n} x_i \\]",
    "\\[ P(A \\mid B) = \\frac{P(B \\mid A)\\,P(A)}{P(B)} \\]",
    "\\[ \\sigma = \\sqrt{\\frac{1}{n-1} \\sum_{i=1}^{n} (x_i - \\bar{x})^2} \\]",
)
KIND_DISPLAY_MATH = {
    "tech": (
        "\\[ \\mathrm{softmax}(z)_i = \\frac{e^{z_i}}{\\sum_j e^{z_j}} \\]",
        "\\[ \\mathrm{Attention}(Q, K, V) = "
        "\\mathrm{softmax}\\!\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right) V \\]",
        "\\[ T(n) = 2\\,T(n/2) + O(n) = O(n \\log n) \\]",
    ),
    "science": (
        "\\[ E = mc^2 \\quad \\int_0^1 x\\,dx = \\tfrac{1}{2} \\]",
        "\\[ \\mathrm{COP} = \\frac{Q_h}{W} \\]",
        "\\[ N(t) = N_0 \\, e^{-\\lambda t} \\]",
        "\\[ \\Delta G = \\Delta H - T \\Delta S \\]",
    ),
    "economy": (
        "\\[ A = P \\left(1 + \\frac{r}{n}\\right)^{nt} \\]",
        "\\[ i = r^* + \\pi + 0.5\\,(\\pi - \\pi^*) + 0.5\\,(y - y^*) \\]",
    ),
    "history": ("\\[ P(t) = P_0 \\, (1 + g)^{t} \\]",),
    "life": ("\\[ \\mathrm{pace} = \\frac{\\text{time}}{\\text{distance}} \\]",),
}

INLINE_MATH = (
    "The usual identity \\( a^2 + b^2 = c^2 \\) still applies here.",
    "With a growth rate \\( r \\), doubling takes about \\( \\ln 2 / r \\) years.",
    "The error shrinks like \\( O(1/\\sqrt{n}) \\) as the sample grows.",
    "At a rate of \\( 7\\% \\) a year, a value doubles in roughly ten years.",
    "A ratio above \\( 1 \\) means the output exceeds the input.",
    "The relative change is \\( (x_1 - x_0) / x_0 \\), usually quoted as a percentage.",
)

INLINE_MATH_ZH = (
    "这里仍然满足恒等式 \\( a^2 + b^2 = c^2 \\)。",
    "增长率为 \\( r \\) 时，翻倍大约需要 \\( \\ln 2 / r \\) 年。",
    "随着样本增大，误差按 \\( O(1/\\sqrt{n}) \\) 缩小。",
)
