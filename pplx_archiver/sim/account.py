"""The synthetic account: what each thread *is*, decided from (seed, index) on demand.

A :class:`ThreadPlan` holds every decision the generator made for one thread (mode, turns,
timestamps, sub-agent payloads and where they land, interruptions, answer variants, cited
URLs, assets). ``sim.build`` turns a plan into response bodies and ``sim.truth`` turns it into
the truth manifest, so the manifest comes from the decisions, never from parsing responses.
Nothing is precomputed: a 50,000-thread :class:`Account` costs nothing until asked.

Time: thread ``index`` 0 has the newest activity; each following index is 10 minutes older
(with jitter), so the listing order is the index order.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Sequence

from pplx_archiver.sim import ids
from pplx_archiver.sim.text import headline_text, query_text, subtask_text, title_text

US = 1_000_000
T0_US = 1_788_220_800 * US  # 2026-09-01T00:00:00Z
SLOT_US = 600 * US
MUTATION_STEP_US = 60 * US

SPENDING = "spending_limit_exceeded"
COMPLETED = "WORKFLOW_COMPLETED"
AWAITING = "WORKFLOW_AWAITING_NEXT_STEPS"
CANCELED = "WORKFLOW_CANCELED"
AWAITING_USER = "WORKFLOW_AWAITING_USER"
UNKNOWN_STATUS = "WORKFLOW_PAUSED_FOR_REVIEW"

# The simulator's own account of the modes, written apart from core/thread/mode_table.py on purpose:
# it plays the service, so the truth it records is independent of the archiver's table, and
# the agreement tests compare the two (tests/core/test_mode_table.py allows it to list modes).
SEARCH_MODE = {
    "search": "SEARCH",
    "studio": "STUDIO",
    "deep-research": "RESEARCH",
    "computer": "ASI",
    "council": "AGENTIC_RESEARCH",
    "study": "STUDY",
}
TRUTH_MODE = {
    "search": "search",
    "studio": "search",
    "deep-research": "deep-research",
    "computer": "computer",
    "council": "council",
    "study": "study",
}
SPECIFICITY = ("search", "deep-research", "study", "council", "computer")
DISPLAY_MODELS = {
    "search": ("turbo", "pplx_pro", "experimental", "gpt55_thinking", "claude46sonnetthinking"),
    "studio": ("pplx_beta",),
    "deep-research": ("pplx_alpha",),
    "computer": ("pplx_asi", "pplx_asi_opus", "pplx_asi_opus_thinking"),
    "council": ("pplx_agentic_research",),
    "study": ("pplx_study",),
}
METADATA_MODE = {
    "search": "1",
    "studio": "1",
    "study": "1",
    "deep-research": "2",
    "council": "2",
    "computer": "4",
}
COUNCIL_MODELS = ("gpt55_thinking", "claude48opusthinking", "gemini31pro_high")
SUBAGENT_MODELS = ("claude48opus", "claude46sonnetthinking", "gpt55_thinking")
DOMAINS = (
    "example.org",
    "docs.example.com",
    "wiki.example.net",
    "news.example.org",
    "research.example.edu",
    "例子.example.cn",
)
HOSTILE_TITLES = (
    "../../x",
    "a/b",
    "ctrl\x00chars\x07and\x1bescape",
    "CON",
    "..",
    "   ",
    "title with\nnewline and\ttab",
    "back\\slash:colon*star?",
)
CJK_TITLES = (
    "量子计算的基本原理是什么？",
    "東京で一番おいしいラーメン屋",
    "한국어 제목 테스트",
    "比较澳大利亚和新西兰的经济政策",
)
EMOJI_TITLES = (
    "🚀 Launch checklist 🧪",
    "Weather ☔ vs 🌞 statistics",
    "👩‍💻 pair programming tips",
)
WORDS = (
    "quantum",
    "policy",
    "river",
    "compiler",
    "history",
    "market",
    "protein",
    "orbit",
    "language",
    "garden",
    "theorem",
    "network",
    "climate",
    "ledger",
    "violin",
    "harbor",
)


@dataclasses.dataclass(frozen=True, slots=True)
class AssetVersion:
    """One asset object (one version of a file) as it appears in blocks."""

    uuid: str
    file_name: str
    asset_type: str
    typed_key: str
    created_s: int
    content: str  # "text" | "empty" | "binary" | "handle"
    root: str
    version: int


@dataclasses.dataclass(frozen=True, slots=True)
class Variant:
    """``side_by_side_metadata`` of an entry and whether it is a real hit."""

    experiment_role: str
    sibling_uuid: str
    selection_status: str | None
    hit: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Payload:
    """One background sub-agent payload (computer mode) and where it must land."""

    payload_id: str
    bg_uuid: str
    bg_frontend: str
    status: str
    anchor_status: str | None
    locked: bool
    landing: str  # anchored | stub | appendix
    turn: int | None  # 0-based turn index (anchor turn or stub turn)
    launcher: int
    created_us: int
    completed_us: int | None
    updated_us: int
    model: str
    headline: str
    objective: tuple[str, ...]
    sources: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One main entry of a thread."""

    index: int
    backend_uuid: str
    frontend_uuid: str
    created_us: int
    updated_us: int
    stub: bool
    kind: str
    search_mode: str | None
    search_mode_key: bool
    display_model: str | None
    query: str
    answer_seed: str
    features: tuple[str, ...]
    status: str
    locked: bool
    variant: Variant | None
    web: tuple[int, ...]
    wsrc: tuple[int, ...]
    anchors: tuple[str, ...]
    council_step: bool
    research_answer: bool
    assets: tuple[AssetVersion, ...]
    answer_in_text: bool
    rewritten: bool = False
    edited: int = 0  # times the answer was edited under the same entry id (`/__sim/mutate` edit)
    served_model: str | None = None  # a model served instead of the chosen one (substitute)
    members: tuple[str, ...] = ()  # council members asked for (``compare_model_preferences``)


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadPlan:
    """Every decision made for one thread."""

    index: int
    uuid: str
    context_uuid: str
    frontend_context_uuid: str
    rw_token: str
    title: str
    kind: str
    mode: str
    mode_switch: bool
    no_search_mode: bool
    no_display_model: bool
    metadata_mode: str
    space: int | None
    turns: tuple[Turn, ...]
    payloads: tuple[Payload, ...]
    created_us: int
    updated_us: int
    drop_zeros: bool
    report: tuple[str, int, str] | None  # (asset uuid, version, file name)
    state: str = "ok"  # ok | deleted | expired
    added: bool = False
    shape: str = ""  # payload era of an old search thread: "2023-early" … "2025", "" (now)

    @property
    def slug(self) -> str:
        """The thread slug: the first entry's backend uuid (== :attr:`uuid`)."""
        return self.uuid


