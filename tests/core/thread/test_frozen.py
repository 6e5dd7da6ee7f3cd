"""fast_init keeps the dataclass semantics of the frozen value classes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pplx_archiver.core.thread.frozen import fast_init
from pplx_archiver.core.thread.values import Item, WebResult


@fast_init
@dataclasses.dataclass(frozen=True, slots=True)
class _Pair:
    left: str
    right: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class _Reference:
    left: str
    right: tuple[str, ...] = ()


def test_fields_defaults_and_keywords_match_the_dataclass_init() -> None:
    """Positional, keyword and defaulted arguments give the same fields as dataclass init."""
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        (("a",), {}),
        (("a", ("b",)), {}),
        ((), {"right": ("c",), "left": "d"}),
    ]
    for args, kwargs in cases:
        fast, ref = _Pair(*args, **kwargs), _Reference(*args, **kwargs)
        assert (fast.left, fast.right) == (ref.left, ref.right)
    with pytest.raises(TypeError):
        _Pair()  # type: ignore[call-arg]


def test_instances_stay_frozen_hashable_and_comparable() -> None:
    """Assignment still raises; equality, hash and replace behave like a dataclass."""
    result = WebResult("name", "https://a.example", timestamp="2026")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.url = "x"  # type: ignore[misc]
    twin = WebResult(name="name", url="https://a.example", snippet="", timestamp="2026")
    assert result == twin and hash(result) == hash(twin)
    assert dataclasses.replace(result, url="u").url == "u"
    assert Item("i", "WORKFLOW_ITEM_TEXT", where=None).sources == ()  # type: ignore[arg-type]


def test_unsupported_classes_are_refused() -> None:
    """A class that is not frozen or has a default_factory is refused with a TypeError."""

    @dataclasses.dataclass(slots=True)
    class Loose:
        value: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        values: list[int] = dataclasses.field(default_factory=list)

    for cls in (Loose, Factory):
        with pytest.raises(TypeError, match=cls.__name__):
            fast_init(cls)
