"""Retries wait exactly as the policy says, honour Retry-After, stay bounded and log events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from typing import Any

import httpx
import pytest
import structlog
import tenacity

from pplx_archiver.errors import (
    ChallengeAbort,
    ChallengeError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    SessionExpiredError,
    TerminalThreadError,
    TransientError,
)
from pplx_archiver.shell.net.ratelimit import RateLimiter
from pplx_archiver.shell.net.retry import Retrier, RetryPolicy
from tests.shell.fake_time import StepTime
from tests.shell.helpers import json_response, make_client


def _retrier(
    t: StepTime, policy: RetryPolicy | None = None, rand: float = 0.0, rate: float = 100.0
) -> Retrier:
    limiter = RateLimiter(rate, 100, clock=t.clock, sleep=t.sleep)
    return Retrier(policy or RetryPolicy(), limiter, sleep=t.sleep, rand=lambda: rand)


def _script(*outcomes: BaseException | str) -> tuple[Callable[[], Awaitable[str]], list[int]]:
    """A request function failing/succeeding in order; returns it and its call counter."""
    it: Iterator[BaseException | str] = iter(outcomes)
    calls = [0]

    async def fn() -> str:
        calls[0] += 1
        outcome = next(it)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return fn, calls


def _events(logs: Sequence[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e["event"] == name]


async def test_transient_errors_back_off_exponentially_then_succeed() -> None:
    """Transient failures wait 1 s, 2 s, 4 s (no jitter) and the call then succeeds."""
    t = StepTime()
    r = _retrier(t)
    fn, calls = _script(*(TransientError("x", status=502, url="/p") for _ in range(3)), "ok")
    with structlog.testing.capture_logs() as logs:
        assert await r.call(fn, path="/rest/thread/abc") == "ok"
    assert calls[0] == 4
    assert t.sleeps == [1.0, 2.0, 4.0]
    retry = _events(logs, "REQUEST_RETRY")
    assert [e["attempt"] for e in retry] == [1, 2, 3]
    assert [e["wait_s"] for e in retry] == [1.0, 2.0, 4.0]
    assert retry[0]["path"] == "/rest/thread/abc"
    assert retry[0]["error"] == "transient" and retry[0]["status"] == 502
    assert r.retries == 3


async def test_jitter_is_added_and_backoff_is_capped() -> None:
    """The random part adds up to `jitter` seconds, and no wait exceeds backoff_max."""
    t = StepTime()
    policy = RetryPolicy(backoff_initial=4.0, backoff_max=10.0, jitter=2.0, max_attempts=5)
    r = _retrier(t, policy, rand=0.5)
    fn, _ = _script(*(TransientError("x") for _ in range(3)), "ok")
    await r.call(fn, path="/p")
    assert t.sleeps == [5.0, 9.0, 10.0]


async def test_attempts_are_bounded() -> None:
    """After max_attempts the last error is raised, not a tenacity wrapper."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(max_attempts=3))
    fn, calls = _script(*(TransientError(f"fail {i}") for i in range(5)))
    with pytest.raises(TransientError, match="fail 2"):
        await r.call(fn, path="/p")
    assert calls[0] == 3


async def test_total_retry_time_is_bounded() -> None:
    """A retry whose wait would pass max_retry_seconds is not made."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(max_retry_seconds=2.5))
    fn, calls = _script(*(TransientError("x") for _ in range(5)))
    with pytest.raises(TransientError):
        await r.call(fn, path="/p")
    assert calls[0] == 2 and t.sleeps == [1.0]


async def test_retry_after_is_honoured_and_throttles_the_limiter() -> None:
    """A 429 waits exactly Retry-After, logs RATE_LIMITED and halves the account-wide rate."""
    t = StepTime()
    r = _retrier(t, rate=4.0)
    fn, _ = _script(RateLimitedError("429", retry_after=12.0), "ok")
    with structlog.testing.capture_logs() as logs:
        await r.call(fn, path="/rest/thread/abc")
    assert t.sleeps == [12.0]
    assert r.limiter.rate == 2.0
    limited = _events(logs, "RATE_LIMITED")
    assert len(limited) == 1
    assert limited[0]["retry_after"] == 12.0 and limited[0]["pause_s"] == 12.0
    assert _events(logs, "REQUEST_RETRY")[0]["error"] == "rate_limited"
    assert r.rate_limited == 1


async def test_429_without_hint_waits_for_the_limiter_backoff() -> None:
    """Without Retry-After the retry resumes when the limiter's growing pause ends."""
    t = StepTime()
    r = _retrier(t)
    fn, _ = _script(
        RateLimitedError("429", retry_after=None), RateLimitedError("429", retry_after=None), "ok"
    )
    await r.call(fn, path="/p")
    assert t.sleeps == [5.0, 10.0]


