"""Markdown to HTML for the site: raw HTML never passes, links and math are vetted."""

from __future__ import annotations

import re

import pytest

from pplx_archiver.site.markup import mathml, render_markdown, safe_url
from tests.site.builders import HOSTILE_ANSWER

LIVE_TAG = re.compile(r"<(script|style|img|svg|iframe|object|embed)\b", re.IGNORECASE)
HANDLER = re.compile(r"<[^>]*\son\w+\s*=", re.IGNORECASE)


def test_hostile_markdown_renders_as_text() -> None:
    """Script, style, SVG, iframe and event-handler markup come out escaped, never live."""
    out = render_markdown(HOSTILE_ANSWER)
    assert not LIVE_TAG.search(out)
    assert not HANDLER.search(out)
    assert "&lt;script&gt;alert('script')&lt;/script&gt;" in out
    assert "VISIBLE-AFTER-STYLE" in out


@pytest.mark.parametrize(
    "url, ok",
    [
        ("https://example.com/a", True),
        ("http://example.com", True),
        ("../report.md", True),
        ("#turn-1", True),
        ("javascript:alert(1)", False),
        ("JaVaScRiPt:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("data:text/html,x", False),
        ("file:///etc/passwd", False),
        ("vbscript:x", False),
    ],
)
def test_safe_url(url: str, ok: bool) -> None:
    """Only http(s) and relative targets are kept as links."""
    assert safe_url(url) is ok


def test_links_and_images_are_vetted() -> None:
    """A javascript: link stays text; an image becomes a plain link (no fetch)."""
    out = render_markdown(
        "[x](javascript:alert(1)) ![p](https://t.example/p.png) [ok](https://a.b)"
    )
    assert 'href="javascript' not in out
    assert "<img" not in out
    assert (
        '<a href="https://t.example/p.png" rel="noopener noreferrer nofollow">[image: p]</a>' in out
    )
    assert '<a href="https://a.b" rel="noopener noreferrer nofollow">ok</a>' in out


def test_math_becomes_mathml_with_text_escaped() -> None:
    """LaTeX converts to MathML; markup inside \\text{} is escaped, hrefs and colours dropped."""
    out = mathml(
        r"\text{<script>x</script>} \href{javascript:alert(1)}{y} \color{white}{z}", block=False
    )
    assert out.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">')
    assert "<script" not in out and "&lt;script&gt;" in out
    assert "href" not in out and "mathcolor" not in out
    block = render_markdown("$$\\frac{a}{b}$$")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in block
    assert "<mfrac>" in block


def test_bad_latex_shows_its_source() -> None:
    """Unconvertible LaTeX is shown as escaped code, not dropped."""
    assert (
        mathml("<b>\\frac{", block=True) == '<code class="math-src block">&lt;b&gt;\\frac{</code>'
    )


def test_fold_markers_balanced() -> None:
    """The core's fold markers become <details>; a stray closer stays text; open folds close."""
    md = "<details><summary>Steps &lt;b&gt; (2)</summary>\n\ninner\n\n</details>\n\n</details>\n\n"
    md += "<details><summary>left open</summary>\n\nbody"
    out = render_markdown(md)
    assert out.count("<details>") == 2 and out.count("</details>") == 2
    assert "<summary>Steps &lt;b&gt; (2)</summary>" in out
    assert "<p>&lt;/details&gt;</p>" in out


def test_citations_link_to_sources() -> None:
    """[N] within the source count links to the turn's source N; others stay text."""
    out = render_markdown("a [1] b [3] `[1]`", cite_prefix="turn-2-src-", cite_count=2)
    assert '<a href="#turn-2-src-1" class="cite">[1]</a>' in out
    assert "[3]" in out and 'src-3"' not in out
    assert "<code>[1]</code>" in out


def test_code_is_highlighted_with_classes() -> None:
    """A fenced block with a known language is highlighted by Pygments, with classes only."""
    out = render_markdown("```python\ndef f(): return '<x>'\n```")
    assert '<pre class="highlight"><code class="language-python">' in out
    assert '<span class="k">def</span>' in out and "&lt;x&gt;" in out
    assert "style=" not in out
