"""The retry policy of API requests, as data, and the retrier that applies it with tenacity.

What is retried: :class:`~pplx_archiver.errors.TransientError` (5xx, timeouts, connection
errors, truncated or non-JSON bodies), :class:`~pplx_archiver.errors.RateLimitedError`
(429 / ``RATE_LIMITED``), :class:`~pplx_archiver.errors.ChallengeError` (Cloudflare) and,
a few times only, :class:`~pplx_archiver.errors.NotFoundError` (new threads 404 briefly).
Everything else (terminal thread states, API 403s, other 4xx) is raised at once.

How long to wait: jittered exponential backoff (``backoff_initial × 2^(n-1)`` plus up to
``jitter`` seconds, capped at ``backoff_max``) for transient errors; for a 429 the refused
request waits its own ``Retry-After`` (or the limiter's growing backoff) while the
:class:`~pplx_archiver.shell.net.ratelimit.RateLimiter` slows every worker to the limit it learnt;
for a challenge the wait is the account-wide pause set on the limiter (the challenge backoff),
so the retry resumes exactly when every other worker does. Attempts are bounded by
``max_attempts`` and the total waiting by ``max_retry_seconds``.

Run-level stops: the ``max_challenges``-th challenge of the run raises
:class:`~pplx_archiver.errors.ChallengeAbort`; a session rejected (401 / JSON 403)
``max_auth_failures`` times in a row raises :class:`~pplx_archiver.errors.SessionExpiredError`
(an isolated rejection of one thread request is raised as a ``ForbiddenError`` with code
``SESSION_REJECTED`` instead, unless the call says auth failures are fatal).

Events: ``REQUEST_RETRY`` (``HOST_UNREACHABLE``, a warning, for a host that cannot be
reached), ``RATE_LIMITED``, ``CLOUDFLARE_CHALLENGE``, ``AUTH_FAILED``.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import anyio
import tenacity

from pplx_archiver.errors import (
    ChallengeAbort,
    ChallengeError,
    ConnectionFailedError,
    FetchError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    SessionExpiredError,
    TransientError,
)
from pplx_archiver.logconfig import get_logger
from pplx_archiver.settings import Settings
from pplx_archiver.shell.net.ratelimit import RateLimiter, Sleep

T = TypeVar("T")

REQUEST_RETRY = "REQUEST_RETRY"
HOST_UNREACHABLE = "HOST_UNREACHABLE"
RATE_LIMITED = "RATE_LIMITED"
CLOUDFLARE_CHALLENGE = "CLOUDFLARE_CHALLENGE"
AUTH_FAILED = "AUTH_FAILED"

RETRYABLE: tuple[type[FetchError], ...] = (
    TransientError,
    RateLimitedError,
    ChallengeError,
    NotFoundError,
)

_KINDS: tuple[tuple[type[FetchError], str], ...] = (
    (RateLimitedError, "rate_limited"),
    (ChallengeError, "challenge"),
    (NotFoundError, "not_found"),
    (TransientError, "transient"),
    (ForbiddenError, "forbidden"),
)


def error_kind(exc: BaseException) -> str:
    """A short snake_case name of the failure for log fields and counters."""
    for cls, name in _KINDS:
        if isinstance(exc, cls):
            return name
    return type(exc).__name__


def challenge_abort_message(count: int) -> str:
    """The explanation printed when the run stops because Cloudflare kept challenging."""
    return (
        f"Cloudflare challenged {count} requests in this run, so the run stopped instead of "
        "risking a block. What you can do: (1) go slower, e.g. `--rate 0.5 --concurrency 2`; "
        "(2) refresh your cookies: open perplexity.ai in your browser, make sure you are "
        "logged in, export the cookies again (including cf_clearance) and pass them with "
        "`--cookies FILE` or store them with `pplx-export auth save --cookies FILE`; "
        "(3) send requests with a browser TLS fingerprint: "
        "`pip install 'pplx-archiver[impersonate]'` and add `--impersonate chrome`. "
        "Threads already archived are kept; the next run continues where this one stopped."
    )


@dataclasses.dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long a request is retried; built from :class:`Settings`."""

    max_attempts: int = 6
    max_retry_seconds: float = 300.0
    backoff_initial: float = 1.0
    backoff_max: float = 60.0
    jitter: float = 1.0
    not_found_attempts: int = 3
    max_challenges: int = 5
    challenge_backoff_initial: float = 15.0
    challenge_backoff_max: float = 300.0
    max_auth_failures: int = 3

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        """The policy of a run: attempts, total time and challenge budget from the settings."""
        return cls(
            max_attempts=settings.max_attempts,
            max_retry_seconds=settings.max_retry_seconds,
            max_challenges=settings.max_challenges,
        )

    def backoff(self, attempt: int, rand: float) -> float:
        """Wait before retry number ``attempt`` (1-based) given a random number in [0, 1)."""
        base = self.backoff_initial * 2 ** (attempt - 1)
        return float(min(self.backoff_max, base + self.jitter * rand))

    def challenge_backoff(self, count: int) -> float:
        """Account-wide pause after the ``count``-th challenge of the run (doubling, capped)."""
        return float(
            min(self.challenge_backoff_max, self.challenge_backoff_initial * 2 ** (count - 1))
        )


