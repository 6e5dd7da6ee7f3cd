"""Variant folding of the search index and of every query: width, script and case.

``fold(text)`` is what the index stores and what a query is compared in:

1. NFKC, so full-width forms are their half-width letters and digits (``ＡＩ`` → ``AI``,
   ``１２３`` → ``123``) and compatibility characters their plain ones;
2. traditional Chinese characters → simplified, one character for one, from OpenCC's
   conversion tables as the ``opencc-python-reimplemented`` package ships them
   (``TSCharacters.txt``, plus the Taiwan and Hong Kong variant forms of
   ``TWVariantsRev.txt``/``HKVariantsRev.txt`` first brought to OpenCC's standard form);
   a character with several simplified forms takes the first, as OpenCC does;
3. lower case.

Character for character (never OpenCC's phrase tables), so a piece of a text folds to a
piece of the folded text: a query folded alone matches where it occurs in a longer text.
``fold_exact`` is the identity: ``--exact`` compares the text as written.
"""

from __future__ import annotations

import functools
import unicodedata
from importlib import resources

_PACKAGE = "opencc"  # opencc-python-reimplemented
_CHARACTERS = "TSCharacters.txt"
_VARIANTS = ("TWVariantsRev.txt", "HKVariantsRev.txt")


def _pairs(name: str) -> dict[str, str]:
    """One-character entries ``source<TAB>target [alternatives]`` of a dictionary file."""
    text = resources.files(_PACKAGE).joinpath("dictionary", name).read_text("utf-8")
    out: dict[str, str] = {}
    for line in text.splitlines():
        source, _, targets = line.partition("\t")
        target = targets.split(" ", 1)[0].strip()
        if len(source) == 1 and len(target) == 1 and source != target:
            out.setdefault(source, target)
    return out


@functools.cache
def table() -> dict[str, str]:
    """Traditional (and variant) character → simplified, closed under itself."""
    t2s = _pairs(_CHARACTERS)
    merged: dict[str, str] = {}
    for name in _VARIANTS:
        for source, standard in _pairs(name).items():
            merged.setdefault(source, t2s.get(standard, standard))
    merged.update(t2s)
    out: dict[str, str] = {}
    for source, target in merged.items():
        seen = {source}
        while target in merged and target not in seen:  # a chain: follow it to its end
            seen.add(target)
            target = merged[target]
        target = unicodedata.normalize("NFKC", target)
        if target != source:
            out[source] = target
    return out


@functools.cache
def _translation() -> dict[int, str]:
    return {ord(k): v for k, v in table().items()}


def fold(text: str) -> str:
    """The folding of the index and of every comparison with a query (see the module)."""
    if text.isascii():
        return text.lower()
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text.translate(_translation()).lower()


def fold_exact(text: str) -> str:
    """No folding: ``--exact``."""
    return text


def js_table() -> str:
    """The table for the site's script: the sources then the targets, each a string of
    characters in the same order (``"臺灣…"``, ``"台湾…"``), as one JSON-ready pair."""
    items = sorted(table().items())
    return "".join(k for k, _ in items) + "\n" + "".join(v for _, v in items)
