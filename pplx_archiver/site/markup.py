"""Markdown to safe HTML for the static site: no raw HTML, vetted links, MathML, Pygments.

Everything rendered here is untrusted text from the API (or structure-safe Markdown the core
assembled around it). The rules that make the output safe by construction:

- markdown-it runs with raw HTML disabled: a ``<script>``, ``<style>`` or ``</details>`` in an
  answer is text, shown as typed;
- links keep only ``http``/``https`` and relative targets (no ``javascript:``, ``data:``,
  ``file:``…); images become plain links, so a page never loads anything from outside;
- math is converted to MathML at build time and re-serialized from a whitelist of MathML
  elements and attributes, every text node escaped (no ``href``, no colours);
- code is highlighted by Pygments with CSS classes (no inline styles);
- the only markup that passes from the Markdown source is the core's own fold markers
  (``<details><summary>…</summary>`` / ``</details>`` paragraphs), rebuilt here with the summary
  re-escaped and kept balanced, so they never close a fold they did not open.
"""

from __future__ import annotations

import functools
import html
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from latex2mathml.converter import convert_to_element
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from pplx_archiver.site import markup_plain

_SAFE_SCHEME = re.compile(r"^(https?:|#|[^:/?#]*(?:[/?#]|$))", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_FOLD_OPEN = re.compile(r"^<details><summary>(.*)</summary>$", re.DOTALL)
_FOLD_CLOSE = "</details>"
_CITE = re.compile(r"\[(\d{1,4})\]")
_MAX_MATH = 4000

_MATHML_TAGS = frozenset(
    [
        "math",
        "mi",
        "mn",
        "mo",
        "ms",
        "mtext",
        "mspace",
        "mrow",
        "mfrac",
        "msqrt",
        "mroot",
        "mstyle",
        "merror",
        "mpadded",
        "mphantom",
        "menclose",
        "msub",
        "msup",
        "msubsup",
        "munder",
        "mover",
        "munderover",
        "mmultiscripts",
        "mprescripts",
        "none",
        "mtable",
        "mtr",
        "mtd",
        "mlabeledtr",
        "semantics",
        "annotation",
    ]
)
_MATHML_ATTRS = frozenset(
    [
        "display",
        "mathvariant",
        "displaystyle",
        "scriptlevel",
        "stretchy",
        "fence",
        "separator",
        "lspace",
        "rspace",
        "accent",
        "accentunder",
        "movablelimits",
        "columnalign",
        "rowalign",
        "columnspacing",
        "rowspacing",
        "columnlines",
        "rowlines",
        "frame",
        "linethickness",
        "minsize",
        "maxsize",
        "largeop",
        "symmetric",
        "form",
        "notation",
        "width",
        "height",
        "depth",
    ]
)
_ATTR_VALUE = re.compile(r"^[\w.\-# %]{0,40}$")
_SIZE_ATTRS = frozenset({"width", "height", "depth", "lspace", "rspace", "minsize", "maxsize"})
_SIZE = re.compile(r"^-?(\d{1,2}(\.\d+)?|\.\d+)(em|ex|mu|pt)?$")

_FORMATTER = HtmlFormatter(nowrap=True)


def safe_url(url: str) -> bool:
    """True when ``url`` is an http(s) link or a relative one (no other scheme)."""
    cleaned = _CONTROL.sub("", html.unescape(url))
    return bool(_SAFE_SCHEME.match(cleaned))


def _mathml_node(el: ET.Element, out: list[str]) -> None:
    tag = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""
    if tag not in _MATHML_TAGS:
        for child in el:  # unknown element: keep its content, drop the element
            _mathml_node(child, out)
        return
    attrs = []
    if tag == "math":
        attrs.append(' xmlns="http://www.w3.org/1998/Math/MathML"')
    for name, value in sorted(el.attrib.items()):
        if name not in _MATHML_ATTRS or not _ATTR_VALUE.match(value):
            continue
        if name in _SIZE_ATTRS and not _SIZE.match(value):
            continue
        attrs.append(f' {name}="{html.escape(value)}"')
    out.append(f"<{tag}{''.join(attrs)}>")
    if el.text:
        out.append(html.escape(html.unescape(el.text), quote=False))
    for child in el:
        _mathml_node(child, out)
        if child.tail:
            out.append(html.escape(html.unescape(child.tail), quote=False))
    out.append(f"</{tag}>")


def mathml(latex: str, *, block: bool) -> str:
    """MathML for ``latex`` from a whitelist re-serialization; escaped source when it fails."""
    display = "block" if block else "inline"
    if len(latex) <= _MAX_MATH:
        try:
            element = convert_to_element(latex, display=display)
        except Exception:  # latex2mathml raises many kinds on bad input; show the source
            element = None
        if element is not None:
            out: list[str] = []
            _mathml_node(element, out)
            return "".join(out)
    cls = "math-src block" if block else "math-src"
    return f'<code class="{cls}">{html.escape(latex)}</code>'


@functools.lru_cache(maxsize=128)
def _lexer(name: str) -> Lexer | None:
    """Pygments' lexer for a fence's language name, None when it has none (looked up once
    per name: the lookup walks every lexer's aliases)."""
    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return None


def _highlight(code: str, lang: str, _attrs: str) -> str:
    name = lang.split()[0] if lang.strip() else ""
    if not name:
        return ""
    lexer = _lexer(name)
    if lexer is None:
        return ""
    highlighted: str = highlight(code, lexer, _FORMATTER)
    cls = html.escape(name)
    return f'<pre class="highlight"><code class="language-{cls}">{highlighted}</code></pre>\n'


def _render_image(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image becomes a link to it: pages never fetch anything."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = renderer.renderInlineAsText(token.children or [], options, env) or src
    label = html.escape(f"[image: {alt}]", quote=False)
    if not safe_url(src):
        return label
    return f'<a href="{html.escape(src)}" rel="noopener noreferrer nofollow">{label}</a>'


def _render_link_open(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if not href.startswith("#"):
        token.attrSet("rel", "noopener noreferrer nofollow")
    return renderer.renderToken(tokens, idx, options, env)


def _folds(state: StateCore) -> None:
    """Turn the core's fold-marker paragraphs into balanced ``<details>`` (see module doc)."""
    tokens = state.tokens
    out: list[Token] = []
    depth = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if (
            tok.type == "paragraph_open"
            and i + 2 < len(tokens)
            and tokens[i + 1].type == "inline"
            and tokens[i + 2].type == "paragraph_close"
        ):
            content = tokens[i + 1].content.strip()
            match = _FOLD_OPEN.match(content)
            if match and "\n" not in content:
                summary = html.escape(html.unescape(match.group(1)), quote=False)
                block = Token("html_block", "", 0)
                block.content = f"<details><summary>{summary}</summary>\n"
                out.append(block)
                depth += 1
                i += 3
                continue
            if content == _FOLD_CLOSE and depth > 0:
                block = Token("html_block", "", 0)
                block.content = "</details>\n"
                out.append(block)
                depth -= 1
                i += 3
                continue
        out.append(tok)
        i += 1
    for _ in range(depth):
        block = Token("html_block", "", 0)
        block.content = "</details>\n"
        out.append(block)
    state.tokens = out


def _citations(state: StateCore) -> None:
    """``[N]`` in answer text becomes a link to source N of the turn (env ``cite_prefix``)."""
    prefix = state.env.get("cite_prefix")
    count = int(state.env.get("cite_count") or 0)
    if not prefix or not count:
        return
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        in_link = 0
        for child in block.children:
            if child.type == "link_open":
                in_link += 1
            elif child.type == "link_close":
                in_link -= 1
            if child.type != "text" or in_link or "[" not in child.content:
                children.append(child)
                continue
            pos = 0
            for m in _CITE.finditer(child.content):
                number = int(m.group(1))
                if not 1 <= number <= count:
                    continue
                if m.start() > pos:
                    children.append(_text(child.content[pos : m.start()]))
                link = Token("link_open", "a", 1)
                link.attrSet("href", f"#{prefix}{number}")
                link.attrSet("class", "cite")
                children.extend((link, _text(f"[{number}]"), Token("link_close", "a", -1)))
                pos = m.end()
            if pos < len(child.content):
                children.append(_text(child.content[pos:]))
        block.children = children


def _text(content: str) -> Token:
    tok = Token("text", "", 0)
    tok.content = content
    return tok


def _render_math(
    _renderer: RendererHTML, tokens: Sequence[Token], idx: int, _o: OptionsDict, _e: EnvType
) -> str:
    token = tokens[idx]
    block = token.type == "math_block"
    return mathml(token.content.strip(), block=block) + ("\n" if block else "")


def _build() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = safe_url  # type: ignore[method-assign]
    # A pure function, and a thread's links repeat (work steps, answers, sources): memoized.
    md.normalizeLink = functools.lru_cache(maxsize=4096)(md.normalizeLink)  # type: ignore[method-assign]
    dollarmath_plugin(md, allow_labels=False, allow_space=True, allow_digits=False)
    # The plugin renders inline and block math through one renderer; split them here.
    md.add_render_rule("math_inline", _render_math)
    md.add_render_rule("math_inline_double", _render_math)
    md.add_render_rule("math_block", _render_math)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("link_open", _render_link_open)
    md.core.ruler.push("pplx_folds", _folds)
    md.core.ruler.push("pplx_citations", _citations)
    return md


_MD = _build()


def render_markdown(text: str, *, cite_prefix: str = "", cite_count: int = 0) -> str:
    """Safe HTML for structure-safe Markdown; ``[N]`` links to ``#<cite_prefix>N`` when given.

    The blocks in :mod:`~pplx_archiver.site.markup_plain`'s small grammar (most of what the
    render core assembles, and most paragraphs and lists of answers) take its quick path,
    which gives the same HTML; the others are markdown-it's."""
    env: dict[str, Any] = {"cite_prefix": cite_prefix, "cite_count": cite_count}
    if not cite_prefix:
        env["cite_count"] = cite_count = 0

    def fallback(chunk: str) -> str:
        rendered: str = _MD.render(chunk, dict(env))
        return rendered

    links = markup_plain.Links(_MD.normalizeLink, _MD.validateLink, cite_prefix, cite_count)
    return markup_plain.render(text, fallback, links)


def pygments_css() -> str:
    """The stylesheet of the highlight classes."""
    css: str = _FORMATTER.get_style_defs(".highlight")  # type: ignore[no-untyped-call, unused-ignore]
    return css
