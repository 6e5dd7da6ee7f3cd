"""Security: no secret reaches a file, no hostile name leaves the root, no cookie follows a
redirect to another host.

- After a full run (session cookie rotating mid-run), every byte under the archive (thread
  folders, ``index/`` with the SQLite database and its WAL, logs, asset manifests) is searched
  for every session token value the server issued and for signed-URL signatures.
- Hypothesis throws hostile titles, account names, modes, uuids and asset names at
  ``core/layout``, ``shell/assets.file_stem``, ``fsutil.safe_join`` and the store's own path
  builders: every path lands inside the archive root or is refused with ``StoreError``.
- ``ApiClient`` answering a 302 to another host does not follow it, and the CDN downloader
  (which follows redirects) never sends a cookie or an authorization header anywhere.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pplx_archiver.core.thread.layout import safe_component, thread_dir_name
from pplx_archiver.errors import FetchError, StoreError
from pplx_archiver.settings import Settings
from pplx_archiver.shell.archive.assets import file_stem
from pplx_archiver.shell.archive.fsutil import safe_join
from pplx_archiver.shell.archive.store import Archive
from pplx_archiver.shell.net.download import CdnDownloader
from pplx_archiver.shell.net.http import ApiClient
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.runner import serve_in_thread
from pplx_archiver.sim.sessions import token_for
from tests.reliability.conftest import run_cli, sim_args, sim_get, size

# A real signature value; the archiver masks them as REDACTED.
SIGNATURE = re.compile(rb"(?i)(Signature|X-Amz-Signature|Key-Pair-Id)=(?!REDACTED)[^&\"\s]{6,}")


@dataclasses.dataclass(frozen=True)
class FullRun:
    """An archive after a full run, with every token value the server issued during it."""

    out: Path
    tokens: tuple[bytes, ...]
    output: str


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FullRun]:
    """One batch over loopback with a session cookie that rotates every 25 requests."""
    config = SimConfig(threads=size(40, 400), rotate_session_every=25)
    out = tmp_path_factory.mktemp("secrun") / "archive"
    config_dir = out.parent / "config"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PPLX_CONFIG_DIR", str(config_dir))
        with serve_in_thread(config) as sim:
            args = ["batch", *sim_args(sim, out, "--concurrency", "4", "--rate", "1000")]
            result = run_cli(args, out)
            stats = sim_get(sim, "/__sim/stats")
    structlog.reset_defaults()
    assert result.exit_code == 0, result.output
    assert stats["requests"].get("cdn", 0) > 0  # signed URLs were fetched
    assert [e for e in result.events if e["event"] == "SESSION_COOKIE_ROTATED"]
    generations = stats["total_requests"] // config.rotate_session_every + 2
    tokens = tuple(token_for(config.seed, g).encode() for g in range(generations))
    assert sim.session_token.encode() in tokens
    yield FullRun(out, tokens, result.output)


def _files(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if p.is_file()]


def test_no_session_token_in_any_archive_file_log_or_output(full_run: FullRun) -> None:
    """No token value the server issued (original or rotated) is in any file under out/."""
    secrets = [*full_run.tokens, *(t.split(b"..", 1)[1] for t in full_run.tokens)]
    files = _files(full_run.out)
    assert any(p.name == "manifest.json" for p in files)
    assert any(p.suffix == ".jsonl" and p.parent.name == "logs" for p in files)
    assert any(p.name == "archive.sqlite" for p in files)
    for path in files:
        data = path.read_bytes()
        leaked = [s[:12] for s in secrets if s in data]
        assert not leaked, (path, leaked)
    assert not [t for t in full_run.tokens if t.decode() in full_run.output]


def test_no_url_signature_in_logs_index_or_asset_manifests(full_run: FullRun) -> None:
    """Logs, the index (SQLite, registry) and assets/manifest.json hold no URL signature."""
    checked = [
        p
        for p in _files(full_run.out)
        if p.relative_to(full_run.out).parts[0] == "index" or p.name == "manifest.json"
    ]
    assert len(checked) > 3
    for path in checked:
        found = SIGNATURE.search(path.read_bytes())
        assert not found, (path, found)


def test_no_url_signature_in_thread_folders(full_run: FullRun) -> None:
    """Thread folders (raw files, Markdown, thread.json) hold no signed-URL signature."""
    for path in _files(full_run.out):
        if path.relative_to(full_run.out).parts[0] == "index":
            continue
        found = SIGNATURE.search(path.read_bytes())
        assert not found, (path, found)


HOSTILE = st.one_of(
    st.text(max_size=300),
    st.sampled_from(
        [
            "..",
            ".",
            "../../etc/passwd",
            "/abs/path",
            "a/b\\c",
            "C:\\Windows",
            "c:evil",
            "CON",
            "nul.txt",
            "\x00nul",
            "~",
            "\u202e\u0000..",
            "..\u2215..",
            ".." + "/" * 50,
            "é" * 400,
            "\n\r\t",
            "",
            " ",
        ]
    ),
    st.lists(st.sampled_from(["..", "/", "\\", ".", "a", "\x00", "~", ":"]), max_size=20).map(
        "".join
    ),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Archive]:
    """One archive store for the whole property (an index per example would dominate)."""
    archive = Archive(tmp_path_factory.mktemp("sec") / "archive")
    yield archive
    archive.close()


def _inside(root: Path, path: Path) -> bool:
    resolved = path.resolve()
    base = root.resolve()
    return resolved == base or resolved.is_relative_to(base)


@settings(max_examples=size(150, 3000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    account=HOSTILE,
    mode=HOSTILE,
    title=HOSTILE,
    uuid=HOSTILE,
    asset=HOSTILE,
    date=st.sampled_from(["2026-01-02", "../../..", "", "2026-01-02/.."]),
)
def test_hostile_names_never_leave_the_archive_root(
    store: Archive, account: str, mode: str, title: str, uuid: str, asset: str, date: str
) -> None:
    """Hostile account, mode, title, uuid and asset names give paths inside the root or none."""
    root = store.out
    for part in (safe_component(account), safe_component(title), file_stem(asset)):
        assert part and "/" not in part and "\\" not in part and part not in (".", "..")
    dir_name = thread_dir_name(mode, date, title, uuid)
    try:
        rel = store.thread_rel_path(account, dir_name)
        folder = store.folder(rel)
        asset_path = safe_join(folder, "assets", f"{file_stem(asset)}.v1.bin")
    except StoreError:
        return
    assert _inside(root, folder) and _inside(folder, asset_path)
    assert folder != root.resolve() and len(folder.relative_to(root).parts) == 3
    for hostile in (account, title, asset):
        try:
            joined = safe_join(root, hostile)
        except StoreError:
            continue
        assert _inside(root, joined)


def test_safe_join_refuses_a_symlink_out_of_the_root(tmp_path: Path) -> None:
    """A symlink inside the root that points outside is refused by the confined join."""
    root = tmp_path / "root"
    (root / "acct").mkdir(parents=True)
    (root / "acct" / "mode").symlink_to(tmp_path)
    try:
        safe_join(root, "acct", "mode", "x")
    except StoreError as exc:
        assert "outside" in str(exc)
    else:
        raise AssertionError("a symlink out of the root was followed")


def _settings(**kw: object) -> Settings:
    return Settings(base_url="https://api.example", **kw)  # type: ignore[arg-type]


def test_api_redirect_to_another_host_is_not_followed_and_carries_no_cookie() -> None:
    """A 302 from the API to another host is refused; that host never sees the session."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "api.example":
            return httpx.Response(302, headers={"location": "https://evil.example/steal?x=1"})
        return httpx.Response(200, json={"ok": True})

    async def go() -> None:
        client = ApiClient(
            _settings(), cookies={"__Secure-next-auth.session-token": "tok-SECRET-123"},
            transport=httpx.MockTransport(handler),
        )  # fmt: skip
        async with client:
            try:
                await client.get_json("/rest/thread/abc")
            except FetchError as exc:
                assert "redirect" in str(exc) and "SECRET" not in str(exc)
            else:
                raise AssertionError("the redirect was followed")

    anyio.run(go)
    assert seen and {r.url.host for r in seen} == {"api.example"}
    assert all("tok-SECRET-123" in r.headers.get("cookie", "") for r in seen)


def test_cdn_redirect_chain_never_carries_cookies_or_authorization(tmp_path: Path) -> None:
    """The CDN downloader follows a cross-host redirect chain (between asset stores) without
    any credential header."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "d1.cloudfront.net":
            return httpx.Response(
                302,
                headers={
                    "location": "https://bucket.s3.amazonaws.com/f?Signature=abc",
                    "set-cookie": "sess=stolen; Domain=amazonaws.com",
                },
            )
        if request.url.host == "bucket.s3.amazonaws.com":
            return httpx.Response(307, headers={"location": "https://files.perplexity.ai/f"})
        return httpx.Response(200, content=b"payload")

    async def go() -> bytes:
        async with CdnDownloader(transport=httpx.MockTransport(handler)) as cdn:
            url = "https://d1.cloudfront.net/f?Signature=s1&Expires=9"
            got = await cdn.download(url, tmp_path / "f")
            return got.path.read_bytes()

    assert anyio.run(go) == b"payload"
    hosts = [r.url.host for r in seen]
    assert hosts == ["d1.cloudfront.net", "bucket.s3.amazonaws.com", "files.perplexity.ai"]
    for request in seen:
        assert "cookie" not in request.headers and "authorization" not in request.headers
