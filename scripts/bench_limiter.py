"""The API rate limiter against a server's token bucket, in virtual time (no network, no load).

Models scenario 1 of ``scripts/bench.py`` without the machine in the way: the server grants
40 requests/s (burst 20) and answers the rest 429 with ``Retry-After: 1``; the client's
ceiling is 80 requests/s (burst 20). Requests are sent as fast as the limiter allows. Two
ways of answering a 429 are compared over the same virtual minutes:

- ``pause_all``: :meth:`RateLimiter.on_throttle` — halve the rate and pause every worker for
  the Retry-After (the behaviour before the limiter learnt the server's limit);
- ``learn``: :meth:`RateLimiter.on_rate_limited` — continue just below the rate the server
  granted; only the refused request waits its Retry-After (it is retried later and costs
  the others nothing).

- ``learnt_low``: as ``learn``, after a first 429 that came while the client asked for only
  10 requests/s (so the limit it learnt is a quarter of the server's).

Prints one JSON object per way: granted requests/s, efficiency (granted / server rate),
share of 429s, pauses and paused seconds.
Usage: ``python scripts/bench_limiter.py [--seconds 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pplx_archiver.shell.net.ratelimit import RateLimiter  # noqa: E402

SERVER_RATE = 40.0
SERVER_BURST = 20.0
CLIENT_RATE = 80.0
CLIENT_BURST = 20


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


async def _run(way: str, seconds: float) -> dict[str, object]:
    t = _Clock()
    lim = RateLimiter(CLIENT_RATE, CLIENT_BURST, clock=t.clock, sleep=t.sleep)
    if way == "learnt_low":
        # The first 429 came while the client itself asked for 10 requests/s (the rest of
        # the server's budget went to other requests): the limit it learns is far too low.
        for _ in range(50):
            t.now += 0.1
            lim.on_success()
        lim.on_rate_limited(1.0)
    tokens, last = SERVER_BURST, t.now
    granted = refused = 0
    start = t.now
    while t.now - start < seconds:
        await lim.acquire()
        tokens = min(SERVER_BURST, tokens + (t.now - last) * SERVER_RATE)
        last = t.now
        if tokens >= 1.0:
            tokens -= 1.0
            granted += 1
            lim.on_success()
        else:
            refused += 1
            if way != "pause_all":
                lim.on_rate_limited(1.0)
            else:
                lim.on_throttle(1.0)
    elapsed = t.now - start
    snap = lim.snapshot()
    return {
        "way": way,
        "virtual_seconds": round(elapsed, 1),
        "granted_per_s": round(granted / elapsed, 2),
        "efficiency": round(granted / elapsed / SERVER_RATE, 3),
        "http_429": refused,
        "share_429": round(refused / (granted + refused), 4),
        "pauses": snap.pauses,
        "paused_seconds": round(snap.paused_seconds, 1),
        "final_rate": round(lim.rate, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="virtual seconds per way")
    args = parser.parse_args()
    for way in ("pause_all", "learn", "learnt_low"):
        sys.stdout.write(json.dumps(asyncio.run(_run(way, args.seconds))) + "\n")


if __name__ == "__main__":
    main()
