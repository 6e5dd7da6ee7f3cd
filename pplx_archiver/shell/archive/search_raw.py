"""``search --raw``: FTS5 query syntax, evaluated as substrings over the indexed fields.

The syntax is FTS5's (https://sqlite.org/fts5.html, section 3): phrases (bare words or
``"quoted"``), implicit AND, ``AND``, ``OR``, ``NOT`` (``NOT`` binds tightest, then
``AND``, then ``OR``), parentheses, column filters (``query : x``, ``{title query} : x``,
``- sources : x``), ``^`` (at the start of a field) and a trailing ``*`` (accepted; every
phrase already matches as a substring). Each phrase matches where its text occurs in a
field, ignoring case, from one character up. ``NEAR`` and ``+`` are refused (they speak of
token positions, which a substring index does not have).

A parsed query answers two questions: which grams its matches must hold (an FTS5
expression over ``search_tri`` and one over ``search_grams``, together a superset of the
matches: :meth:`Term.grams`) and whether a row's fields match (the exact test). A phrase
of 1 to 3 characters is found in ``search_tri`` alone; an OR one of whose sides needs
``search_grams`` and the other not narrows only through ``search_tri``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pplx_archiver.core.thread.prose import FIELDS
from pplx_archiver.errors import SearchQueryError
from pplx_archiver.shell.archive.search_grams import GramQuery, fold, query_grams

ALL = tuple(range(len(FIELDS)))
NOTHING = GramQuery(None, '"z"')  # a search_grams token no row holds (hex digits, g and w)
_NEVER = "never"  # an expression no row matches, while they are combined


def _and(left: str | None, right: str | None) -> str | None:
    """Both sides (None: no condition)."""
    if _NEVER in (left, right):
        return _NEVER
    if left is None or right is None:
        return right if left is None else left
    return f"({left}) AND ({right})"


def _or(left: str | None, right: str | None) -> str | None:
    """Either side: no condition when one side has none."""
    if left == _NEVER or right == _NEVER:
        return right if left == _NEVER else left
    if left is None or right is None:
        return None
    return f"({left}) OR ({right})"


def _pair(node: Node) -> tuple[str | None, str | None]:
    if isinstance(node, Term):
        if not node.text:
            return _NEVER, _NEVER
        grams = query_grams(node.text)
        return grams.tri, grams.short
    left = _pair(node.left)
    if node.kind == "NOT":
        return left
    right = _pair(node.right)
    combine = _and if node.kind == "AND" else _or
    return combine(left[0], right[0]), combine(left[1], right[1])


_SINGLE = "(){}:+*^,-"
_KEYWORDS = ("AND", "OR", "NOT")
_KEYWORD_TOKENS = [("word", k) for k in _KEYWORDS]


@dataclasses.dataclass(frozen=True, slots=True)
class Term:
    """A phrase: ``text`` (folded) in one of ``columns`` (at the start when ``initial``)."""

    text: str
    columns: tuple[int, ...]
    initial: bool = False

    def matches(self, folded: Sequence[bytes]) -> bool:
        if not self.text:
            return False
        needle = self.text.encode("utf-8")
        if self.initial:
            return any(folded[c].startswith(needle) for c in self.columns)
        return any(needle in folded[c] for c in self.columns)

    def grams(self) -> GramQuery:
        """What every match holds in the gram tables (a superset of the matches)."""
        return _grams(self)

    def needles(self) -> list[str]:
        return [self.text] if self.text else []


@dataclasses.dataclass(frozen=True, slots=True)
class Op:
    """``left AND right``, ``left OR right`` or ``left NOT right``."""

    kind: str
    left: Term | Op
    right: Term | Op

    def matches(self, folded: Sequence[bytes]) -> bool:
        if self.kind == "AND":
            return self.left.matches(folded) and self.right.matches(folded)
        if self.kind == "OR":
            return self.left.matches(folded) or self.right.matches(folded)
        return self.left.matches(folded) and not self.right.matches(folded)

    def grams(self) -> GramQuery:
        """What every match holds in the gram tables (a superset of the matches)."""
        return _grams(self)

    def needles(self) -> list[str]:
        right = self.right.needles() if self.kind != "NOT" else []
        return self.left.needles() + right


Node = Term | Op


def _grams(node: Node) -> GramQuery:
    tri, short = _pair(node)
    return NOTHING if _NEVER in (tri, short) else GramQuery(tri, short)


Token = tuple[str, str]  # (kind, value): kind "word", "string" or the character itself


def _bare(ch: str) -> bool:
    return ord(ch) > 127 or ch.isalnum() or ch in "_\x1a"


def tokens(query: str) -> list[Token]:
    """The query's tokens (SearchQueryError at a character FTS5 does not accept)."""
    out: list[Token] = []
    at = 0
    while at < len(query):
        ch = query[at]
        if ch.isspace():
            at += 1
        elif ch == '"':
            text, at = _string(query, at + 1)
            out.append(("string", text))
        elif ch in _SINGLE:
            out.append((ch, ch))
            at += 1
        elif _bare(ch):
            end = at
            while end < len(query) and _bare(query[end]):
                end += 1
            out.append(("word", query[at:end]))
            at = end
        else:
            raise SearchQueryError(f"search --raw {query!r}: syntax error near {ch!r}")
    return out