class Retrier:
    """Applies a :class:`RetryPolicy` to request coroutines and keeps the run's counters."""

    def __init__(
        self,
        policy: RetryPolicy,
        limiter: RateLimiter,
        *,
        sleep: Sleep = anyio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy
        self.limiter = limiter
        self._sleep = sleep
        self._rand = rand
        self._log = get_logger()
        self.retries = 0
        self.rate_limited = 0
        self.challenges = 0
        self.auth_failures_in_row = 0
        self._waits: dict[int, float] = {}  # id(429 error) → the wait on_rate_limited gave

    async def call(
        self,
        fn: Callable[[], Awaitable[T]],
        *,
        path: str,
        auth_fatal: bool = False,
        attempts: int | None = None,
    ) -> T:
        """Run ``fn`` (one request, already rate-limited inside) under the retry policy.

        The first attempt runs alone: most requests succeed at once, and building the retry
        loop for each cost a fifth or more of a request's CPU (bench_http.py). On a retryable error,
        the loop starts with that very failure as its first attempt, so attempts, waits,
        stops and ``REQUEST_RETRY`` lines are those of a loop that made it. ``attempts``
        caps the attempts of this call below the policy's (a question the next run may ask
        again, such as the deletion check's).
        """
        try:
            return await self._attempt(fn, path, auth_fatal)
        except RETRYABLE as exc:
            first: BaseException | None = exc

        async def attempt() -> T:
            nonlocal first
            if first is not None:
                failed, first = first, None
                raise failed
            return await self._attempt(fn, path, auth_fatal)

        def stop(state: tenacity.RetryCallState) -> bool:
            return self._stop(state) or (attempts is not None and state.attempt_number >= attempts)

        retrying = tenacity.AsyncRetrying(
            stop=stop,
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(RETRYABLE),
            before_sleep=lambda state: self._before_sleep(state, path),
            sleep=self._sleep,
            reraise=True,
        )
        result: T = await retrying(attempt)
        return result

    async def _attempt(self, fn: Callable[[], Awaitable[T]], path: str, auth_fatal: bool) -> T:
        try:
            result = await fn()
        except RateLimitedError as exc:
            self.rate_limited += 1
            pause = self.limiter.on_rate_limited(exc.retry_after)
            self._waits[id(exc)] = pause
            self._log.warning(
                RATE_LIMITED,
                path=path,
                status=exc.status,
                retry_after=exc.retry_after,
                pause_s=round(pause, 3),
                rate=round(self.limiter.rate, 4),
            )
            raise
        except ChallengeError as exc:
            self.challenges += 1
            abort = self.challenges >= self.policy.max_challenges
            pause = 0.0
            if not abort:
                pause = self.limiter.on_throttle(self.policy.challenge_backoff(self.challenges))
            self._log.warning(
                CLOUDFLARE_CHALLENGE,
                path=path,
                status=exc.status,
                challenges=self.challenges,
                max_challenges=self.policy.max_challenges,
                pause_s=round(pause, 3),
                aborting=abort,
            )
            if abort:
                raise ChallengeAbort(challenge_abort_message(self.challenges)) from exc
            raise
        except SessionExpiredError as exc:
            self.auth_failures_in_row += 1
            fatal = auth_fatal or self.auth_failures_in_row >= self.policy.max_auth_failures
            self._log.error(
                AUTH_FAILED,
                path=path,
                reason=str(exc),
                failures_in_row=self.auth_failures_in_row,
                aborting=fatal,
            )
            if fatal:
                raise
            raise ForbiddenError(str(exc), status=None, url=path, code="SESSION_REJECTED") from exc
        self.auth_failures_in_row = 0
        self.limiter.on_success()
        return result

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimitedError):
            # This request waits its own Retry-After (or a pause every worker is in).
            return max(self._waits.pop(id(exc), 0.0), self.limiter.pause_remaining())
        if isinstance(exc, ChallengeError):
            return self.limiter.pause_remaining()
        return self.policy.backoff(state.attempt_number, self._rand())

    def _unreachable(
        self, state: tenacity.RetryCallState, path: str, exc: ConnectionFailedError
    ) -> None:
        """A host that cannot be reached: a console line saying what is retried, and until
        when at the latest (the remaining attempts' longest waits, within the retry time)."""
        policy, attempt = self.policy, state.attempt_number
        wait = state.upcoming_sleep or 0.0
        later = sum(policy.backoff(n, 1.0) for n in range(attempt + 1, policy.max_attempts))
        left = max(0.0, policy.max_retry_seconds - state.idle_for)
        until = datetime.now(UTC) + timedelta(seconds=min(wait + later, left))
        self._log.warning(
            HOST_UNREACHABLE,
            host=exc.host or path,
            path=path,
            attempt=attempt,
            max_attempts=policy.max_attempts,
            wait_s=round(wait, 3),
            retry_until=until.strftime("%Y-%m-%dT%H:%M:%SZ"),
            message=f"cannot reach {exc.host or 'the server'} ({path}); attempt {attempt} of "
            f"{policy.max_attempts} failed, retrying in {wait:.0f} s, giving up by "
            f"{until:%H:%M:%S} UTC",
        )

    def _stop(self, state: tenacity.RetryCallState) -> bool:
        if state.attempt_number >= self.policy.max_attempts:
            return True
        exc = state.outcome.exception() if state.outcome else None
        if (
            isinstance(exc, NotFoundError)
            and state.attempt_number >= self.policy.not_found_attempts
        ):
            return True
        upcoming = state.upcoming_sleep or 0.0
        return state.idle_for + upcoming > self.policy.max_retry_seconds

    def _before_sleep(self, state: tenacity.RetryCallState, path: str) -> None:
        self.retries += 1
        exc: Any = state.outcome.exception() if state.outcome else None
        if isinstance(exc, ConnectionFailedError):
            self._unreachable(state, path, exc)
            return
        self._log.info(
            REQUEST_RETRY,
            path=path,
            attempt=state.attempt_number,
            wait_s=round(state.upcoming_sleep, 3),
            error=error_kind(exc),
            status=getattr(exc, "status", None),
        )
