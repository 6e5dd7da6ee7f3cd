"""The account-wide request budget: an adaptive (AIMD) token bucket every API request passes.

One :class:`RateLimiter` serves every worker of a run. :meth:`RateLimiter.acquire` waits for
a token (``rate`` tokens per second, at most ``burst`` saved up). When the server pushes back
(429 or a Cloudflare challenge) the caller reports it with :meth:`RateLimiter.on_throttle`:
the rate is cut multiplicatively (``× decrease``, never below ``floor``) and *every* waiter is
paused until ``now + retry_after`` (or a growing backoff when the server gave no hint); the
rate is cut once per pause (the other answers of the same episode were already in flight and
only extend the pause). After ``success_window`` successes in a row
:meth:`RateLimiter.on_success` raises the rate again by ``increase`` requests/s, up to the
configured ceiling; once a throttle came below the ceiling, steps that would pass 90 % of the
rate it came at are an eighth as large (the server's limit is about there: probing it gently
avoids a throttle every few seconds). The clock and the sleep are injected,
so tests drive the limiter in zero time and assert exact waits.

A 429 is answered by :meth:`RateLimiter.on_rate_limited` instead: it does not
pause everyone. The limiter *learns* the server's limit from the successes it saw in the last
``learn_window`` seconds — the rate the server actually granted — and continues just below
it; the refused request alone waits its ``Retry-After``. One cut per episode; just above the
learnt limit the rate is raised a small step (``increase / SLOW_STEPS``) about every
``GENTLE_SECONDS``, so probing costs a 429 now and then, not every few seconds. Once the rate
is ``BEYOND_LEARNT`` × the learnt limit with no 429, that limit was learnt too low (the
server's budget was spent on other requests, or the client asked for less than it allowed):
the steps double every ``success_window`` successes, up to ``increase``, so the limiter finds
the real limit within seconds instead of minutes. Only when 429s keep coming with no
success in between (``PAUSE_AFTER`` in a row) does it fall back to pausing every worker.
From the first 429 on, the bucket holds at most ``SMOOTH_SECONDS`` of the learnt rate (at least
``SMOOTH_MIN`` tokens) instead of the configured burst: at the server's limit the server's own
bucket is empty, so tokens saved up while the workers were busy elsewhere would go out together
and come back refused, one 429 per worker.
Without ``Retry-After`` the refused request backs off ``backoff_initial × 2^(n-1)``.

A second instance can serve another budget (CDN asset downloads) with its own numbers.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import time
from collections.abc import Awaitable, Callable

import anyio

Clock = Callable[[], float]

# Recovery near the rate of the last throttle below the ceiling: full steps up to NEAR_LIMIT
# of it, then steps of increase / SLOW_STEPS (probing for the server's limit gently).
NEAR_LIMIT = 0.9
SLOW_STEPS = 8
Sleep = Callable[[float], Awaitable[None]]
# A 429 sets the rate to LEARN_MARGIN × the rate the server granted recently; PAUSE_AFTER
# 429s in a row without a success pause every worker like a challenge does.
LEARN_MARGIN = 0.95
PAUSE_AFTER = 8
# Probing steps double once the rate passed BEYOND_LEARNT × the learnt limit without a 429.
BEYOND_LEARNT = 1.1
GENTLE_SECONDS = 4.0
# Once a limit is learnt, the burst is at most SMOOTH_SECONDS of the rate (SMOOTH_MIN tokens).
SMOOTH_SECONDS = 0.1
SMOOTH_MIN = 2.0
# A probing step near a learnt limit is PROBE_SHARE / SLOW_STEPS of it (increase / SLOW_STEPS
# at most).
PROBE_SHARE = 0.2
# A 429 that came while the client used less than `decrease` of its rate cuts the rate to at
# most UNBOUND_HEADROOM × the client's pace; the granted rate is measured over at least
# MIN_SPAN seconds (a burst granted at one instant is no rate).
UNBOUND_HEADROOM = 2.0
MIN_SPAN = 1.0


@dataclasses.dataclass(frozen=True, slots=True)
class LimiterSnapshot:
    """What the progress bar and the run summary show about the limiter."""

    rate: float
    ceiling: float
    paused_for: float
    acquired: int
    throttles: int
    pauses: int
    paused_seconds: float
    raises: int


class RateLimiter:
    """Token bucket with additive increase / multiplicative decrease, shared by all workers."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        floor: float = 0.1,
        decrease: float = 0.5,
        increase: float | None = None,
        success_window: int = 20,
        learn_window: float = 5.0,
        backoff_initial: float = 5.0,
        backoff_max: float = 120.0,
        clock: Clock = time.monotonic,
        sleep: Sleep = anyio.sleep,
    ) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be positive, got {rate}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        if not 0 < decrease < 1:
            raise ValueError(f"decrease must be between 0 and 1, got {decrease}")
        self._ceiling = float(rate)
        self._rate = float(rate)
        self._burst = float(burst)
        self._burst_max = float(burst)
        self._floor = min(float(floor), self._ceiling)
        self._decrease = decrease
        self._increase = increase if increase is not None else max(self._ceiling / 10, 0.05)
        self._success_window = success_window
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(burst)
        self._last = clock()
        self._paused_until = float("-inf")
        self._streak = 0
        self._throttled_at = self._ceiling  # rate when the last throttle episode began
        self._throttles_in_row = 0
        self._acquired = 0
        self._throttles = 0
        self._pauses = 0
        self._paused_seconds = 0.0
        self._raises = 0
        self._learn_window = learn_window
        self._granted: collections.deque[float] = collections.deque()
        self._learnt: float | None = None  # the server's limit as learnt from a 429
        self._episode_until = float("-inf")
        self._refused_in_row = 0
        self._slow_streak = 0
        self._probe_step = self._increase / SLOW_STEPS

    @property
    def rate(self) -> float:
        """Current allowed requests per second."""
        return self._rate

    @property
    def ceiling(self) -> float:
        """The configured rate; recovery never goes above it."""
        return self._ceiling

    def pause_remaining(self) -> float:
        """Seconds until the current pause ends (0 when not paused)."""
        return max(0.0, self._paused_until - self._clock())

    def snapshot(self) -> LimiterSnapshot:
        """Counters and the current rate, for progress display and the run summary."""
        return LimiterSnapshot(
            rate=self._rate,
            ceiling=self._ceiling,
            paused_for=self.pause_remaining(),
            acquired=self._acquired,
            throttles=self._throttles,
            pauses=self._pauses,
            paused_seconds=self._paused_seconds,
            raises=self._raises,
        )

    def _refill(self, now: float) -> None:
        if now > self._last:
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
            self._last = now

    async def acquire(self) -> None:
        """Wait until a request may be sent (honouring pauses), then take one token."""
        while True:
            now = self._clock()
            if now < self._paused_until:
                await self._sleep(self._paused_until - now)
                continue
            self._refill(now)
            if self._tokens >= 1.0 - self._rounding_slack(now):
                self._tokens = max(0.0, self._tokens - 1.0)
                self._acquired += 1
                return
            await self._sleep((1.0 - self._tokens) / self._rate)

    def _rounding_slack(self, now: float) -> float:
        """How far below one token float rounding can leave the bucket after a full wait.

        Sleeping exactly the missing ``(1 - tokens) / rate`` seconds can refill to 0.99999…
        (the clock's own rounding at its magnitude). The next wait is then below the clock's
        resolution: a clock that advances by exactly the requested wait (virtual time) never
        moves, and acquire would spin forever. That remainder is noise, not a missing token.
        """
        return min(0.01, max(1e-9, 4.0 * math.ulp(now) * self._rate))

    @property
    def learnt(self) -> float | None:
        """The server's limit as learnt from the last 429 episode (None before any)."""
        return self._learnt

    def on_success(self) -> None:
        """Count a success; after a run of them, raise the rate additively up to the ceiling."""
        self._throttles_in_row = 0
        self._refused_in_row = 0
        now = self._clock()
        granted = self._granted
        granted.append(now)
        while granted and granted[0] < now - self._learn_window:
            granted.popleft()
        self._streak += 1
        if self._learnt is not None and self._rate >= self._learnt:
            self._probe(now)
            return
        if self._streak >= self._success_window and self._rate < self._ceiling:
            self._refill(self._clock())
            step = self._increase
            if self._throttled_at < self._ceiling and self._rate + step > (
                self._throttled_at * NEAR_LIMIT
            ):
                # The server pushed back below the ceiling: that rate is about its limit, so
                # approach it in small steps instead of overshooting it every few seconds.
                step = self._increase / SLOW_STEPS
            self._rate = min(self._ceiling, self._rate + step)
            self._raises += 1
            self._streak = 0

    def _probe(self, now: float) -> None:
        """Above the learnt limit: small steps near it, doubling ones well past it.

        Up to ``BEYOND_LEARNT`` × the learnt limit a step of ``increase / SLOW_STEPS`` comes
        about every ``GENTLE_SECONDS`` (at most ``success_window × SLOW_STEPS`` successes):
        the limit is about there. Past it, with still no 429, the limit was learnt too low
        (the server's budget was shared, or the client asked for less than it allowed): a
        step every ``success_window`` successes, each twice the last, up to ``increase``.
        """
        self._streak = 0
        self._slow_streak += 1
        beyond = self._learnt is not None and self._rate > self._learnt * BEYOND_LEARNT
        needed = self._success_window
        if not beyond:  # about one step per GENTLE_SECONDS, however low the learnt rate
            needed = max(needed, min(needed * SLOW_STEPS, round(self._rate * GENTLE_SECONDS)))
        if self._slow_streak < needed:
            return
        self._slow_streak = 0
        if self._rate >= self._ceiling:
            return
        self._refill(now)
        self._rate = min(self._ceiling, self._rate + self._probe_step)
        self._smooth()
        if beyond:
            # Well past the limit learnt, and still granted: that limit was too low.
            self._probe_step = min(self._increase, self._rate, self._probe_step * 2)
        self._raises += 1

    def _smooth(self) -> None:
        """Near a learnt limit, save up at most ``SMOOTH_SECONDS`` of the rate."""
        self._burst = min(self._burst_max, max(SMOOTH_MIN, self._rate * SMOOTH_SECONDS))
        self._tokens = min(self._tokens, self._burst)

    def on_throttle(self, retry_after: float | None = None) -> float:
        """Cut the rate and pause every waiter; returns the seconds until the pause ends.

        ``retry_after`` is the server's hint; without one the pause is a backoff that doubles
        with each throttle in a row (``backoff_initial`` … ``backoff_max``). When the bucket
        resumes, one request may go at once (a probe), then the reduced rate applies.
        """
        now = self._clock()
        self._refill(now)
        self._throttles += 1
        self._streak = 0
        if now >= self._paused_until:
            # One cut and one backoff step per episode: answers to requests already in
            # flight when the first throttle of a pause arrived say nothing new (counting
            # each of them doubled the pause per in-flight request, up to ``backoff_max``).
            self._throttles_in_row += 1
            self._throttled_at = self._rate
            self._rate = max(self._floor, self._rate * self._decrease)
        if retry_after is not None and retry_after >= 0:
            pause = float(retry_after)
        else:
            pause = min(
                self._backoff_max, self._backoff_initial * 2 ** (self._throttles_in_row - 1)
            )
        until = now + pause
        if until > self._paused_until:
            previous_end = max(self._paused_until, now)
            self._paused_seconds += until - previous_end
            self._paused_until = until
            self._pauses += 1
            self._tokens = 1.0
            self._last = until
        return self._paused_until - now

    def granted_rate(self) -> float | None:
        """Successes per second over the learning window (None with too few to tell)."""
        now = self._clock()
        granted = self._granted
        while granted and granted[0] < now - self._learn_window:
            granted.popleft()
        if len(granted) < self._success_window:
            return None
        span = max(now - granted[0], 1.0 / self._rate, MIN_SPAN)
        return (len(granted) - 1) / span if span > 0 else None

    def on_rate_limited(self, retry_after: float | None = None) -> float:
        """React to a 429 without pausing everyone; returns how long the refused request waits.

        The first 429 of an episode sets the rate just below what the server granted over the
        learning window (or cuts it by ``decrease`` when too few successes were seen) and
        empties the bucket; the 429s of requests already in flight add nothing. The refused
        request waits ``retry_after`` when the server gave it, else a backoff that doubles with
        each 429 in a row (``backoff_initial`` … ``backoff_max``). After
        ``PAUSE_AFTER`` 429s with no success between, this becomes :meth:`on_throttle`.
        """
        now = self._clock()
        self._refill(now)
        self._throttles += 1
        self._refused_in_row += 1
        self._streak = 0
        self._slow_streak = 0
        if self._refused_in_row >= PAUSE_AFTER:
            self._refused_in_row = 0
            self._throttles -= 1  # counted again by on_throttle
            return self.on_throttle(retry_after)
        if now >= self._episode_until:
            granted = self.granted_rate()
            if granted is None:
                target = self._rate * self._decrease
            elif granted >= self._rate * self._decrease:
                target = min(self._rate, granted) * LEARN_MARGIN
            else:
                # Far fewer successes than the rate allowed: the client itself was the bound
                # (a burst of it was refused), so its pace is no measure of the server's
                # limit; cut the rate, to at most UNBOUND_HEADROOM × that pace.
                target = min(self._rate * self._decrease, granted * UNBOUND_HEADROOM)
            self._throttled_at = self._rate
            self._rate = max(self._floor, min(self._ceiling, target))
            self._learnt = self._rate
            # Probing steps are a share of the limit learnt, whatever the ceiling.
            self._probe_step = min(self._increase, self._rate * PROBE_SHARE) / SLOW_STEPS
            self._smooth()
            self._tokens = 0.0
            self._last = now
            self._episode_until = now + max(1.0, 2.0 / self._rate)
        if retry_after is not None and retry_after >= 0:
            return float(retry_after)
        return float(
            min(self._backoff_max, self._backoff_initial * 2 ** (self._refused_in_row - 1))
        )