def _string(query: str, at: int) -> tuple[str, int]:
    text: list[str] = []
    while at < len(query):
        if query[at] == '"':
            if query[at + 1 : at + 2] == '"':
                text.append('"')
                at += 2
                continue
            return "".join(text), at + 1
        text.append(query[at])
        at += 1
    raise SearchQueryError(f"search --raw {query!r}: unterminated string")


class _Parser:
    def __init__(self, query: str) -> None:
        self.query = query
        self.items = tokens(query)
        self.at = 0

    def fail(self, what: str) -> SearchQueryError:
        return SearchQueryError(f"search --raw {self.query!r}: {what}")

    def peek(self, offset: int = 0) -> Token | None:
        at = self.at + offset
        return self.items[at] if at < len(self.items) else None

    def take(self, kind: str) -> Token:
        item = self.peek()
        if item is None or item[0] != kind:
            near = "the end" if item is None else repr(item[1])
            raise self.fail(f"syntax error near {near}")
        self.at += 1
        return item

    def keyword(self, name: str) -> bool:
        item = self.peek()
        if item == ("word", name):
            self.at += 1
            return True
        return False

    def parse(self) -> Node:
        node = self.any_of(ALL)
        if self.peek() is not None:
            raise self.fail(f"syntax error near {self.peek()[1]!r}")  # type: ignore[index]
        return node

    def any_of(self, columns: tuple[int, ...]) -> Node:
        node = self.all_of(columns)
        while self.keyword("OR"):
            node = Op("OR", node, self.all_of(columns))
        return node

    def all_of(self, columns: tuple[int, ...]) -> Node:
        node = self.but_not(columns)
        while self.keyword("AND"):
            node = Op("AND", node, self.but_not(columns))
        return node

    def but_not(self, columns: tuple[int, ...]) -> Node:
        node = self.unit(columns)
        while self.keyword("NOT"):
            node = Op("NOT", node, self.unit(columns))
        return node

    def unit(self, columns: tuple[int, ...]) -> Node:
        """``( query )`` (column-filtered or not), or phrases in a row: their implicit AND."""
        filtered = self.column_filter(columns) if self.starts_filter() else columns
        if self.peek() == ("(", "("):
            self.at += 1
            group = self.any_of(filtered)
            self.take(")")
            return group
        node: Node = self.phrase(filtered)
        while self.starts_phrase():
            filtered = self.column_filter(columns) if self.starts_filter() else columns
            node = Op("AND", node, self.phrase(filtered))
        return node

    def starts_filter(self) -> bool:
        item = self.peek()
        return item is not None and (
            item[0] in ("{", "-") or (item[0] == "word" and self.peek(1) == (":", ":"))
        )

    def starts_phrase(self) -> bool:
        item = self.peek()
        return item is not None and (
            item[0] in ("string", "{", "-", "^") or (item[0] == "word" and item[1] not in _KEYWORDS)
        )

    def column_filter(self, columns: tuple[int, ...]) -> tuple[int, ...]:
        exclude = self.peek() == ("-", "-")
        if exclude:
            self.at += 1
        names: list[str] = []
        if self.peek() == ("{", "{"):
            self.at += 1
            while self.peek() is not None and self.peek() != ("}", "}"):
                names.append(self.take("word")[1])
            self.take("}")
        else:
            names.append(self.take("word")[1])
        self.take(":")
        picked: set[int] = set()
        for name in names:
            if name.lower() not in FIELDS:
                raise self.fail(f"no such column: {name} (columns: {', '.join(FIELDS)})")
            picked.add(FIELDS.index(name.lower()))
        chosen = set(ALL) - picked if exclude else picked
        return tuple(c for c in columns if c in chosen)

    def phrase(self, columns: tuple[int, ...]) -> Term:
        initial = self.peek() == ("^", "^")
        if initial:
            self.at += 1
        item = self.peek()
        if item == ("word", "NEAR") and self.peek(1) == ("(", "("):
            raise self.fail("NEAR is not supported (matching is by substring)")
        if item is None or item[0] not in ("word", "string") or item in _KEYWORD_TOKENS:
            near = "the end" if item is None else repr(item[1])
            raise self.fail(f"syntax error near {near}")
        self.at += 1
        if self.peek() == ("+", "+"):
            raise self.fail("'+' is not supported (write the phrase in one string)")
        if self.peek() == ("*", "*"):
            self.at += 1
        return Term(fold(item[1]), columns, initial)


def parse(query: str) -> Node:
    """The parsed ``--raw`` query (SearchQueryError naming the mistake)."""
    return _Parser(query).parse()
