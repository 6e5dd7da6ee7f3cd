"""The grams of the search index: what a row is indexed by and what a query asks for.

Two FTS5 tables hold them, both contentless and without positions (``detail=none``):

``search_tri``    SQLite's ``trigram`` tokenizer (``case_sensitive 1``) over each row's
                  case-folded fields, one column per field: every 3-character piece, cut
                  out in C as the row is inserted. A sixth column, ``short``, holds the
                  fields again with :data:`MARK` between every two characters and around
                  each field (:func:`short_text`): its 3-character pieces are the fields'
                  1-character pieces (``MARK a MARK``) and 2-character pieces
                  (``a MARK b``), so the 1- and 2-character grams are cut in C as well.
                  Fields are joined there by :data:`FIELD_MARK`, so no piece spans two of
                  them. Neither mark is ever in an indexed value (``search_index.clean``).
``search_grams``  the ``ascii`` tokenizer over the tokens this module makes in Python: every
                  7-character piece of a folded field centred on a white-space character
                  (3 characters, the space, 3 characters), hex-encoded (:func:`gram_token`).

A query of 1 or 2 characters is one piece of ``search_tri``'s ``short`` column, of 3 one
trigram of the fields: an exact answer. A longer one is the AND of its 3-character pieces
(at most 16, spread over it) and, when it has any, of its space-centred pieces in
``search_grams`` (at most 8): a superset, confirmed against the folded fields.
:class:`GramQuery` is such a pair of FTS5 expressions.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import cast

# Width, script and case folding (search_fold): the index's and every query's.
from pplx_archiver.shell.archive.search_fold import fold as fold

WIDE = 3  # characters each side of a white-space character in a space-centred gram
MAX_TRIGRAMS = 16  # of a query, spread over it
MAX_WIDE = 8
MARK = "\x01"  # between the characters of a field in the short column
FIELD_MARK = "\x02"  # between two fields there
# Characters no indexed value holds: NUL (FTS5 stops reading at one) and the two marks.
UNINDEXED = "\x00" + MARK + FIELD_MARK

# Gram -> token, memoized: a space-centred gram is mostly two common words' ends, and the
# 3-character halves it is put together from recur in every row. Bounded: cleared when
# full, so it never holds more than _MEMO entries of each kind (~10 MB in all).
_MEMO = 32_768
_TOKENS: dict[str, str] = {}  # the halves and the space
_WIDE_TOKENS: dict[str, str] = {}  # whole space-centred grams
_WIDE_GRAMS = re.compile(rf"(?=(.{{{WIDE}}}\s.{{{WIDE}}}))", re.S)
# What a query with an unindexed character matches: nothing (no search_grams token is "z").
_NO_ROW = '"z"'


def short_text(folded: Iterable[str]) -> str:
    """The ``short`` column of a row: each folded field with :data:`MARK` around and
    between its characters, the fields joined by :data:`FIELD_MARK`."""
    return FIELD_MARK.join(MARK + MARK.join(value) + MARK for value in folded if value)


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
    token = f"w{_short_token(head)}g{_short_token(space)}g{_short_token(tail)}"
    if len(_WIDE_TOKENS) >= _MEMO:
        _WIDE_TOKENS.clear()
    _WIDE_TOKENS[gram] = token
    return token


def gram_token(gram: str) -> str:
    """A space-centred gram as an ``ascii`` token: ``w``, then its code points in hex joined
    by ``g`` (``w61g62g63g20g64g65g66``); ``g`` is never a hex digit, so no pair reads as
    one character."""
    return "w" + "g".join(format(ord(c), "x") for c in gram)


def gram_tokens(values: Iterable[str]) -> str:
    """The ``search_grams`` tokens of the values (each folded): every distinct
    space-centred piece, in no set order (the table stores no positions, so removing a row
    needs the same tokens, not the same order). Empty when there is none."""
    wide: set[str] = set()
    for value in values:
        wide.update(_WIDE_GRAMS.findall(value))  # `\s` is str.isspace
    found = list(map(_WIDE_TOKENS.get, wide))  # one C-level pass; most are memoized
    if None in found:
        found = [_wide_token(g) if t is None else t for g, t in zip(wide, found, strict=True)]
    return " ".join(cast(list[str], found))


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
    if any(c in folded for c in UNINDEXED):  # a query is cleaned first; a raw term is not
        return GramQuery(None, _NO_ROW, exact=True)  # no indexed value holds one
    if len(folded) == 1:
        return GramQuery(_phrase(MARK + folded + MARK), None, exact=True)
    if len(folded) == 2:
        return GramQuery(_phrase(folded[0] + MARK + folded[1]), None, exact=True)
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
