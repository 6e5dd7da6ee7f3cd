"""The grams of the search index: what a row is indexed by and what a query asks for.

Two FTS5 tables hold them, both contentless and without positions (``detail=none``):

``search_tri``    SQLite's ``trigram`` tokenizer (``case_sensitive 1``) over each row's
                  case-folded fields, one column per field: every 3-character piece, cut
                  out in C as the row is inserted.
``search_grams``  the ``ascii`` tokenizer over the tokens this module makes in Python: every
                  1- and 2-character piece of a folded field, and every 7-character piece
                  centred on a white-space character (3 characters, the space, 3
                  characters), hex-encoded (:func:`gram_token`).

A query of 1 or 2 characters is one token of ``search_grams``, of 3 characters one
trigram of ``search_tri``: an exact answer. A longer one is the AND of its 3-character
pieces in ``search_tri`` (at most 16, spread over it) and, when it has any, of its
space-centred pieces in ``search_grams`` (at most 8): a superset, confirmed against the
folded fields. :class:`GramQuery` is such a pair of FTS5 expressions.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable
from typing import cast

WIDE = 3  # characters each side of a white-space character in a space-centred gram
MAX_TRIGRAMS = 16  # of a query, spread over it
MAX_WIDE = 8

# Short gram (1 or 2 characters) -> token, memoized: the same few thousand recur in every
# row. Bounded: cleared when full, so it never holds more than _MEMO entries (~5 MB).
# Space-centred grams are mostly distinct: their tokens are put together from the memo.
_MEMO = 32_768
_TOKENS: dict[str, str] = {}
_WIDE_GRAMS = re.compile(rf"(?=(.{{{WIDE}}}\s.{{{WIDE}}}))", re.S)


def fold(text: str) -> str:
    """The case folding of the index and of every comparison with a query."""
    return text.lower()


def _short_token(gram: str) -> str:
    token = _TOKENS.get(gram)
    if token is None:
        token = "g".join(format(ord(c), "x") for c in gram)
        if len(_TOKENS) >= _MEMO:
            _TOKENS.clear()
        _TOKENS[gram] = token
    return token


def _wide_token(gram: str) -> str:
    """The token of a space-centred gram (``WIDE`` characters, the space, ``WIDE``)."""
    head, space, tail = gram[:WIDE], gram[WIDE], gram[WIDE + 1 :]
    return f"w{_short_token(head)}g{_short_token(space)}g{_short_token(tail)}"


def gram_token(gram: str) -> str:
    """A gram as an ``ascii`` token: code points in hex joined by ``g`` (``61g62``).

    ``g`` is never a hex digit, so no pair reads as one character; a space-centred gram
    starts with ``w``, so it never reads as a short one.
    """
    if len(gram) <= 3:
        return _short_token(gram)
    return "w" + "g".join(format(ord(c), "x") for c in gram)


def gram_tokens(values: Iterable[str]) -> str:
    """The ``search_grams`` tokens of the values (each folded): every distinct 1- and
    2-character piece of a value, and every space-centred piece.

    In no set order (it changes from one process to the next): the gram table stores no
    positions (``detail=none``), so removing a row needs the same tokens, not the same order,
    and sorting them cost ~15 % of the extraction.
    """
    short: set[str] = set()
    wide: set[str] = set()
    for value in values:
        text = fold(value)
        short.update(text)
        short.update(map("".join, itertools.pairwise(text)))
        wide.update(_WIDE_GRAMS.findall(text))  # `\s` is str.isspace
    found = list(map(_TOKENS.get, short))  # most are in the memo: one C-level pass
    if None in found:
        tokens = [_short_token(g) if t is None else t for g, t in zip(short, found, strict=True)]
    else:
        tokens = cast(list[str], found)
    tokens += map(_wide_token, wide)
    return " ".join(tokens)


def _phrase(text: str) -> str:
    """``text`` as an FTS5 string (a double quote doubled)."""
    return '"' + text.replace('"', '""') + '"'


@dataclasses.dataclass(frozen=True, slots=True)
class GramQuery:
    """What the rows holding some text must match: an FTS5 expression over ``search_tri``
    (``tri``) and one over ``search_grams`` (``short``); None where that table adds nothing.

    ``exact`` when the rows matching are exactly the rows holding the text (1 to 3
    characters); else they are a superset, to be confirmed.
    """

    tri: str | None
    short: str | None
    exact: bool = False


def query_grams(folded: str) -> GramQuery:
    """The grams every row containing ``folded`` holds (see the module's docstring)."""
    if len(folded) < 3:
        return GramQuery(None, _phrase(_short_token(folded)), exact=True)
    if len(folded) == 3:
        return GramQuery(_phrase(folded), None, exact=True)
    trigrams = list(dict.fromkeys(folded[at : at + 3] for at in range(len(folded) - 2)))
    if len(trigrams) > MAX_TRIGRAMS:
        step = (len(trigrams) - 1) / (MAX_TRIGRAMS - 1)
        trigrams = [trigrams[round(n * step)] for n in range(MAX_TRIGRAMS)]
    wide = [
        folded[at - WIDE : at + WIDE + 1]
        for at in range(WIDE, len(folded) - WIDE)
        if folded[at].isspace()
    ]
    wide = list(dict.fromkeys(wide))[:MAX_WIDE]
    short = " ".join(_phrase(gram_token(g)) for g in wide) if wide else None
    return GramQuery(" ".join(map(_phrase, trigrams)), short)
