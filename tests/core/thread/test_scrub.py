"""Signed-URL credentials are masked in response bytes; everything else stays byte for byte."""

from __future__ import annotations

import re
from collections.abc import Callable

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pplx_archiver.core.thread import scrub
from pplx_archiver.core.thread.scrub import scrub_signed_urls
from tests.core.simcorpus import account

URL = (
    "https://d2z0o16i8xm8ak.cloudfront.net/a/report.md?Expires=1782190058"
    "&Signature=abcDEF~123-_xyz&Key-Pair-Id=K2ABCDEFG"
)
S3 = (
    "https://ppl-ai-file-upload.s3.amazonaws.com/x.pdf?AWSAccessKeyId=AKIAXXXX"
    "&Signature=s%2Fg%3D&x-amz-security-token=FwoGZXIvYXdz&Expires=1"
)


def test_masks_cloudfront_and_s3_parameters() -> None:
    """Signature, Key-Pair-Id, AWSAccessKeyId and the security token lose their values."""
    body = orjson.dumps({"assets": [{"url": URL}, {"url": S3, "name": "Signature=keep"}]})
    out = scrub_signed_urls(body)
    data = orjson.loads(out)
    assert data["assets"][0]["url"] == (
        "https://d2z0o16i8xm8ak.cloudfront.net/a/report.md?Expires=1782190058"
        "&Signature=REDACTED&Key-Pair-Id=REDACTED"
    )
    assert "AKIAXXXX" not in out.decode() and "FwoGZXIvYXdz" not in out.decode()
    assert data["assets"][1]["name"] == "Signature=keep"  # not a URL parameter


def test_escaped_ampersand_and_untouched_bodies() -> None:
    """A JSON-escaped ampersand is handled; a body without parameters is returned as is."""
    body = b'{"u": "https://x/y?a=1\\u0026Signature=secretsecret\\u0026b=2"}'
    assert orjson.loads(scrub_signed_urls(body))["u"] == "https://x/y?a=1&Signature=REDACTED&b=2"
    plain = b'{"answer": "no urls here"}'
    assert scrub_signed_urls(plain) is plain


@given(
    st.recursive(
        st.text() | st.integers(-(2**63), 2**63 - 1),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_scrubbed_json_stays_json(value: object) -> None:
    """Any JSON document, with a signed URL inside, is still valid JSON after scrubbing."""
    body = orjson.dumps({"v": value, "u": URL})
    out = orjson.loads(scrub_signed_urls(body))
    assert "abcDEF" not in out["u"]


# The definition of what is masked: every credential parameter's value, left to right.
REFERENCE = re.compile(
    rb"(?i)((?:[?&]|\\u0026)"
    rb"(?:Signature|Policy|Key-Pair-Id|AWSAccessKeyId|X-Amz-Signature|X-Amz-Credential|"
    rb"X-Amz-Security-Token)=)"
    rb"[^&\"\\\s#<>']+"
)


def reference(body: bytes) -> bytes:
    return REFERENCE.sub(lambda m: m.group(1) + b"REDACTED", body)


PIECES = [
    "?", "&", "\\u0026", "\\U0026", "=", '"', " ", "#", "<", "'", "\\", "a", "Zq9", "-",
    "Signature=", "SIGNATURE=", "signature", "Policy=", "key-pair-id=", "Key-Pair-Id=",
    "AWSAccessKeyId=", "X-Amz-Signature=", "x-amz-signature=", "X-Amz-Credential=",
    "x-amz-security-token=", "X-Amz-", "https://cdn.test/r.md",
]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=40))
def test_scrub_masks_exactly_what_the_reference_regex_masks(pieces: list[str]) -> None:
    """Overlaps, prefixes, escaped ampersands, empty values, any case: byte for byte the
    same as the reference regex (and the very same object when nothing is masked)."""
    body = "".join(pieces).encode("utf-8", "surrogatepass")
    got = scrub_signed_urls(body)
    assert got == reference(body)
    if got == body:
        assert got is body


def test_scrub_equals_the_reference_on_simulator_pages() -> None:
    """On the simulated account's pages (signed asset URLs included) the same bytes."""
    bodies = [orjson.dumps(p.body) for inp, _ in account(40, 3) for p in inp.plain_pages]
    assert any(reference(b) != b for b in bodies)
    for body in bodies:
        assert scrub_signed_urls(body) == reference(body)


def test_the_quick_check_skips_only_bodies_without_any_parameter() -> None:
    """Every parameter name, in any case, still gets masked; a body with none is returned as is."""
    for name in ("SIGNATURE", "Policy", "key-pair-id", "AWSAccessKeyId", "X-Amz-Credential",
                 "x-amz-security-token", "X-AMZ-SIGNATURE"):  # fmt: skip
        body = orjson.dumps({"u": f"https://x/y?a=1&{name}=secretvalue"})
        assert b"secretvalue" not in scrub_signed_urls(body)
        assert scrub_signed_urls(body) == reference(body)
    plain = orjson.dumps({"u": "https://x/y?a=1&b=2", "t": "sign here"})
    assert scrub_signed_urls(plain) is plain


Spans = list[tuple[int, int, int]]
FINDERS = [scrub._spans_at_equals, scrub._spans_by_name]