async def test_not_found_is_retried_a_few_times_only() -> None:
    """404 is retried (new threads 404 briefly) but gives up after not_found_attempts."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(not_found_attempts=3))
    fn, calls = _script(*(NotFoundError("404", status=404) for _ in range(6)))
    with pytest.raises(NotFoundError):
        await r.call(fn, path="/p")
    assert calls[0] == 3


@pytest.mark.parametrize(
    "error",
    [
        TerminalThreadError("gone", state="deleted"),
        ForbiddenError("no", code="VIEW_THREAD_NOT_ALLOWED"),
    ],
)
async def test_terminal_answers_are_not_retried(error: Exception) -> None:
    """Terminal thread states and API 403s are raised at the first attempt."""
    t = StepTime()
    r = _retrier(t)
    fn, calls = _script(error, "ok")
    with pytest.raises(type(error)):
        await r.call(fn, path="/p")
    assert calls[0] == 1 and t.sleeps == []


async def test_challenges_pause_with_growing_backoff_then_abort() -> None:
    """Challenges pause everyone 15 s, 30 s …; the max_challenges-th stops the run with advice."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(max_challenges=3, max_attempts=10))
    fn, calls = _script(*(ChallengeError("cf", status=403) for _ in range(5)))
    with structlog.testing.capture_logs() as logs, pytest.raises(ChallengeAbort) as info:
        await r.call(fn, path="/rest/thread/abc")
    assert calls[0] == 3
    assert t.sleeps == [15.0, 30.0]
    message = str(info.value)
    assert "--rate" in message and "--impersonate chrome" in message and "cookies" in message
    challenge = _events(logs, "CLOUDFLARE_CHALLENGE")
    assert [e["challenges"] for e in challenge] == [1, 2, 3]
    assert [e["aborting"] for e in challenge] == [False, False, True]
    assert challenge[0]["pause_s"] == 15.0


async def test_challenge_count_is_per_run_not_per_request() -> None:
    """Challenges on different requests add up toward the abort."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(max_challenges=2))
    fn, _ = _script(ChallengeError("cf"), "ok")
    await r.call(fn, path="/a")
    fn2, _ = _script(ChallengeError("cf"), "ok")
    with pytest.raises(ChallengeAbort):
        await r.call(fn2, path="/b")


async def test_session_rejections_abort_after_a_few_in_a_row() -> None:
    """A 401 is never retried; isolated ones fail the request, the third in a row aborts."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(max_auth_failures=3))
    for _ in range(2):
        fn, calls = _script(SessionExpiredError("401"), "ok")
        with pytest.raises(ForbiddenError) as info:
            await r.call(fn, path="/rest/thread/x")
        assert info.value.code == "SESSION_REJECTED" and calls[0] == 1
    with structlog.testing.capture_logs() as logs:
        fn, _ = _script(SessionExpiredError("401"))
        with pytest.raises(SessionExpiredError):
            await r.call(fn, path="/rest/thread/x")
    assert _events(logs, "AUTH_FAILED")[0]["failures_in_row"] == 3
    assert t.sleeps == []


async def test_success_resets_the_auth_failure_run() -> None:
    """A success between rejections restarts the count."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(max_auth_failures=2))
    fn, _ = _script(SessionExpiredError("401"))
    with pytest.raises(ForbiddenError):
        await r.call(fn, path="/p")
    ok, _ = _script("ok")
    await r.call(ok, path="/p")
    fn, _ = _script(SessionExpiredError("401"))
    with pytest.raises(ForbiddenError):
        await r.call(fn, path="/p")


async def test_auth_fatal_calls_abort_at_once() -> None:
    """Probe and listing calls treat the first rejection as the end of the session."""
    t = StepTime()
    r = _retrier(t)
    fn, _ = _script(SessionExpiredError("401"))
    with pytest.raises(SessionExpiredError):
        await r.call(fn, path="/api/auth/session", auth_fatal=True)


async def test_client_retries_through_the_seam() -> None:
    """End to end in the client: 503, then 429 with Retry-After, then success."""
    answers = [
        httpx.Response(503),
        httpx.Response(429, headers={"retry-after": "3"}),
        json_response({"ok": True}),
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        return answers.pop(0)

    t = StepTime()
    async with make_client(handler, time=t) as client:
        decoded, raw = await client.get_json("/rest/thread/abc")
        stats = client.stats()
    assert decoded == {"ok": True} and raw == b'{"ok":true}'
    assert t.sleeps == [1.0, 3.0]
    assert (stats.retries, stats.rate_limited, stats.requests) == (2, 1, 3)
    assert stats.limiter.throttles == 1


async def test_a_request_that_succeeds_at_once_builds_no_retry_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first attempt runs alone (building the retry loop cost a tenth of a request's
    CPU); a retryable failure then enters the loop as its first attempt, as if the loop had
    made it: with one attempt allowed, that error is raised with no wait and no retry."""
    t = StepTime()
    r = _retrier(t, RetryPolicy(max_attempts=1))
    built: list[int] = []
    real = tenacity.AsyncRetrying

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(tenacity, "AsyncRetrying", counting)
    fn, calls = _script("ok", TransientError("only once", status=503))
    assert await r.call(fn, path="/p") == "ok"
    assert built == [] and calls[0] == 1
    with structlog.testing.capture_logs() as logs, pytest.raises(TransientError, match="only"):
        await r.call(fn, path="/p")
    assert built == [1] and calls[0] == 2 and t.sleeps == []
    assert _events(logs, "REQUEST_RETRY") == [] and r.retries == 0
