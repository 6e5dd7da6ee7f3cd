"""The account-wide limiter paces requests exactly, pauses everyone on throttle and recovers."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import pytest

from pplx_archiver.shell.net.ratelimit import RateLimiter
from pplx_archiver.shell.net.window import ConcurrencyWindow
from tests.shell.fake_time import StepTime, VirtualTime


def _limiter(
    t: StepTime | VirtualTime, rate: float = 2.0, burst: int = 2, **kw: Any
) -> RateLimiter:
    return RateLimiter(rate, burst, clock=t.clock, sleep=t.sleep, **kw)


async def test_burst_then_steady_rate() -> None:
    """A full bucket lets `burst` requests through at once, then one per 1/rate seconds."""
    t = StepTime()
    lim = _limiter(t, rate=2.0, burst=2)
    start = t.now
    times = []
    for _ in range(5):
        await lim.acquire()
        times.append(t.now - start)
    assert times == [0.0, 0.0, 0.5, 1.0, 1.5]
    assert lim.snapshot().acquired == 5


async def test_idle_time_refills_up_to_burst_only() -> None:
    """After a long idle period the bucket holds `burst` tokens, not more."""
    t = StepTime()
    lim = _limiter(t, rate=1.0, burst=3)
    for _ in range(3):
        await lim.acquire()
    t.now += 100.0
    start = t.now
    for _ in range(4):
        await lim.acquire()
    assert t.now - start == pytest.approx(1.0)


async def test_throttle_cuts_rate_and_pauses_for_retry_after() -> None:
    """on_throttle halves the rate and the next acquire waits exactly Retry-After."""
    t = StepTime()
    lim = _limiter(t, rate=4.0, burst=1)
    await lim.acquire()
    pause = lim.on_throttle(7.0)
    assert pause == 7.0
    assert lim.rate == 2.0
    start = t.now
    await lim.acquire()
    assert t.now - start == pytest.approx(7.0)
    await lim.acquire()
    assert t.now - start == pytest.approx(7.5)
    snap = lim.snapshot()
    assert (snap.throttles, snap.pauses, snap.paused_seconds) == (1, 1, 7.0)


async def test_throttle_without_hint_backs_off_doubling() -> None:
    """Without Retry-After the pause doubles with each throttle in a row, capped."""
    t = StepTime()
    lim = _limiter(t, rate=1.0, burst=1, backoff_initial=5.0, backoff_max=12.0)
    pauses = []
    for _ in range(3):
        pauses.append(lim.on_throttle(None))
        t.now += pauses[-1]
    assert pauses == [5.0, 10.0, 12.0]


async def test_rate_never_below_floor() -> None:
    """Repeated throttles stop cutting at the floor."""
    t = StepTime()
    lim = _limiter(t, rate=1.0, burst=1, floor=0.3)
    for _ in range(5):
        lim.on_throttle(0.0)
    assert lim.rate == 0.3


async def test_additive_recovery_up_to_ceiling() -> None:
    """A run of successes raises the rate by `increase`, never above the configured rate."""
    t = StepTime()
    lim = _limiter(t, rate=2.0, burst=1, increase=0.4, success_window=3)
    lim.on_throttle(0.0)
    assert lim.rate == 1.0
    for _ in range(2):
        lim.on_success()
    assert lim.rate == 1.0
    lim.on_success()
    assert lim.rate == pytest.approx(1.4)
    for _ in range(9):
        lim.on_success()
    assert lim.rate == 2.0
    assert lim.snapshot().raises == 3


async def test_throttle_resets_success_streak() -> None:
    """A throttle in the middle of a success run restarts the count."""
    t = StepTime()
    lim = _limiter(t, rate=2.0, burst=1, increase=1.0, success_window=2)
    lim.on_throttle(0.0)
    lim.on_success()
    lim.on_throttle(0.0)
    lim.on_success()
    assert lim.rate == 0.5


async def test_pause_applies_to_every_waiter() -> None:
    """A throttle reported by one worker holds back the others until the pause ends."""
    vt = VirtualTime()
    lim = _limiter(vt, rate=10.0, burst=3)
    start = vt.now
    done: dict[str, float] = {}

    async def throttled() -> None:
        await lim.acquire()
        lim.on_throttle(30.0)
        done["throttled"] = vt.now - start

    def worker(name: str) -> Callable[[], Coroutine[Any, Any, None]]:
        async def run() -> None:
            await vt.sleep(1.0)
            await lim.acquire()
            done[name] = vt.now - start

        return run

    await vt.run(throttled, worker("a"), worker("b"))
    assert done["throttled"] == 0.0
    # After the pause one request goes at once, the next at the halved rate (5/s).
    assert sorted([done["a"], done["b"]]) == pytest.approx([30.0, 30.2])


async def test_longer_pause_wins() -> None:
    """A shorter Retry-After never shortens a pause already in force."""
    t = StepTime()
    lim = _limiter(t, rate=1.0, burst=1)
    lim.on_throttle(20.0)
    remaining = lim.on_throttle(5.0)
    assert remaining == 20.0
    assert lim.pause_remaining() == 20.0
    assert lim.snapshot().pauses == 1


def test_rejects_bad_numbers() -> None:
    """A non-positive rate or a burst below one is refused."""
    with pytest.raises(ValueError, match="rate"):
        RateLimiter(0, 1)
    with pytest.raises(ValueError, match="burst"):
        RateLimiter(1, 0)


async def test_in_flight_throttles_do_not_escalate_the_backoff() -> None:
    """Throttles of requests in flight during a pause keep the backoff at its first step."""
    t = StepTime()
    lim = _limiter(t, rate=8.0, burst=8, backoff_initial=5.0, backoff_max=120.0)
    first = lim.on_throttle(None)
    t.now += 0.1
    later = [lim.on_throttle(None) for _ in range(6)]
    assert first == 5.0
    assert later == [pytest.approx(5.0)] * 6  # before: 10, 20, 40, 80, 120, 120
    t.now += 5.0
    assert lim.on_throttle(None) == 10.0


async def test_recovery_slows_near_a_throttle_below_the_ceiling() -> None:
    """After a throttle below the ceiling, steps past 90 % of that rate are an eighth as large."""
    t = StepTime()
    lim = _limiter(t, rate=80.0, burst=1, increase=8.0, success_window=1)
    lim.on_throttle(0.0)  # at the ceiling: no slow zone
    assert lim.rate == 40.0
    lim.on_success()
    assert lim.rate == 48.0
    lim.on_throttle(0.0)  # at 48: the server's limit is about there
    assert lim.rate == 24.0
    rates = []
    for _ in range(4):
        lim.on_success()
        rates.append(lim.rate)
    assert rates == [32.0, 40.0, 41.0, 42.0]


class _ServerBucket:
    """A server's own token bucket: `rate` per second, `burst` saved up."""

    def __init__(self, t: StepTime, rate: float, burst: float) -> None:
        self.t, self.rate, self.burst = t, rate, burst
        self.tokens, self.last = burst, t.now

    def take(self) -> bool:
        self.tokens = min(self.burst, self.tokens + (self.t.now - self.last) * self.rate)
        self.last = self.t.now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


