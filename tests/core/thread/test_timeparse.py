"""Timestamp parsing: every API format to one microsecond representation."""

from __future__ import annotations

import pytest

from pplx_archiver.core.thread.timeparse import date_of, iso, parse_ts
from pplx_archiver.errors import PayloadError

US = 1_784_534_530_101_512  # 2026-07-20T08:02:10.101512Z


@pytest.mark.parametrize(
    "value",
    [
        "2026-07-20T08:02:10.101512",
        "2026-07-20T08:02:10.101512+00:00",
        "2026-07-20T08:02:10.101512Z",
        "2026-07-20T10:02:10.101512+02:00",
        "2026-07-20 08:02:10.101512",
        US,
    ],
)
def test_formats_agree(value: object) -> None:
    """Naive, +00:00, Z, offset, space-separated and µs-integer forms give the same instant."""
    assert parse_ts(value) == US


def test_trailing_zero_loss() -> None:
    """A fraction that lost trailing zeros is the same instant as the full one."""
    assert parse_ts("2026-09-07T16:42:48.18033Z") == parse_ts("2026-09-07T16:42:48.180330Z")


def test_epoch_seconds_string() -> None:
    """Epoch seconds as a string (asset created_at) are read as seconds."""
    assert iso(parse_ts("1782190058")) == "2026-06-23T04:47:38.000000Z"


def test_empty_is_none() -> None:
    """Empty strings and None mean 'unset'."""
    assert parse_ts("") is None
    assert parse_ts(None) is None


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01T00:00:00", True, [1], 10**30])
def test_garbage_raises_payload_error(value: object) -> None:
    """Unreadable timestamps raise PayloadError with the given path."""
    with pytest.raises(PayloadError) as info:
        parse_ts(value, "entries[0].entry_created_datetime")
    assert info.value.path == "entries[0].entry_created_datetime"


def test_iso_and_date() -> None:
    """The canonical text forms are ISO UTC with µs and the calendar date."""
    assert iso(US) == "2026-07-20T08:02:10.101512Z"
    assert date_of(US) == "2026-07-20"
    assert iso(None) == ""


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_timestamp_that_is_no_finite_number_is_a_payload_error(number: float) -> None:
    """Not an OverflowError or ValueError escaping the decode: a PayloadError naming it."""
    with pytest.raises(PayloadError, match="out of range"):
        parse_ts(number, "x")
