"""Virtual time for shell tests: an injectable clock and sleep that run in zero real time."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.lowlevel

# Driver tasks of every VirtualTime: each polls until the others are blocked, so they ignore
# one another (two drivers that each saw the other as runnable would wait forever).
_DRIVERS: weakref.WeakSet[asyncio.Task[None]] = weakref.WeakSet()


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
        self._running = False

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

    @staticmethod
    async def _all_blocked() -> None:
        """Return once every other task waits on something (asyncio; like anyio's
        ``wait_all_tasks_blocked``, which polls only every 0.1 s of real time)."""
        this = asyncio.current_task()
        while True:
            await anyio.lowlevel.checkpoint()
            runnable = False
            for task in asyncio.all_tasks():
                if task is this or task in _DRIVERS:
                    continue  # another driver polls too: it must not look busy forever
                waiter = getattr(task, "_fut_waiter", None)
                if waiter is None or waiter.done():
                    runnable = True
                    break
            if not runnable:
                return

    async def _driver(self) -> None:
        task = asyncio.current_task()
        assert task is not None
        _DRIVERS.add(task)
        while True:
            await self._all_blocked()
            if not self._heap:
                # Everyone waits on something outside virtual time (a worker thread, I/O):
                # give it real time instead of spinning on the GIL it needs.
                await anyio.sleep(0.001)
                continue
            wake, _, event = heapq.heappop(self._heap)
            self.now = max(self.now, wake)
            event.set()

    async def run(self, *jobs: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run the jobs concurrently under virtual time until all of them finish."""
        if self._running:  # nested: the enclosing run's driver already moves the clock
            async with anyio.create_task_group() as tg:
                for job in jobs:
                    tg.start_soon(job)
            return
        self._running = True
        try:
            await self._run(*jobs)
        finally:
            self._running = False

    async def _run(self, *jobs: Callable[[], Coroutine[Any, Any, None]]) -> None:
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._driver)
            async with anyio.create_task_group() as tg:
                for job in jobs:
                    tg.start_soon(job)
            outer.cancel_scope.cancel()
