"""The simulator's configuration: one frozen value naming every behaviour switch.

``SimConfig()`` with no arguments is the quiet default the tests build on: 300 threads,
seed 7, no latency, no faults, no rate limit, Era B cookies, logged in.
"""

from __future__ import annotations

import dataclasses

DEFAULT_SEED = 7
DEFAULT_THREADS = 300
CORE_BAR_THREADS = 2000

# Persisted-query hashes the GraphQL endpoint accepts (full 64-hex strings; the first 16 of
# each are those of hashes seen on the real service). Stale hashes answer PERSISTED_QUERY_NOT_FOUND.
LIBRARY_ROOT_HASH = "a5229c390a6a00f8" + "0" * 48
LIBRARY_PAGINATION_HASH = "4f6dfcb8e9d3c065" + "0" * 48
LIBRARY_ROOT_HASH_C = "1c1f9e86416eddf3" + "0" * 48
SPACE_THREADS_HASH = "db13bf755b93bc26" + "0" * 48

FAULT_KINDS = ("500", "502", "503", "drop", "truncate")


@dataclasses.dataclass(frozen=True, slots=True)
class SimConfig:
    """Every switch of the simulated Perplexity; all default to a healthy, quiet server.

    Account:
      ``threads`` number of threads; ``seed`` drives every generated value.
      ``deleted_rate``/``expired_rate`` fraction of threads answering 400 ENTRY_DELETED /
      ENTRY_EXPIRED from the start (deleted ones are also gone from the listings).
      ``vanish_rate`` fraction of threads a service incident hides: gone from the listings,
      their detail answering 404 ``THREAD_NOT_FOUND`` (``/__sim/mutate`` ``{"vanish": share}``
      does the same on a running server).
    Session:
      ``era`` ``"b"`` (``__Secure-next-auth.session-token``) or ``"c"``
      (``__Secure-pplx.session.<account>`` + ``__Host-pplx-last-active-account``; thread
      endpoints need the ``x-pplx-account`` header). ``logged_in=False`` makes every cookie
      invalid. ``rotate_session_every`` > 0 sends a new session cookie through ``Set-Cookie``
      after that many authenticated requests; the previous value keeps working for
      ``rotation_grace`` more requests (``None`` = forever).
    Paging:
      ``detail_default_limit`` page size of thread detail when the client sends none,
      ``detail_max_limit`` its cap; ``list_max_limit`` cap of ``list_ask_threads``;
      ``total_threads_cap`` the value ``total_threads`` is capped at (unreliable on purpose);
      ``graphql_page`` edges per GraphQL page; ``graphql_empty_end_cursor`` makes the last
      GraphQL page say ``hasNextPage: true`` with an empty ``endCursor``.
    Server behaviour:
      ``latency_ms`` + uniform ``jitter_ms`` per request; ``rate``/``burst`` token bucket
      (rate 0 = off) answering 429 RATE_LIMITED, with ``Retry-After`` when ``retry_after``;
      ``fault_rate`` share of requests failing with one of ``fault_kinds``
      (``500``/``502``/``503``/``drop``/``truncate``), drawn from ``fault_seed``;
      ``challenge_windows`` ((first request number, count), …) answering the Cloudflare HTML
      403; ``challenge_after_429s`` > 0 opens a challenge window of ``challenge_duration_s``
      once that many 429s fell within ``challenge_window_s`` seconds;
      ``max_in_flight`` > 0 limits concurrency instead of rate: an API request arriving while
      that many are being answered gets 503 at once (the CDN route is not limited);
      ``transient_404`` number of first detail requests answering 404 for threads added by
      ``/__sim/mutate``; ``asset_url_ttl_s`` lifetime of signed CDN URLs; ``cache_size``
      number of serialized thread-detail pages kept in the server's LRU.
    GraphQL:
      ``graphql_hashes`` accepted persisted-query hashes.
    Shared space:
      ``shared_space_threads`` > 0 adds one more space, owned by another user named
      ``shared_space_owner`` (a hostile name on purpose) and shared with the account; the
      oldest ``shared_space_threads`` generated threads (at most all of them) become that
      user's threads in it: not in the account's own library listings, but listed by the
      space and fetchable.
    Accounts:
      ``username`` the account's user name (its archive folder). ``accounts`` > 1 serves that
      many distinct accounts on one server (``sim/multi.py``): account ``k`` (from 0) has seed
      ``seed + k`` and user name ``username`` (k = 0) or ``username<k+1>``, its own cookies,
      library, spaces, rate limiter and faults; requests are routed by their session cookie.
    """

    threads: int = DEFAULT_THREADS
    seed: int = DEFAULT_SEED
    era: str = "b"
    logged_in: bool = True
    rotate_session_every: int = 0
    rotation_grace: int | None = 100
    deleted_rate: float = 0.0
    expired_rate: float = 0.0
    vanish_rate: float = 0.0
    detail_default_limit: int = 20
    detail_max_limit: int = 100
    list_max_limit: int = 100
    total_threads_cap: int = 100
    graphql_page: int = 25
    graphql_empty_end_cursor: bool = False
    graphql_hashes: tuple[str, ...] = (
        LIBRARY_ROOT_HASH,
        LIBRARY_PAGINATION_HASH,
        LIBRARY_ROOT_HASH_C,
        SPACE_THREADS_HASH,
    )
    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    rate: float = 0.0
    burst: int = 10
    retry_after: bool = True
    fault_rate: float = 0.0
    fault_kinds: tuple[str, ...] = FAULT_KINDS
    fault_seed: int = 1
    challenge_windows: tuple[tuple[int, int], ...] = ()
    challenge_after_429s: int = 0
    challenge_window_s: float = 10.0
    challenge_duration_s: float = 5.0
    max_in_flight: int = 0
    transient_404: int = 0
    asset_url_ttl_s: int = 900
    cache_size: int = 512
    shared_space_threads: int = 0
    shared_space_owner: str = "Ana Ñ/../other:user"
    username: str = "simuser"
    accounts: int = 1

    def __post_init__(self) -> None:
        problems = []
        if self.threads < 0:
            problems.append(f"threads must be >= 0, got {self.threads}")
        if self.era not in ("b", "c"):
            problems.append(f"era must be 'b' or 'c', got {self.era!r}")
        if not 0.0 <= self.fault_rate <= 1.0:
            problems.append(f"fault_rate must be within [0, 1], got {self.fault_rate}")
        bad = [k for k in self.fault_kinds if k not in FAULT_KINDS]
        if bad:
            problems.append(f"fault_kinds has unknown kinds {bad}; known: {list(FAULT_KINDS)}")
        if self.rate < 0 or self.burst < 1:
            problems.append(f"rate must be >= 0 and burst >= 1, got {self.rate}/{self.burst}")
        if not 1 <= self.detail_default_limit <= self.detail_max_limit:
            problems.append("detail_default_limit must be within [1, detail_max_limit]")
        for rate_name in ("deleted_rate", "expired_rate", "vanish_rate"):
            value = getattr(self, rate_name)
            if not 0.0 <= value <= 1.0:
                problems.append(f"{rate_name} must be within [0, 1], got {value}")
        if self.max_in_flight < 0:
            problems.append(f"max_in_flight must be >= 0, got {self.max_in_flight}")
        if self.shared_space_threads < 0:
            problems.append(f"shared_space_threads must be >= 0, got {self.shared_space_threads}")
        if self.accounts < 1:
            problems.append(f"accounts must be >= 1, got {self.accounts}")
        if problems:
            raise ValueError("invalid SimConfig: " + "; ".join(problems))
