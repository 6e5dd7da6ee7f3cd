"""Generated prose for the simulator: answers with hostile Markdown, asset file contents.

Every string comes from a ``random.Random`` seeded by the caller, so the same turn always
reads the same. The features a turn asks for (tables, nested fences, ``</details>``, HTML,
LaTeX, CJK, a >50 KB body) are the ones an archiver's renderer must survive.
"""

from __future__ import annotations

import hashlib
import random

from pplx_archiver.sim.account import WORDS

_CJK = "这是一个用于测试的中文段落，包含标点符号和数字１２３。日本語の文も少し含まれています。"


def _make_pool() -> tuple[str, ...]:
    rng = random.Random("sentence-pool")
    return tuple(
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."
        for _ in range(512)
    )


_POOL = _make_pool()


def _sentence(rng: random.Random, cites: int) -> str:
    text = _POOL[rng.getrandbits(9)]
    if cites and rng.getrandbits(2):
        text += f"[{rng.randrange(cites) + 1}]"
    return text


def answer_text(seed: str, features: tuple[str, ...], cites: int) -> str:
    """The Markdown answer of one turn."""
    rng = random.Random(f"answer:{seed}")
    parts = [" ".join(_sentence(rng, cites) for _ in range(rng.randint(2, 5)))]
    if "table" in features:
        parts.append(
            "| Item | Value | Note |\n|---|---|---|\n"
            + "\n".join(
                f"| {rng.choice(WORDS)} | {rng.randint(1, 999)} | {rng.choice(WORDS)} |"
                for _ in range(rng.randint(2, 6))
            )
        )
    if "fence" in features:
        parts.append("```python\nprint('hello')\nfor i in range(3):\n    print(i)\n```")
    if "nested_fence" in features:
        parts.append("````markdown\nExample:\n```js\nconsole.log(1)\n```\n````")
        parts.append("``````text\n`````\nfive backticks inside six\n`````\n``````")
    if "details" in features:
        parts.append("Raw HTML in an answer: </details> then <details><summary>x</summary>")
    if "html" in features:
        parts.append('<div class="note">Some <b>HTML</b> &amp; <br/> tags</div>')
    if "latex_display" in features:
        parts.append("\\[ E = mc^2 \\quad \\int_0^1 x\\,dx = \\tfrac{1}{2} \\]")
    if "latex_inline" in features:
        parts.append("Inline math \\( a^2 + b^2 = c^2 \\) inside a sentence.")
    if "latex_mixed" in features:
        parts.append("Mixed: $$x_1$$ and \\(y\\) and `\\(not math\\)` and $5 and \\[z\\]")
    if "cjk" in features:
        parts.append(_CJK)
    if "big" in features:
        block = "\n\n".join(" ".join(_sentence(rng, cites) for _ in range(8)) for _ in range(8))
        while sum(len(p) for p in parts) < 52_000:
            parts.append(block)
    return "\n\n".join(parts)


def asset_bytes(asset_uuid: str, content: str) -> bytes:
    """The bytes the CDN serves for one asset version."""
    if content == "empty":
        return b""
    rng = random.Random(f"asset:{asset_uuid}")
    if content == "binary":
        return b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(512))
    lines = [f"# Document {asset_uuid[:8]}", ""]
    lines += [_sentence(rng, 0) for _ in range(rng.randint(5, 40))]
    return ("\n".join(lines) + "\n").encode()


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()
