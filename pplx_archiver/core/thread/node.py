"""Path-aware access to decoded JSON: every read knows its JSON path for error messages.

A :class:`Node` wraps one JSON value and the way it was reached. Reads that find the wrong
type raise :class:`~pplx_archiver.errors.PayloadError` naming the path
(``entries[3].blocks[1].workflow_block.steps``). Missing keys and ``null`` are treated as
absent by the ``opt``/defaulting readers, because the platform omits fields freely.
The path is built lazily, only when an error is raised, so reads stay cheap.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from pplx_archiver.errors import PayloadError

_TYPE_NAMES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}


JsonMemo = dict[str, Any]  # embedded JSON text -> its parsed value
_UNSET: Any = object()


def loads_memo(text: str, memo: JsonMemo | None) -> Any:
    """``orjson.loads(text)``, or the value parsed before from the same text in ``memo``.

    A thread's pages are decoded more than once (plain pages alone, then with the
    schematized ones); the values parsed are shared, which is safe because decoding never
    changes a JSON value in place. A text that does not parse raises every time.
    """
    if memo is None:
        return orjson.loads(text)
    found = memo.get(text, _UNSET)
    if found is _UNSET:
        found = memo[text] = orjson.loads(text)
    return found


def type_name(value: object) -> str:
    """A JSON-ish name for the type of a value, for error messages."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)


