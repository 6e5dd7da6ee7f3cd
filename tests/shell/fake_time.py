"""Virtual time for shell tests: an injectable clock and sleep that run in zero real time."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel


class StepTime:
    """A clock whose sleep advances it at once (one task; records every wait)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)
        await anyio.lowlevel.checkpoint()


class VirtualTime:
    """A clock for many tasks: time jumps to the next wake-up once every task is blocked."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []
        self._heap: list[tuple[float, int, anyio.Event]] = []
        self._seq = itertools.count()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        event = anyio.Event()
        heapq.heappush(self._heap, (self.now + seconds, next(self._seq), event))
        await event.wait()

    async def _driver(self) -> None:
        while True:
            await anyio.wait_all_tasks_blocked()
            if not self._heap:
                await anyio.sleep(0)
                continue
            wake, _, event = heapq.heappop(self._heap)
            self.now = max(self.now, wake)
            event.set()

    async def run(self, *jobs: Callable[[], Awaitable[None]]) -> None:
        """Run the jobs concurrently under virtual time until all of them finish."""
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._driver)
            async with anyio.create_task_group() as tg:
                for job in jobs:
                    tg.start_soon(job)
            outer.cancel_scope.cancel()