@pytest.mark.parametrize("find", FINDERS, ids=lambda f: f.__name__)
@given(pieces=st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=40))
def test_both_ways_of_finding_mask_what_the_reference_masks(
    find: Callable[[bytes], Spans], pieces: list[str]
) -> None:
    """Read at each ``=`` or searched by name: byte for byte the reference, whatever the
    density of ``=`` that chooses between them."""
    body = "".join(pieces).encode("utf-8", "surrogatepass")
    assert scrub._masked(body, find(body)) == reference(body)


@pytest.mark.parametrize("find", FINDERS, ids=lambda f: f.__name__)
def test_both_ways_of_finding_agree_on_simulator_pages(
    find: Callable[[bytes], Spans],
) -> None:
    """Plain and schematized pages of the simulated account: the reference's bytes."""
    bodies = [
        orjson.dumps(p.body)
        for inp, _ in account(40, 3)
        for p in (*inp.plain_pages, *inp.blocks_pages)
    ]
    assert any(reference(b) != b for b in bodies)
    for body in bodies:
        assert scrub._masked(body, find(body)) == reference(body)


def test_the_density_of_equals_signs_chooses_the_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page with few ``=`` is read at each of them, one full of them by name."""
    used: list[str] = []

    def spying(find: Callable[[bytes], Spans]) -> Callable[[bytes], Spans]:
        def spy(body: bytes) -> Spans:
            used.append(find.__name__)
            return find(body)

        return spy

    for find in FINDERS:
        monkeypatch.setattr(scrub, find.__name__, spying(find))
    url = "https://cdn.test/r.md?Expires=1&Signature=secret"
    sparse = orjson.dumps({"u": url, "t": "x" * 5000})
    dense = orjson.dumps({"u": url, "t": "a=b " * 2000})
    assert b"secret" not in scrub.scrub_signed_urls(sparse)
    assert b"secret" not in scrub.scrub_signed_urls(dense)
    assert used == ["_spans_at_equals", "_spans_by_name"]


def _masked_text(url: str) -> str:
    """The URL's text as the scrubbed body decodes to it."""
    return str(orjson.loads(scrub_signed_urls(orjson.dumps(url))))


def _written(url: str, how: str) -> bytes:
    """A page body holding ``url`` written one way: plain, ``&`` as ``\\u0026``, ``/`` as
    ``\\/``, or inside a JSON text embedded in a string."""
    if how == "plain":
        return orjson.dumps({"url": url, "other": "text"})
    if how == "u0026":
        return orjson.dumps({"url": url}).replace(b"&", b"\\u0026")
    if how == "slash":
        return orjson.dumps({"url": url}).replace(b"/", b"\\/")
    return orjson.dumps({"text": orjson.dumps({"url": url}).decode()})


@pytest.mark.parametrize("how", ["plain", "u0026", "slash", "embedded"])
@pytest.mark.parametrize("url", [URL, S3])
def test_signed_urls_reads_the_url_as_received_by_its_masked_text(url: str, how: str) -> None:
    """Each way of writing a URL gives back the URL as received under its masked text."""
    body = _written(url, how)
    assert orjson.loads(body) != orjson.loads(scrub_signed_urls(body))
    assert scrub.signed_urls([body]) == {_masked_text(url): url}


def test_signed_urls_reads_escapes_and_refuses_what_it_cannot_tell() -> None:
    """Two signatures of one URL are ambiguous (None); any JSON escape is read; a URL inside
    a longer string is not a URL of the table (the whole string is its entry)."""
    other = URL.replace("abcDEF", "zzz")
    table = scrub.signed_urls([_written(URL, "plain"), _written(other, "plain")])
    assert table == {_masked_text(URL): None}
    accented = URL.replace("/a/", "/\u00e9t\u00e9/")
    escaped = orjson.dumps({"url": accented}).replace("\u00e9".encode(), b"\\u00e9")
    assert scrub.signed_urls([escaped]) == {_masked_text(accented): accented}
    prose = f"see {URL} and\nmore"
    assert scrub.signed_urls([orjson.dumps({"u": prose})]) == {_masked_text(prose): prose}


_URL_CHARS = st.sampled_from([*"abcXYZ019-._~%+=&/?:", "\u00e9", "\n", '"', "\\"])


def _stored_url(body: bytes, how: str) -> str:
    """The URL's text in the scrubbed body, as the decode reads it."""
    value = orjson.loads(scrub_signed_urls(body))
    return str(orjson.loads(value["text"])["url"] if how == "embedded" else value["url"])


@given(
    st.lists(st.text(_URL_CHARS, min_size=1, max_size=40), min_size=1, max_size=4),
    st.sampled_from(["plain", "u0026", "slash", "embedded"]),
)
def test_a_stored_url_maps_only_to_a_url_received_with_that_stored_text(
    tails: list[str], how: str
) -> None:
    """Whatever the URLs: the table gives a stored URL either nothing or a URL as received
    whose scrubbed body reads as exactly that stored text (never another URL)."""
    urls = [f"https://cdn.test/f?Expires=1&Signature={t}&Key-Pair-Id=K" for t in tails]
    bodies = [_written(u, how) for u in urls]
    stored = [_stored_url(body, how) for body in bodies]
    table = scrub.signed_urls(bodies)
    for text in stored:
        got = table.get(text)
        if got is not None:
            assert got in {u for u, s in zip(urls, stored, strict=True) if s == text}