async def _against(
    server: _ServerBucket, lim: RateLimiter, t: StepTime, seconds: float, alone: bool = True
) -> tuple[int, int]:
    """Send as fast as the limiter allows for ``seconds``: (granted, refused); ``alone``:
    every refused request waits its own Retry-After (no pause of everyone)."""
    start = t.now
    granted = refused = 0
    while t.now - start < seconds:
        await lim.acquire()
        if server.take():
            granted += 1
            lim.on_success()
        else:
            refused += 1
            # The refused request waits its Retry-After on its own; the others go on.
            wait = lim.on_rate_limited(1.0)
            assert wait == 1.0 or not alone
    return granted, refused


async def test_429_learns_the_server_limit_without_pausing_everyone() -> None:
    """Against a 40/s server the limiter at 80/s settles near 40/s, with few 429s, no pause."""
    t = StepTime()
    lim = _limiter(t, rate=80.0, burst=20, increase=8.0)
    server = _ServerBucket(t, rate=40.0, burst=20)
    start = t.now
    granted, refused = await _against(server, lim, t, 120.0)
    snap = lim.snapshot()
    assert snap.pauses == 0 and snap.paused_seconds == 0.0
    assert granted / (t.now - start) >= 0.9 * 40.0
    assert refused / (granted + refused) <= 0.02
    assert lim.learnt is not None and 30.0 <= lim.learnt <= 42.0