def space_count(size: int) -> int:
    """Number of spaces (collections) in an account of ``size`` threads."""
    return 3 + size // 250


def space_of(seed: int, index: int, size: int) -> int | None:
    """The space a thread belongs to (cheap: no thread generation); ``None`` for most."""
    rng = random.Random(f"{seed}:space:{index}")
    if rng.random() < 0.1:
        return rng.randrange(space_count(size))
    return None


def base_updated_us(seed: int, index: int) -> int:
    """Last-activity time of a generated thread: strictly older for higher indices."""
    rng = random.Random(f"{seed}:t:{index}")
    us = T0_US - index * SLOT_US - rng.randrange(SLOT_US - US)
    if drops_zeros(seed, index):
        us -= us % 1000
    return us


def drops_zeros(seed: int, index: int) -> bool:
    """Whether the thread's update time ends in zeros that ``Z`` timestamps drop."""
    return random.Random(f"{seed}:z:{index}").random() < 0.2


def terminal_state(seed: int, index: int, deleted_rate: float, expired_rate: float) -> str:
    """``ok``/``deleted``/``expired`` for a generated thread under the configured rates."""
    if deleted_rate <= 0 and expired_rate <= 0:
        return "ok"
    value = random.Random(f"{seed}:state:{index}").random()
    if value < deleted_rate:
        return "deleted"
    if value < deleted_rate + expired_rate:
        return "expired"
    return "ok"


