"""How many API requests may be in flight at once, learnt from the server's 503s.

Beside the rate (:mod:`~pplx_archiver.shell.net.ratelimit`), a server may limit how many
requests it takes at once; the API client asks :class:`ConcurrencyWindow` for a place before
each request.
"""

from __future__ import annotations

import anyio


class ConcurrencyWindow:
    """How many API requests may be in flight at once, learnt from the server's 503s.

    A server that limits concurrency (not rate) refuses what comes beyond its limit with
    503. :meth:`on_overload` sets the window to the requests that were in flight besides the
    refused one (what the server did take), once per episode; after ``limit ×
    success_window`` successes in a row the window grows by one (probing whether the server
    takes more), never above the configured concurrency. At the configured size it costs a
    counter: nothing waits.
    """

    def __init__(self, limit: int, *, success_window: int = 20) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self._max = limit
        self._limit = limit
        self._success_window = success_window
        self._in_flight = 0
        self._streak = 0
        self._overloads = 0
        self._changed: anyio.Event | None = None
        self._episode_open = False

    @property
    def limit(self) -> int:
        """Requests allowed in flight now."""
        return self._limit

    @property
    def overloads(self) -> int:
        """503 answers reported so far."""
        return self._overloads

    async def acquire(self) -> None:
        """Wait for a free place in the window, then take it."""
        while self._in_flight >= self._limit:
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()
        self._in_flight += 1

    def release(self) -> None:
        """Give the place back (every request that acquired one, however it ended)."""
        self._in_flight -= 1
        self.release_waiters()

    def on_success(self) -> None:
        """Count an answered request; a long run of them widens the window by one."""
        self._episode_open = False
        if self._limit >= self._max:
            return
        self._streak += 1
        if self._streak >= self._limit * self._success_window:
            self._streak = 0
            self._limit += 1
            self.release_waiters()

    def on_overload(self) -> int:
        """The server refused with 503: shrink to what it took; returns the new window."""
        self._overloads += 1
        self._streak = 0
        if not self._episode_open:
            # In flight now: this request and the others the server took (or is refusing).
            self._limit = max(1, min(self._limit, self._in_flight - 1))
            self._episode_open = True
        return self._limit

    def release_waiters(self) -> None:
        """Wake every waiter to check the window again."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None