class Node:
    """One JSON value and the path that led to it."""

    __slots__ = ("_key", "_parent", "v")

    def __init__(self, value: Any, parent: Node | None = None, key: str | int = "") -> None:
        self.v = value
        self._parent = parent
        self._key = key

    # -- paths -------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The JSON path of this value, e.g. ``entries[3].blocks[1]``."""
        parts: list[str] = []
        node: Node | None = self
        while node is not None:
            key = node._key
            if isinstance(key, int):
                parts.append(f"[{key}]")
            elif key:
                parts.append(("." if node._parent is not None else "") + key)
            node = node._parent
        text = "".join(reversed(parts))
        return text.lstrip(".") or "$"

    def error(self, message: str) -> PayloadError:
        """A :class:`PayloadError` located at this value."""
        return PayloadError(self.path, message)

    def with_value(self, value: Any) -> Node:
        """A node for ``value`` at this node's path (a repaired copy of this value)."""
        return Node(value, self._parent, self._key)

    def child(self, key: str | int, value: Any) -> Node:
        """A node for ``value`` reached from this node by ``key``."""
        return Node(value, self, key)

    # -- shape checks --------------------------------------------------------------------
    def as_obj(self) -> Mapping[str, Any]:
        """This value as an object, or a PayloadError."""
        if not isinstance(self.v, dict):
            raise self.error(f"expected object, got {type_name(self.v)}")
        return self.v

    def as_list(self) -> list[Any]:
        """This value as an array, or a PayloadError."""
        if not isinstance(self.v, list):
            raise self.error(f"expected array, got {type_name(self.v)}")
        return self.v

    def as_str(self) -> str:
        """This value as a string, or a PayloadError."""
        if not isinstance(self.v, str):
            raise self.error(f"expected string, got {type_name(self.v)}")
        return self.v

    # -- keyed reads ---------------------------------------------------------------------
    def raw(self, key: str) -> Any:
        """The raw value under ``key`` (None when absent); this node must be an object."""
        return (self.v if type(self.v) is dict else self.as_obj()).get(key)

    def has(self, key: str) -> bool:
        """True when the object holds ``key`` with a non-null value."""
        return (self.v if type(self.v) is dict else self.as_obj()).get(key) is not None

    def get(self, key: str) -> Node:
        """The child under ``key``; absent or null is an error."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if value is None:
            raise PayloadError(f"{self.path}.{key}" if self.path != "$" else key, "missing")
        return Node(value, self, key)

    def opt(self, key: str) -> Node | None:
        """The child under ``key``, or None when absent or null."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if value is None:
            return None
        return Node(value, self, key)

    def get_obj(self, key: str) -> Node | None:
        """The object under ``key`` (None when absent/null); another type is an error."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if type(value) is dict:
            return Node(value, self, key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise Node(value, self, key).error(f"expected object, got {type_name(value)}")
        return Node(value, self, key)

    def get_list(self, key: str) -> list[Node]:
        """The array under ``key`` as nodes ([] when absent/null); another type is an error."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if value is None or value == []:  # nothing to wrap (an empty array is common)
            return []
        if not isinstance(value, list):
            raise Node(value, self, key).error(f"expected array, got {type_name(value)}")
        parent = Node(value, self, key)
        return [Node(item, parent, i) for i, item in enumerate(value)]

    def get_str(self, key: str, default: str = "") -> str:
        """The string under ``key`` (``default`` when absent/null); another type is an error."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if type(value) is str:
            return value
        if value is None:
            return default
        if not isinstance(value, str):
            raise Node(value, self, key).error(f"expected string, got {type_name(value)}")
        return value

    def get_strs(self, *keys: str) -> list[str]:
        """Several string fields at once ('' when absent/null); another type is an error."""
        get = (self.v if type(self.v) is dict else self.as_obj()).get
        out: list[str] = []
        append = out.append
        for key in keys:
            value = get(key)
            if type(value) is str:
                append(value)
            elif value is None:
                append("")
            elif isinstance(value, str):
                out.append(str(value))
            else:
                raise Node(value, self, key).error(f"expected string, got {type_name(value)}")
        return out

    def get_text(self, key: str) -> str:
        """A scalar under ``key`` shown as text: strings as-is, numbers/booleans printed."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if type(value) is str:
            return value
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return repr(value)
        raise Node(value, self, key).error(f"expected text, got {type_name(value)}")

    def get_int(self, key: str) -> int | None:
        """The integer under ``key`` (None when absent/null); another type is an error."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise Node(value, self, key).error(f"expected integer, got {type_name(value)}")
        return value

    def get_bool(self, key: str) -> bool:
        """The boolean under ``key`` (False when absent/null); another type is an error."""
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise Node(value, self, key).error(f"expected boolean, got {type_name(value)}")
        return value

    def list_items(self) -> list[Node]:
        """This array's elements as nodes; another type is an error."""
        return [Node(item, self, i) for i, item in enumerate(self.as_list())]

    def items(self) -> Iterator[tuple[str, Node]]:
        """The members of this object as (key, node) pairs, in document order."""
        for key, value in self.as_obj().items():
            yield key, Node(value, self, key)

    def json(self, key: str, memo: JsonMemo | None = None) -> Node | None:
        """Decode the JSON document held as a string under ``key`` (None when absent/empty).

        Plain ``text`` and FINAL ``content.answer`` are JSON inside JSON; a value that is
        already decoded (object or array) is accepted as is. ``memo``: see :func:`loads_memo`.
        """
        value = (self.v if type(self.v) is dict else self.as_obj()).get(key)
        if value is None or value == "":
            return None
        if isinstance(value, (dict, list)):
            return Node(value, self, key)
        if not isinstance(value, str):
            raise Node(value, self, key).error(f"expected JSON string, got {type_name(value)}")
        try:
            decoded = loads_memo(value, memo)
        except orjson.JSONDecodeError as exc:
            raise Node(value, self, key).error(f"embedded JSON does not parse: {exc}") from None
        return Node(decoded, self, key)


def dump_json(node: Node) -> str:
    """Pretty JSON of a value for display (sorted keys), or a PayloadError at its path."""
    try:
        return orjson.dumps(node.v, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    except (TypeError, ValueError) as exc:  # orjson.JSONEncodeError: depth, surrogates, keys
        raise node.error(f"value cannot be shown as JSON: {exc}") from None