def _title(rng: random.Random, seed: int, index: int) -> str:
    roll = rng.random()
    if roll < 0.06:
        return rng.choice(HOSTILE_TITLES)
    if roll < 0.08:
        return ("Very long title " + "x" * 300)[:300]
    if roll < 0.16:
        return rng.choice(CJK_TITLES)
    if roll < 0.20:
        return rng.choice(EMOJI_TITLES)
    words = [rng.choice(WORDS) for _ in range(rng.randint(2, 7))]  # the draws of the plan
    return title_text(
        seed, index, " ".join(words) + rng.choice(("?", "", " explained", " in 2026"))
    )


def _pick_kind(rng: random.Random) -> str:
    roll = rng.random()
    for kind, share in (
        ("search", 0.45),
        ("deep-research", 0.20),
        ("computer", 0.13),
        ("council", 0.08),
        ("study", 0.07),
        ("studio", 0.07),
    ):
        if roll < share:
            return kind
        roll -= share
    return "search"


def _turn_count(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.55:
        return 1
    if roll < 0.85:
        return rng.randint(2, 6)
    if roll < 0.93:
        return rng.randint(7, 20)
    return rng.randint(21, 40)


def _features(rng: random.Random, big_ok: bool) -> tuple[str, ...]:
    out = [
        name
        for name, share in (
            ("table", 0.25),
            ("fence", 0.25),
            ("nested_fence", 0.1),
            ("details", 0.06),
            ("html", 0.08),
            ("latex_display", 0.15),
            ("latex_inline", 0.15),
            ("latex_mixed", 0.05),
            ("cjk", 0.1),
        )
        if rng.random() < share
    ]
    if big_ok and rng.random() < 0.01:
        out.append("big")
    return tuple(out)


def _variant(rng: random.Random, seed: int, index: int) -> Variant | None:
    roll = rng.random()
    if roll > 0.05:
        return None
    sibling = ids.make_id(rng, seed, ids.SIBLING, index)
    which = rng.randrange(5)
    if which == 0:  # hit: selected
        return Variant("[control]default-model-class:gpt41", sibling, "SELECTED", True)
    if which == 1:  # hit: treatment role, unspecified status
        role = "override-default-model-class:qwen3_instruct-01f7f"
        return Variant(role, sibling, "SELECTION_STATUS_UNSPECIFIED", True)
    if which == 2:  # near miss: control role + unspecified status
        role = "[control]default-model-class:gpt41"
        return Variant(role, sibling, "SELECTION_STATUS_UNSPECIFIED", False)
    if which == 3:  # near miss: empty sibling
        return Variant("override-default-model-class:qwen3", "", "SELECTED", False)
    # near miss: control role, status missing
    return Variant("[control]default-model-class:gpt41", sibling, None, False)


def _urls(rng: random.Random, pool: int, count: int) -> tuple[int, ...]:
    return tuple(sorted(rng.sample(range(pool), min(count, pool))))


@dataclasses.dataclass(slots=True)
class Builder:
    """Mutable scratch state while one thread is planned."""

    rng: random.Random
    seed: int
    index: int
    kind: str
    turns: list[Turn]
    payloads: list[Payload]
    clock: int
    url_pool: int
    limit_thread: bool


def _asset_versions(b: Builder, turn_no: int, kind: str) -> tuple[tuple[AssetVersion, ...], str]:
    """Assets of one turn: versioned files, a report (deep research), handles, a fake .md."""
    rng = b.rng
    out: list[AssetVersion] = []
    created = b.clock // US
    report_name = ""
    if kind == "deep-research":
        report_name = f"research-report-{b.index}.md"
        n = rng.randint(2, 4)
        root = ids.make_id(rng, b.seed, ids.ASSET, b.index)
        for v in range(n):
            uid = root if v == 0 else ids.make_id(rng, b.seed, ids.ASSET, b.index)
            content = "empty" if v == 0 and rng.random() < 0.6 else "text"
            out.append(
                AssetVersion(
                    uid,
                    report_name,
                    "RESEARCH_REPORT",
                    "research_report",
                    created + 30 * v,
                    content,
                    root,
                    v + 1,
                )
            )
        if rng.random() < 0.3:  # a newer draft under a different name: not the report
            uid = ids.make_id(rng, b.seed, ids.ASSET, b.index)
            out.append(
                AssetVersion(
                    uid,
                    f"research-report-{b.index} (draft).md",
                    "RESEARCH_REPORT",
                    "research_report",
                    created + 200,
                    "text",
                    uid,
                    1,
                )
            )
    if kind == "computer" and rng.random() < 0.6:
        name = rng.choice(("notes.md", "analysis.py", "summary.md"))
        n = rng.randint(1, 3)
        root = ids.make_id(rng, b.seed, ids.ASSET, b.index)
        for v in range(n):
            uid = root if v == 0 else ids.make_id(rng, b.seed, ids.ASSET, b.index)
            typed = "code_file" if name.endswith(".py") else "doc_file"
            atype = "CODE_FILE" if typed == "code_file" else "DOC_FILE"
            out.append(AssetVersion(uid, name, atype, typed, created + 45 * v, "text", root, v + 1))
        if rng.random() < 0.5:
            handle = ids.tool_id(rng)
            out.append(
                AssetVersion(
                    handle, "workspace.md", "DOC_FILE", "doc_file", created + 5, "handle", handle, 1
                )
            )
    if kind in ("deep-research", "computer") and rng.random() < 0.15:
        uid = ids.make_id(rng, b.seed, ids.ASSET, b.index)
        out.append(
            AssetVersion(
                uid, "figure-data.md", "DOC_FILE", "doc_file", created + 90, "binary", uid, 1
            )
        )
    return tuple(out), report_name


def _status(rng: random.Random, limit_thread: bool) -> tuple[str, bool]:
    roll = rng.random()
    if roll < 0.06:
        return AWAITING, limit_thread
    if roll < 0.10:
        return CANCELED, False
    if roll < 0.12:
        return AWAITING_USER, False
    if roll < 0.135:
        return UNKNOWN_STATUS, False
    return COMPLETED, False


def make_turn(
    b: Builder,
    kind: str,
    *,
    search_mode: str | None,
    sm_key: bool,
    display_model: str | None,
    council_step: bool,
    research_answer: bool,
    stub: bool = False,
    big_ok: bool = True,
    with_variant: bool = True,
    with_assets: bool = True,
    cont_tag: str = "",
) -> Turn:
    rng = b.rng
    turn_no = len(b.turns)
    backend = ids.make_id(rng, b.seed, ids.THREAD if turn_no == 0 else ids.ENTRY, b.index)
    frontend = ids.make_id(rng, b.seed, ids.OTHER, b.index)
    created = b.clock
    duration = rng.randrange(3 * US, 240 * US) if not stub else rng.randrange(US // 10, US)
    updated = created + duration
    if stub:
        return Turn(
            turn_no,
            backend,
            frontend,
            created,
            updated,
            True,
            kind,
            search_mode,
            sm_key,
            display_model,
            "",
            f"{b.seed}:{b.index}:{turn_no}{cont_tag}",
            (),
            COMPLETED,
            False,
            None,
            (),
            (),
            (),
            False,
            False,
            (),
            False,
        )
    workflow_kind = kind in ("computer", "deep-research", "council")
    status, locked = _status(rng, b.limit_thread) if workflow_kind else (COMPLETED, False)
    web = _urls(rng, b.url_pool, rng.randint(0, 8))
    if kind in ("search", "studio", "study"):
        wsrc = tuple(u for u in web if rng.random() < 0.6)  # plain-only modes: subset
    else:
        extra = _urls(rng, b.url_pool, rng.randint(0, 5))
        wsrc = tuple(sorted(set(extra) | {u for u in web if rng.random() < 0.5}))
    assets: tuple[AssetVersion, ...] = ()
    if with_assets and kind in ("deep-research", "computer"):
        b.clock = updated
        assets, _ = _asset_versions(b, turn_no, kind)
    variant = _variant(rng, b.seed, b.index) if with_variant else None
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
    query = query_text(b.seed, b.index, turn_no, words)
    query = query if rng.random() > 0.1 else rng.choice(CJK_TITLES)
    return Turn(
        turn_no,
        backend,
        frontend,
        created,
        updated,
        False,
        kind,
        search_mode,
        sm_key,
        display_model,
        query,
        f"{b.seed}:{b.index}:{turn_no}{cont_tag}",
        _features(rng, big_ok),
        status,
        locked,
        variant,
        web,
        wsrc,
        (),
        council_step,
        research_answer,
        assets,
        kind != "computer" or rng.random() < 0.8,
    )


def _subagents(b: Builder, launcher: Turn) -> tuple[list[str], int | None]:
    """Plan sub-agent payloads launched by ``launcher``; returns anchored ids and stub time."""
    rng = b.rng
    anchored: list[str] = []
    base = launcher.updated_us

    def payload(landing: str, status: str, done: int | None, turn: int | None) -> Payload:
        pid = ids.tool_id(rng)
        bg = ids.make_id(rng, b.seed, ids.BACKGROUND, b.index)
        bgf = ids.make_id(rng, b.seed, ids.OTHER, b.index)
        locked = status == AWAITING and b.limit_thread
        anchor_status = None
        if landing == "anchored":
            anchor_status = COMPLETED if rng.random() < 0.4 else status
        created = base - rng.randrange(US, 60 * US)
        updated = done if done is not None else base + rng.randrange(5 * US, 15 * US)
        objective = tuple(subtask_text(b.seed, b.index, rng.choice(WORDS), i) for i in range(3))
        return Payload(
            pid,
            bg,
            bgf,
            status,
            anchor_status,
            locked,
            landing,
            turn,
            launcher.index,
            created,
            done,
            updated,
            rng.choice(SUBAGENT_MODELS),
            headline_text(b.seed, b.index, rng.choice(WORDS)),
            objective,
            _urls(rng, b.url_pool, rng.randint(0, 4)),
        )

    def status_pick() -> str:
        roll = rng.random()
        if roll < 0.15:
            return CANCELED
        if roll < 0.27:
            return AWAITING
        if roll < 0.30:
            return UNKNOWN_STATUS
        return COMPLETED

    for _ in range(rng.randint(0, 2)):  # anchored
        st = status_pick()
        p = payload("anchored", st, base + rng.randrange(20 * US, 600 * US), launcher.index)
        b.payloads.append(p)
        anchored.append(p.payload_id)
    for _ in range(rng.choice((0, 0, 1))):  # appendix, interrupted without completion time
        b.payloads.append(payload("appendix", rng.choice((AWAITING, CANCELED)), None, None))
    stub_at: int | None = None
    n_stub = rng.choice((0, 1, 1, 2, 3))
    if n_stub:
        first = base + 40 * US
        dones = sorted(first + rng.randrange(0, 8 * US) for _ in range(n_stub))
        stub_at = dones[-1] + rng.randrange(US // 2, int(1.5 * US))
        stub_turn = len(b.turns)  # the stub is the next turn
        for done in dones:
            st = COMPLETED if rng.random() < 0.8 else CANCELED
            b.payloads.append(payload("stub", st, done, stub_turn))
        if rng.random() < 0.5:  # just outside the 10 s window
            done = stub_at - rng.randrange(int(10.3 * US), 12 * US)
            b.payloads.append(payload("appendix", COMPLETED, done, None))
    return anchored, stub_at


def _plan(seed: int, index: int, size: int, updated_us: int | None = None) -> ThreadPlan:
    rng = random.Random(f"{seed}:{index}")
    uuid_rng = random.Random(f"{seed}:ids:{index}")
    kind = _pick_kind(rng)
    n_turns = _turn_count(rng)
    title = _title(rng, seed, index)
    no_sm = rng.random() < 0.08
    switch = not no_sm and kind in ("deep-research", "computer", "council", "study")
    switch = switch and n_turns >= 2 and rng.random() < 0.15
    no_dm = kind == "search" and not no_sm and rng.random() < 0.08
    no_dm = no_dm or (kind == "search" and no_sm and rng.random() < 0.5)
    limit_thread = kind == "computer" and rng.random() < 0.3
    b = Builder(rng, seed, index, kind, [], [], 0, 6 + n_turns * 4, limit_thread)
    # Ids first from their own stream so the thread uuid is stable and cheap.
    thread_uuid_rng = random.Random(f"{seed}:{index}:uuid")
    first_uuid = ids.make_id(thread_uuid_rng, seed, ids.THREAD, index)
    context = ids.make_id(uuid_rng, seed, ids.CONTEXT, index)
    fcontext = ids.make_id(uuid_rng, seed, ids.OTHER, index)
    token = ids.make_id(uuid_rng, seed, ids.OTHER, index)
    dm_fixed = rng.choice(DISPLAY_MODELS[kind])
    for t in range(n_turns):
        turn_kind = kind
        if switch and t < n_turns // 2:
            turn_kind = "search"
        if no_sm:
            sm, sm_key = None, rng.random() < 0.5
        else:
            sm, sm_key = SEARCH_MODE[turn_kind], True
        if no_dm:
            dm: str | None = None
        elif no_sm:
            dm = {
                "search": "turbo",
                "studio": "pplx_beta",
                "deep-research": "pplx_alpha",
                "council": "pplx_agentic_research",
                "study": "pplx_study",
                "computer": "pplx_asi_opus",
            }[turn_kind]
        else:
            dm = dm_fixed if turn_kind == kind else rng.choice(DISPLAY_MODELS[turn_kind])
        turn = make_turn(
            b,
            turn_kind,
            search_mode=sm,
            sm_key=sm_key,
            display_model=dm,
            council_step=turn_kind == "council",
            research_answer=turn_kind == "deep-research" and t == n_turns - 1,
            with_assets=(turn_kind != "deep-research" or t == n_turns - 1),
        )
        if t == 0:
            turn = dataclasses.replace(turn, backend_uuid=first_uuid)
        b.turns.append(turn)
        b.clock = max(b.clock, turn.updated_us)
        if turn_kind == "computer":
            anchored, stub_at = _subagents(b, turn)
            if anchored:
                b.turns[-1] = dataclasses.replace(turn, anchors=tuple(anchored))
            if stub_at is not None:
                b.clock = stub_at
                stub = make_turn(
                    b,
                    "computer",
                    search_mode=sm,
                    sm_key=sm_key,
                    display_model=dm,
                    council_step=False,
                    research_answer=False,
                    stub=True,
                )
                b.turns.append(stub)
                b.clock = stub.updated_us
        b.clock += rng.randrange(120 * US, 3 * 3600 * US)
    return _finish(
        b,
        seed,
        index,
        size,
        updated_us,
        first_uuid,
        context,
        fcontext,
        token,
        title,
        switch,
        no_sm,
        no_dm,
    )


def _finish(
    b: Builder,
    seed: int,
    index: int,
    size: int,
    updated_us: int | None,
    first_uuid: str,
    context: str,
    fcontext: str,
    token: str,
    title: str,
    switch: bool,
    no_sm: bool,
    no_dm: bool,
) -> ThreadPlan:
    turns = b.turns
    last = max([t.updated_us for t in turns] + [p.updated_us for p in b.payloads])
    target = updated_us if updated_us is not None else base_updated_us(seed, index)
    drop_zeros = drops_zeros(seed, index)
    if drop_zeros:
        target -= target % 1000  # trailing zeros in the fraction, which some fields drop
    shift = target - last
    turns = [
        dataclasses.replace(
            t,
            created_us=t.created_us + shift,
            updated_us=t.updated_us + shift,
            assets=tuple(
                dataclasses.replace(a, created_s=a.created_s + shift // US) for a in t.assets
            ),
        )
        for t in turns
    ]
    payloads = [
        dataclasses.replace(
            p,
            created_us=p.created_us + shift,
            updated_us=p.updated_us + shift,
            completed_us=None if p.completed_us is None else p.completed_us + shift,
        )
        for p in b.payloads
    ]
    kinds = {TRUTH_MODE[t.kind] for t in turns}
    mode = max(kinds, key=SPECIFICITY.index)
    report = None
    for t in turns:
        for a in t.assets:
            exact = a.file_name == f"research-report-{index}.md"
            newer = report is None or a.version > report[1]
            if a.asset_type == "RESEARCH_REPORT" and exact and newer:
                report = (a.uuid, a.version, a.file_name)
    return ThreadPlan(
        index=index,
        uuid=first_uuid,
        context_uuid=context,
        frontend_context_uuid=fcontext,
        rw_token=token,
        title=title,
        kind=b.kind,
        mode=mode,
        mode_switch=switch and len(kinds) > 1,
        no_search_mode=no_sm,
        no_display_model=no_dm,
        metadata_mode=METADATA_MODE[b.kind],
        space=space_of(seed, index, size),
        turns=tuple(turns),
        payloads=tuple(payloads),
        created_us=turns[0].created_us,
        updated_us=target,
        drop_zeros=drop_zeros,
        report=report,
        shape=shape_era(index, size, b.kind, turns, payloads),
    )


# The oldest part of the account uses older payload shapes (docs/dev/formats.md): of the
# oldest 45 % of threads, simple search threads get the 2025, 2024, 2023 or early-2023 shape
# by age.
SHAPE_ERAS = ((0.95, "2023-early"), (0.85, "2023"), (0.70, "2024"), (0.55, "2025"))


def shape_era(
    index: int, size: int, kind: str, turns: Sequence[Turn], payloads: Sequence[Payload]
) -> str:
    """The payload era of a generated thread: old shapes only for plain search threads."""
    if size <= 0 or index >= size or kind != "search" or payloads:
        return ""
    if any(t.stub or t.variant or t.assets or not t.answer_in_text for t in turns):
        return ""
    age = index / size
    return next((era for start, era in SHAPE_ERAS if age >= start), "")


@functools.lru_cache(maxsize=512)
def plan_thread(seed: int, index: int, size: int) -> ThreadPlan:
    """The generated (unmutated) plan of thread ``index``; cached in a small LRU."""
    return _plan(seed, index, size)


def thread_uuid(seed: int, index: int) -> str:
    """The uuid (== slug) of thread ``index`` without planning the whole thread."""
    return ids.make_id(random.Random(f"{seed}:{index}:uuid"), seed, ids.THREAD, index)


def context_uuid(seed: int, index: int) -> str:
    """The context uuid of thread ``index`` without planning the whole thread."""
    return ids.make_id(random.Random(f"{seed}:ids:{index}"), seed, ids.CONTEXT, index)


def plan_added(seed: int, index: int, size: int, updated_us: int) -> ThreadPlan:
    """A thread added after start (index >= size) whose last activity is ``updated_us``."""
    plan = _plan(seed, index, size, updated_us)
    return dataclasses.replace(plan, added=True)


def continue_thread(plan: ThreadPlan, seed: int, count: int, at_us: int, tag: str) -> ThreadPlan:
    """``plan`` with ``count`` new plain turns whose last one ends at ``at_us``."""
    rng = random.Random(f"{seed}:{plan.index}:cont:{tag}")
    b = Builder(
        rng, seed, plan.index, plan.kind, list(plan.turns), [], 0, 6 + len(plan.turns) * 4, False
    )
    last = plan.turns[-1]
    new: list[Turn] = []
    for _ in range(count):
        turn = make_turn(
            b,
            last.kind,
            search_mode=last.search_mode,
            sm_key=last.search_mode_key,
            display_model=last.display_model,
            council_step=last.kind == "council",
            research_answer=False,
            big_ok=False,
            with_variant=False,
            with_assets=False,
            cont_tag=f":c{tag}",
        )
        turn = dataclasses.replace(turn, status=COMPLETED, locked=False)
        b.turns.append(turn)
        new.append(turn)
        b.clock = turn.updated_us + rng.randrange(60 * US, 600 * US)
    shift = at_us - new[-1].updated_us
    moved = tuple(
        dataclasses.replace(t, created_us=t.created_us + shift, updated_us=t.updated_us + shift)
        for t in new
    )
    return dataclasses.replace(plan, turns=plan.turns + moved, updated_us=at_us)


def rewrite_turn(plan: ThreadPlan, seed: int, turn_no: int | None, at_us: int) -> ThreadPlan:
    """``plan`` with one answer rewritten into a registered variant (a real hit)."""
    candidates = [t.index for t in plan.turns if not t.stub]
    target = candidates[-1] if turn_no is None else turn_no
    if target not in candidates:
        raise ValueError(f"turn {turn_no} is not a rewritable turn of thread {plan.uuid}")
    rng = random.Random(f"{seed}:{plan.index}:rewrite:{at_us}")
    sibling = ids.make_id(rng, seed, ids.SIBLING, plan.index)
    variant = Variant(
        "override-default-model-class:qwen3_instruct-01f7f", sibling, "SELECTED", True
    )
    turns = list(plan.turns)
    turns[target] = dataclasses.replace(
        turns[target], variant=variant, rewritten=True, updated_us=at_us
    )
    return dataclasses.replace(plan, turns=tuple(turns), updated_us=at_us)


def _target_turn(plan: ThreadPlan, turn_no: int | None) -> int:
    candidates = [t.index for t in plan.turns if not t.stub]
    target = candidates[-1] if turn_no is None else turn_no
    if target not in candidates:
        raise ValueError(f"turn {turn_no} is not an answered turn of thread {plan.uuid}")
    return target


def edit_turn(plan: ThreadPlan, turn_no: int | None, at_us: int | None) -> ThreadPlan:
    """``plan`` with one answer edited under the same entry id: other words, one source
    swapped. ``at_us`` None edits silently (no update time moves)."""
    target = _target_turn(plan, turn_no)
    turns = list(plan.turns)
    old = turns[target]
    web = (*old.web[1:], 90 + old.edited) if old.web else (90 + old.edited,)
    new = dataclasses.replace(old, edited=old.edited + 1, web=web)
    if at_us is not None:
        new = dataclasses.replace(new, updated_us=at_us)
    turns[target] = new
    updated = plan.updated_us if at_us is None else at_us
    return dataclasses.replace(plan, turns=tuple(turns), updated_us=updated)


def substitute_turn(plan: ThreadPlan, turn_no: int | None, served: str, at_us: int) -> ThreadPlan:
    """``plan`` with one turn served by ``served`` while the chosen model stays."""
    target = _target_turn(plan, turn_no)
    turns = list(plan.turns)
    turns[target] = dataclasses.replace(turns[target], served_model=served, updated_us=at_us)
    return dataclasses.replace(plan, turns=tuple(turns), updated_us=at_us)