async def test_a_limit_learnt_too_low_is_left_within_seconds() -> None:
    """A 429 while the server granted 20/s of a 40/s allowance teaches 19/s; against a 40/s
    server the probe steps double once past it, so within 20 s the limiter runs near 40/s
    with few 429s."""
    t = StepTime()
    lim = _limiter(t, rate=80.0, burst=20, increase=8.0)
    lim.on_rate_limited(1.0)  # no successes yet: the rate is halved
    assert lim.rate == 40.0
    t.now += 2.0
    for _ in range(100):  # the server's budget went elsewhere: it granted 20 requests/s
        t.now += 0.05
        lim.on_success()
    lim.on_rate_limited(1.0)
    assert lim.learnt == pytest.approx(19.0, rel=0.05)
    server = _ServerBucket(t, rate=40.0, burst=20)
    early = await _against(server, lim, t, 20.0)
    begun = t.now
    granted, refused = await _against(server, lim, t, 40.0)
    assert granted / (t.now - begun) >= 0.9 * 40.0
    assert (refused + early[1]) / (granted + refused + sum(early)) <= 0.02
    assert lim.snapshot().pauses == 0


async def test_a_429_when_the_client_was_the_bound_cuts_to_twice_its_pace() -> None:
    """The client asked for 10/s of its 80/s (a burst of it was refused): its pace is no
    measure of the server's limit, so the rate is cut to twice that pace (at most half the
    rate), not to 9.5/s; from then on the bucket saves up a tenth of a second of the rate
    (at least two tokens), not the burst of 20."""
    t = StepTime()
    lim = _limiter(t, rate=80.0, burst=20, increase=8.0)
    for _ in range(50):
        t.now += 0.1
        lim.on_success()
    lim.on_rate_limited(1.0)
    assert lim.learnt == pytest.approx(20.0, rel=0.05)
    t.now += 60.0  # a long idle time refills the bucket up to its burst only
    start = t.now
    for _ in range(3):
        await lim.acquire()
    assert t.now - start == pytest.approx(1.0 / lim.rate)  # 2 saved up (20 before the 429)


async def test_probing_steps_follow_the_learnt_limit_not_a_huge_ceiling() -> None:
    """With a ceiling of 100,000/s (no limit configured) a 40/s server's limit is probed in
    steps of about 1/s, not in steps of an eighth of the tenth of the ceiling."""
    t = StepTime()
    lim = _limiter(t, rate=100_000.0, burst=1000)
    server = _ServerBucket(t, rate=40.0, burst=20)
    granted, refused = await _against(server, lim, t, 60.0, alone=False)
    assert lim.rate < 60.0
    assert refused / (granted + refused) <= 0.05
    assert granted / 60.0 >= 0.85 * 40.0


async def test_429s_in_a_row_without_success_pause_everyone() -> None:
    """A server that refuses everything gets a shared pause after PAUSE_AFTER 429s in a row."""
    t = StepTime()
    lim = _limiter(t, rate=10.0, burst=1)
    waits = [lim.on_rate_limited(None) for _ in range(7)]
    assert waits[:3] == [5.0, 10.0, 20.0] and lim.snapshot().pauses == 0
    assert lim.rate == 5.0  # one cut for the episode (no successes seen to learn from)
    pause = lim.on_rate_limited(3.0)
    assert pause == 3.0 and lim.pause_remaining() == 3.0 and lim.snapshot().pauses == 1


async def test_window_shrinks_to_what_the_server_took_and_grows_back() -> None:
    """A 503 with 7 in flight leaves 6 places; one frees a place; successes widen it again."""
    win = ConcurrencyWindow(16, success_window=2)
    for _ in range(7):
        await win.acquire()
    assert win.on_overload() == 6
    assert win.on_overload() == 6  # the same episode: no second cut
    win.release()  # the refused request
    entered: list[int] = []

    async def one_more() -> None:
        await win.acquire()
        entered.append(1)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one_more)
        await anyio.sleep(0.01)
        assert entered == []  # 6 in flight, window 6: it waits
        win.release()
        await anyio.sleep(0.01)
        assert entered == [1]
    for _ in range(6 * 2):
        win.on_success()
    assert win.limit == 7 and win.overloads == 2
