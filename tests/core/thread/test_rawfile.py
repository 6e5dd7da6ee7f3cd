"""Raw page files keep response bodies byte for byte and read back to equal values."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pplx_archiver.core.thread.rawfile import decode_raw_pages, encode_raw_pages
from pplx_archiver.errors import PayloadError

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_request = st.fixed_dictionaries(
    {
        "method": st.sampled_from(["GET", "POST"]),
        "path": st.text(max_size=30),
        "params": st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8)), max_size=3),
    }
)


def _bodies(value: Any) -> list[bytes]:
    """Several byte spellings of one JSON value: compact, indented, padded."""
    compact = orjson.dumps(value)
    return [compact, orjson.dumps(value, option=orjson.OPT_INDENT_2), b" \n" + compact + b"\n"]


@given(st.lists(st.tuples(_request, _json, st.integers(0, 2)), max_size=5))
def test_round_trip_keeps_bytes_verbatim(pages: list[tuple[dict[str, Any], Any, int]]) -> None:
    """decode(encode(x)) gives equal bodies and every body's bytes appear unchanged in the file."""
    encoded_pages = [(req, _bodies(value)[variant]) for req, value, variant in pages]
    data = encode_raw_pages(encoded_pages)
    decoded = decode_raw_pages(data)
    assert len(decoded) == len(pages)
    for (req, value, _), (_, body), page in zip(pages, encoded_pages, decoded, strict=True):
        assert body in data
        assert page.body == orjson.loads(orjson.dumps(value))
        assert page.request["method"] == req["method"]
        assert page.request["params"] == [list(p) for p in req["params"]]


def test_file_shape_and_sorted_request_keys() -> None:
    """The file is the documented envelope with sorted request keys and the body spliced in."""
    data = encode_raw_pages([({"path": "/rest/thread/x", "method": "GET"}, b'{"b": 1,"a":2}')])
    assert data == (
        b'{"format":1,"pages":[\n'
        b'{"request":{"method":"GET","path":"/rest/thread/x"},"body":{"b": 1,"a":2}}\n]}\n'
    )
    assert encode_raw_pages([]) == b'{"format":1,"pages":[\n\n]}\n'
    assert decode_raw_pages(encode_raw_pages([])) == ()


@pytest.mark.parametrize("key", ["headers", "cookies", "Cookie", "authorization", "session_token"])
def test_secret_request_keys_are_refused(key: str) -> None:
    """A request carrying headers, cookies or tokens never reaches a raw file."""
    with pytest.raises(PayloadError) as err:
        encode_raw_pages([({"method": "GET", key: {"x": "y"}}, b"{}")])
    assert key in err.value.path


@pytest.mark.parametrize("body", [b"", b"{", b'{"a":1} {"b":2}', b"\xff", b"<html>"])
def test_bodies_that_are_not_one_json_value_are_refused(body: bytes) -> None:
    """Truncated, doubled, non-UTF-8 or HTML bodies are refused with the page's path."""
    with pytest.raises(PayloadError) as err:
        encode_raw_pages([({"method": "GET"}, b"{}"), ({"method": "GET"}, body)])
    assert err.value.path == "pages[1].body"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b"{", "raw_blocks.json"),
        (b"[]", "raw_blocks.json"),
        (b'{"format":2,"pages":[]}', "raw_blocks.json:format"),
        (b'{"format":1}', "raw_blocks.json:pages"),
        (b'{"format":1,"pages":[1]}', "raw_blocks.json:pages[0]"),
        (b'{"format":1,"pages":[{"body":1}]}', "raw_blocks.json:pages[0].request"),
        (b'{"format":1,"pages":[{"request":{}}]}', "raw_blocks.json:pages[0].body"),
    ],
)
def test_decode_errors_name_the_bad_spot(data: bytes, path: str) -> None:
    """Each malformed raw file raises PayloadError whose path names the file and the value."""
    with pytest.raises(PayloadError) as err:
        decode_raw_pages(data, name="raw_blocks.json")
    assert err.value.path == path
