"""The live account: the generated threads plus the in-memory overlay of mutations.

Mutations (``/__sim/mutate``) never touch the generator: added, continued, rewritten,
deleted and expired threads are kept here and laid over the generated account. The listing
order is "newest activity first": mutated threads (whose activity is newer than anything
generated) first, then the generated indices, skipping deleted ones.
"""

from __future__ import annotations

import bisect
import dataclasses
import random
from collections.abc import Callable
from typing import Any

from pplx_archiver.sim import ids
from pplx_archiver.sim.account import (
    MUTATION_STEP_US,
    T0_US,
    ThreadPlan,
    base_updated_us,
    continue_thread,
    edit_turn,
    plan_added,
    plan_thread,
    rewrite_turn,
    space_count,
    space_of,
    substitute_turn,
    terminal_state,
    thread_uuid,
)
from pplx_archiver.sim.build import AUTHOR, space_object
from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.truth import thread_truth

Json = dict[str, Any]


class AccountState:
    """Generated account + mutation overlay; the single owner of "what exists now"."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.seed = config.seed
        self.size = config.threads
        self.account_id = ids.make_id(
            random.Random(f"{self.seed}:account"), self.seed, ids.OTHER, 0
        )
        self._overrides: dict[int, ThreadPlan] = {}
        self._top: list[int] = []  # mutated threads, newest activity first
        self._deleted: set[int] = set()
        self._expired: set[int] = set()
        self._vanished: set[int] = set()  # hidden by a simulated incident: unlisted, 404
        self._excluded: list[int] | None = None  # sorted generated indices not listed in order
        self._added = 0
        self._seq = 0
        self.versions: dict[int, int] = {}
        self.detail_hits: dict[int, int] = {}
        self._members: dict[int, list[int]] | None = None
        self._spaces: list[Json] | None = None
        # thread index -> a hostile detail body served instead of the thread (mutate amplify)
        self.hostile: dict[int, bytes] = {}
        self.failing_reports = False  # the CDN answers 500 for research reports (mutate)
        self.created_spaces: list[Json] = []  # spaces made through the API (sim/ask.py)
        # Threads of another user in a space shared with the account (SimConfig docstring).
        self.shared = frozenset(range(max(0, self.size - config.shared_space_threads), self.size))
        self.shared_space = space_count(self.size) if self.shared else None
        if config.deleted_rate > 0 or config.expired_rate > 0:
            for i in range(self.size):
                state = terminal_state(self.seed, i, config.deleted_rate, config.expired_rate)
                if state == "deleted":
                    self._deleted.add(i)
                elif state == "expired":
                    self._expired.add(i)
        if config.vanish_rate > 0:
            self.vanish(config.vanish_rate)

    # --- lookup -----------------------------------------------------------------------
    @property
    def total(self) -> int:
        """Generated plus added threads (deleted ones included)."""
        return self.size + self._added

    def lookup(self, thread_id: str) -> tuple[str, int | None]:
        """``("thread", index)``, ``("sibling", None)`` or ``("unknown", None)``."""
        decoded = ids.decode_id(thread_id, self.seed)
        if decoded is None:
            return "unknown", None
        kind, index = decoded
        if kind == ids.SIBLING:
            return "sibling", None
        if kind != ids.THREAD or index >= self.total or thread_uuid(self.seed, index) != thread_id:
            return "unknown", None
        return "thread", index

    def plan(self, index: int) -> ThreadPlan:
        """The current plan of thread ``index`` (mutations applied)."""
        plan = self._overrides.get(index)
        if plan is None:
            plan = plan_thread(self.seed, index, self.size)
        state = (
            "deleted" if index in self._deleted else "expired" if index in self._expired else "ok"
        )
        if plan.state != state:
            plan = dataclasses.replace(plan, state=state)
        if index in self.shared and plan.space != self.shared_space:
            plan = dataclasses.replace(plan, space=self.shared_space)
        return plan

    def status(self, index: int) -> str:
        """``ok`` / ``deleted`` / ``expired`` / ``vanished`` without planning the thread."""
        if index in self._deleted:
            return "deleted"
        if index in self._vanished:
            return "vanished"
        return "expired" if index in self._expired else "ok"

    def updated_us(self, index: int) -> int:
        """Last activity of thread ``index`` without planning it when it is unmutated."""
        plan = self._overrides.get(index)
        if plan is not None:
            return plan.updated_us
        return self.plan(index).updated_us if index >= self.size else self._base_updated(index)

    def _base_updated(self, index: int) -> int:
        us = base_updated_us(self.seed, index)
        return us

    # --- ordering ---------------------------------------------------------------------
    def _excluded_sorted(self) -> list[int]:
        if self._excluded is None:
            moved = {i for i in self._top if i < self.size}
            self._excluded = sorted(
                moved | self.shared | {i for i in self._deleted | self._vanished if i < self.size}
            )
        return self._excluded

    def listed_count(self) -> int:
        """Number of threads the library listings show."""
        return len(self._top) + self.size - len(self._excluded_sorted())

    def at(self, position: int) -> int:
        """Thread index at listing ``position`` (0 = newest activity)."""
        if position < len(self._top):
            return self._top[position]
        q = position - len(self._top)
        excluded = self._excluded_sorted()
        x = q
        while True:
            nxt = q + bisect.bisect_right(excluded, x)
            if nxt == x:
                break
            x = nxt
        return x

    def position_before(self, updated_us: int) -> int:
        """First listing position whose activity is strictly older than ``updated_us``."""
        lo, hi = 0, self.listed_count()
        while lo < hi:
            mid = (lo + hi) // 2
            if self.updated_us(self.at(mid)) >= updated_us:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def listing(self, offset: int, limit: int) -> list[int]:
        """Indices for ``offset``/``limit`` in listing order."""
        end = min(self.listed_count(), offset + limit)
        return [self.at(p) for p in range(max(0, offset), end)]

    # --- spaces -----------------------------------------------------------------------
    def spaces(self) -> list[Json]:
        """Space objects (the thread counts come from membership)."""
        if self._spaces is None:
            members = self.members()
            rng = random.Random(f"{self.seed}:spaces")
            self._spaces = []
            for k in range(space_count(self.size)):
                uuid = ids.make_id(rng, self.seed, ids.OTHER, k)
                space = space_object(self.seed, k, uuid, len(members.get(k, [])), T0_US - k * 3600)
                if self.config.username != AUTHOR:
                    space["owner_user"] = {**space["owner_user"], "username": self.config.username}
                self._spaces.append(space)
            if self.shared_space is not None:
                self._spaces.append(self._shared_space_object(rng, len(self.shared)))
            self._spaces.extend(self.created_spaces)
        return self._spaces

    def _shared_space_object(self, rng: random.Random, count: int) -> Json:
        k = self.shared_space
        assert k is not None
        uuid = ids.make_id(rng, self.seed, ids.OTHER, k)
        space = space_object(self.seed, k, uuid, count, T0_US - k * 3600)
        owner = self.config.shared_space_owner
        space.update(
            title="Shared with you: team notes",
            description="A space another user shared with this account",
            instructions="Answer briefly.\nCite | sources.",
            user_permission=1,
            owner_user={"username": owner, "permission": 4, "image": None, "name": owner},
            contributor_users=[{"username": self.config.username, "permission": 1, "image": None}],
            is_invited=True,
        )
        return space

    def author_of(self, index: int) -> str:
        """The username of the thread's author (another user for shared-space threads)."""
        return self.config.shared_space_owner if index in self.shared else self.config.username

    def members(self) -> dict[int, list[int]]:
        """Thread indices of each space in listing order (computed once, lazily)."""
        if self._members is None:
            out: dict[int, list[int]] = {}
            for i in range(self.total):
                k = self.shared_space if i in self.shared else space_of(self.seed, i, self.size)
                if i in self._overrides:  # a thread moved into a space keeps its new space
                    k = self._overrides[i].space
                if k is not None:
                    out.setdefault(k, []).append(i)
            self._members = out
        return self._members

    def space_slug(self, plan: ThreadPlan) -> str | None:
        """Slug of the thread's space, or ``None``."""
        if plan.space is None:
            return None
        return str(self.spaces()[plan.space]["slug"])

    # --- mutations --------------------------------------------------------------------
    def _tick(self) -> int:
        self._seq += 1
        return T0_US + self._seq * MUTATION_STEP_US

    def _move_to_top(self, index: int, plan: ThreadPlan) -> None:
        self._overrides[index] = plan
        self.versions[index] = self.versions.get(index, 0) + 1
        if index in self._top:
            self._top.remove(index)
        self._top.insert(0, index)
        self._excluded = None

    def add(self, count: int) -> list[str]:
        """Add ``count`` new threads with the newest activity; returns their uuids."""
        out = []
        for _ in range(count):
            index = self.total
            self._added += 1
            plan = plan_added(self.seed, index, self.size, self._tick())
            self._move_to_top(index, plan)
            out.append(plan.uuid)
        self._members = None
        self._spaces = None
        return out

    def add_space(self, space: Json) -> None:
        """A space the account created: listed from now on."""
        self.created_spaces.append(space)
        self._spaces = None

    def put_new(self, make: Callable[[int, int], ThreadPlan]) -> ThreadPlan:
        """Add the thread ``make(index, updated_us)`` builds with the newest activity."""
        index = self.total
        self._added += 1
        plan = make(index, self._tick())
        self._move_to_top(index, plan)
        self._members = None
        self._spaces = None
        return plan

    def put(self, index: int, make: Callable[[ThreadPlan, int], ThreadPlan]) -> ThreadPlan:
        """Replace thread ``index`` by ``make(plan, updated_us)``; it moves to the listing top."""
        plan = make(self.plan(index), self._tick())
        self._move_to_top(index, plan)
        self._members = None
        self._spaces = None
        return plan

    def continue_(self, index: int, turns: int) -> ThreadPlan:
        """Append ``turns`` new turns to thread ``index``; it moves to the listing top."""
        at = self._tick()
        plan = continue_thread(self.plan(index), self.seed, turns, at, str(self._seq))
        self._move_to_top(index, plan)
        return plan

    def rewrite(self, index: int, turn: int | None) -> ThreadPlan:
        """Rewrite one answer of thread ``index`` into a registered variant."""
        plan = rewrite_turn(self.plan(index), self.seed, turn, self._tick())
        self._move_to_top(index, plan)
        return plan

    def edit(self, index: int, turn: int | None, silent: bool) -> ThreadPlan:
        """Edit one answer of thread ``index`` under its entry id; ``silent``: the thread's
        update time does not move (it keeps its place in the listing)."""
        if silent:
            plan = edit_turn(self.plan(index), turn, None)
            self._overrides[index] = plan
            self.versions[index] = self.versions.get(index, 0) + 1
            return plan
        plan = edit_turn(self.plan(index), turn, self._tick())
        self._move_to_top(index, plan)
        return plan

    def substitute(self, index: int, turn: int | None, served: str) -> ThreadPlan:
        """Serve one turn of thread ``index`` by ``served`` instead of the chosen model."""
        plan = substitute_turn(self.plan(index), turn, served, self._tick())
        self._move_to_top(index, plan)
        return plan

    def delete(self, index: int) -> None:
        """Delete thread ``index``: gone from listings, detail answers ENTRY_DELETED."""
        self._deleted.add(index)
        self._expired.discard(index)
        if index in self._top:
            self._top.remove(index)
        self._excluded = None
        self.versions[index] = self.versions.get(index, 0) + 1

    def vanish(self, rate: float) -> list[str]:
        """Hide about a share ``rate`` of the account as a service incident would: gone from
        the listings, the detail answering 404 ``THREAD_NOT_FOUND``. Each thread's draw comes
        from the seed (a larger share hides more); returns the uuids newly hidden."""
        chosen = [
            i
            for i in range(self.total)
            if self.status(i) == "ok"
            and i not in self.shared
            and random.Random(f"{self.seed}:vanish:{i}").random() < rate
        ]
        self._vanished.update(chosen)
        self._top = [i for i in self._top if i not in self._vanished]
        self._excluded = None
        self._members = None
        for index in chosen:
            self.versions[index] = self.versions.get(index, 0) + 1
        return [thread_uuid(self.seed, i) for i in chosen]

    def restore(self, index: int) -> None:
        """Undo a deletion, an expiry or an incident: thread ``index`` is listed again (at the
        top, as a thread with new activity) and answers again."""
        self._deleted.discard(index)
        self._expired.discard(index)
        self._vanished.discard(index)
        self._excluded = None
        self._members = None
        self._move_to_top(index, self.plan(index))
        self.versions[index] = self.versions.get(index, 0) + 1

    def hidden(self, index: int) -> bool:
        """True when thread ``index`` is gone from every listing (deleted or vanished)."""
        return index in self._deleted or index in self._vanished

    def expire(self, index: int) -> None:
        """Expire thread ``index``: still listed, detail answers ENTRY_EXPIRED."""
        if index not in self._deleted:
            self._expired.add(index)
        self.versions[index] = self.versions.get(index, 0) + 1

    # --- truth ------------------------------------------------------------------------
    def truth(self) -> Json:
        """The truth manifest of the current account (all threads, deleted ones included)."""
        threads = []
        for i in range(self.total):
            plan = self.plan(i)
            threads.append(thread_truth(plan, self.space_slug(plan)))
        return {"seed": self.seed, "size": self.size, "threads": threads}
