"""The relation graph of an archive: which stored threads belong together, and why.

Pure: the shell decodes each thread's raw files
(:func:`~pplx_archiver.core.thread.decode.decode_thread`) and hands :func:`thread_facts` the
decoded :class:`Thread`; :func:`build_edges` turns the facts of every thread into a sorted tuple of
:class:`Edge`; :func:`edges_jsonl` and :func:`graph_md` give the bytes of ``relations/edges.jsonl``
and ``relations/graph.md``. Same facts → same bytes.

Kinds (``src`` → ``dst``):

- ``same_space``: consecutive threads of one space, in time order (a chain, not a clique:
  a space of n threads gives n − 1 edges); evidence ``space <uuid or slug>``.
- ``same_prompt``: threads whose first queries are equal after NFKC, casefold, whitespace
  collapse and removal of trailing punctuation; chained in time order inside each cluster;
  evidence ``scheduled task`` when both ends were started by a scheduled task (first turn's
  ``query_source`` is ``scheduled`` or ``perplexity_tasks``), else ``manual resend``.
- ``references``: an answer or a citation of ``src`` links ``dst`` by a thread URL
  (``…/search/<slug>``) or a bare uuid; evidence lists the channels (``answer url``,
  ``answer uuid``, ``citation url``, ``citation uuid``).
- ``subagent_of``: ``src`` is a sub-agent run or a council model slot of ``dst``: ``dst``'s
  background entries carry ``src``'s uuid (evidence ``sub-agent run <run id>``), ``src``'s
  ``run_subagent`` step carries a run id anchored in ``dst`` (same evidence), or a council
  member item of ``dst`` is named ``<src uuid>_<model>`` (evidence ``council model <model>``).

No edge joins a thread to itself; one edge per (src, dst, kind), evidence merged.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import pairwise

import orjson

from pplx_archiver.core.thread.citations import entry_sources
from pplx_archiver.core.thread.subagents import anchor_ids, collect_payloads
from pplx_archiver.core.thread.values import Entry, Thread, Workflow

KINDS = ("same_space", "same_prompt", "references", "subagent_of")
SCHEDULED_SOURCES = frozenset({"scheduled", "perplexity_tasks"})

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A thread URL: perplexity.ai/search/<slug> (any host spelling, optional www).
_THREAD_URL = re.compile(r"perplexity\.ai/search/([A-Za-z0-9._~-]+)", re.IGNORECASE)
_COUNCIL_ID = re.compile(
    r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})_(.+)$"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadFacts:
    """What the relation graph needs to know of one stored thread.

    ``ids`` are every identifier another thread may use for this one (thread uuid, slug,
    context uuid, entry uuids). ``links`` are the references its answers and citations
    make, as (identifier, evidence) pairs in the order found (:func:`text_links`; the texts
    themselves are not kept, so the facts of a large archive stay small).
    ``background_ids`` pairs a background entry id with its sub-agent run id; ``anchors`` are
    the run ids this thread anchors; ``runs`` the run ids of its own ``run_subagent`` steps;
    ``council`` pairs (member id prefix, model) of its council items. Sorted tuples, not
    sets (a small set costs several times its items: the facts of every thread are held).
    """

    uuid: str
    created_us: int | None = None
    title: str = ""
    space: str = ""
    space_title: str = ""
    first_query: str = ""
    scheduled: bool = False
    ids: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    background_ids: tuple[tuple[str, str], ...] = ()
    anchors: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    council: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Edge:
    """One relation: ``src`` relates to ``dst`` as ``kind``, because of ``evidence``."""

    src: str
    dst: str
    kind: str
    evidence: str

    def as_dict(self) -> dict[str, str]:
        """The JSON object of ``edges.jsonl``."""
        return {"src": self.src, "dst": self.dst, "kind": self.kind, "evidence": self.evidence}


def normalize_prompt(query: str) -> str:
    """A first query as compared for ``same_prompt``: NFKC, casefold, one space, no trailing
    punctuation (``"What is X?? "`` and ``"what  is x"`` are equal)."""
    text = " ".join(unicodedata.normalize("NFKC", query).casefold().split())
    end = len(text)
    while end and (unicodedata.category(text[end - 1]).startswith("P") or text[end - 1] == " "):
        end -= 1
    return text[:end]


def _workflows(entry: Entry) -> Iterator[Workflow]:
    """Every workflow of an entry (blocks and plain ASI items), nested ones included."""
    stack: list[Workflow] = []
    if entry.blocks.workflow is not None:
        stack.append(entry.blocks.workflow)
    for plain in entry.steps:
        stack.extend(i.workflow for i in plain.items if i.workflow is not None)
    while stack:
        current = stack.pop(0)
        yield current
        for step in current.steps:
            stack.extend(i.workflow for i in step.items if i.workflow is not None)


def _texts(entry: Entry) -> list[str]:
    texts = [entry.final_answer or "", entry.blocks.answer or "", *entry.blocks.sections]
    for workflow in _workflows(entry):
        for step in workflow.steps:
            texts.extend(i.text for i in step.items if i.text)
    return [t for t in texts if t]


def thread_facts(
    uuid: str, thread: Thread, *, slug: str = "", context_uuid: str = ""
) -> ThreadFacts:
    """The facts of one decoded thread stored under ``uuid``."""
    entries = thread.entries
    ids = {uuid, slug, context_uuid}
    answers: list[str] = []
    citations: list[str] = []
    anchors: set[str] = set()
    runs: set[str] = set()
    council: set[tuple[str, str]] = set()
    for entry in entries:
        ids.update((entry.key, entry.uuid, entry.slug, entry.context_uuid))
        answers.extend(_texts(entry))
        citations.extend(r.url for r in entry_sources(entry) if r.url)
        anchors.update(anchor_ids(entry))
        for workflow in _workflows(entry):
            for step in workflow.steps:
                if step.tool_name == "run_subagent" and step.id:
                    runs.add(step.id)
                for item in step.items:
                    member = item.workflow
                    if member is None or member.mode != "LLM_COUNCIL":
                        continue
                    match = _COUNCIL_ID.match(item.id)
                    if match:
                        council.add((match.group(1).lower(), member.model or match.group(2)))
    for entry in thread.background:  # sub-agent answers and citations are the thread's too
        answers.extend(_texts(entry))
        citations.extend(r.url for r in entry_sources(entry) if r.url)
    background: dict[str, str] = {}
    for payload in collect_payloads(thread.background):
        for key in (payload.entry.key, payload.entry.uuid):
            if key:
                background.setdefault(key, payload.id)
    # A thread's run ids anchored in itself are its own sub-agents, not its parent's.
    runs -= anchors
    first = entries[0] if entries else None
    source = first.where.get_str("query_source") if first is not None else ""
    space = thread.space
    for entry in entries:
        space = space or entry.space
    return ThreadFacts(
        uuid=uuid,
        created_us=thread.created_us
        if thread.created_us is not None
        else (first.created_us if first is not None else None),
        title=thread.title or (first.thread_title if first is not None else ""),
        space=(space.uuid or space.slug) if space is not None else "",
        space_title=space.title if space is not None else "",
        first_query=first.query if first is not None else "",
        scheduled=source in SCHEDULED_SOURCES,
        ids=tuple(sorted({i for i in ids if i})),
        links=text_links(answers, citations),
        background_ids=tuple(background.items()),
        anchors=tuple(sorted(anchors)),
        runs=tuple(sorted(runs)),
        council=tuple(sorted(council)),
    )


def _time_order(group: Iterable[ThreadFacts]) -> list[ThreadFacts]:
    return sorted(group, key=lambda f: (f.created_us is None, f.created_us or 0, f.uuid))


def _chains(
    groups: Mapping[str, list[ThreadFacts]],
) -> Iterator[tuple[str, ThreadFacts, ThreadFacts]]:
    for key in sorted(groups):
        ordered = _time_order(groups[key])
        for before, after in pairwise(ordered):
            yield key, before, after


def _resolver(facts: Sequence[ThreadFacts]) -> dict[str, str]:
    """Identifier (lower case) → thread uuid; an identifier two threads share is dropped,
    except a thread's own uuid, which always names it."""
    owners: dict[str, set[str]] = {}
    for f in facts:
        for ident in f.ids:
            owners.setdefault(ident.lower(), set()).add(f.uuid)
    resolved = {k: next(iter(v)) for k, v in owners.items() if len(v) == 1}
    resolved.update({f.uuid.lower(): f.uuid for f in facts})
    return resolved


def _links(texts: Iterable[str], channel: str) -> Iterator[tuple[str, str]]:
    """(identifier, evidence) for every thread URL and bare uuid in ``texts``."""
    for text in texts:
        seen_in_urls: set[str] = set()
        for match in _THREAD_URL.finditer(text):
            token = match.group(1).rstrip(".").lower()  # a sentence's full stop is not the slug's
            seen_in_urls.add(token)
            yield token, f"{channel} url"
            for inner in _UUID.findall(token):
                seen_in_urls.add(inner.lower())
                yield inner.lower(), f"{channel} url"
        for match in _UUID.finditer(text):
            token = match.group(0).lower()
            if token not in seen_in_urls:
                yield token, f"{channel} uuid"


def text_links(answers: Iterable[str], citations: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(identifier, evidence) of every thread URL and bare uuid in a thread's answers and
    citations, each pair once, in the order found."""
    found = (*_links(answers, "answer"), *_links(citations, "citation"))
    return tuple(dict.fromkeys(found))


_Found = tuple[str, str, str, str]  # (src, dst, kind, evidence)


def _grouped_edges(threads: Iterable[ThreadFacts]) -> Iterator[_Found]:
    """same_space and same_prompt: each group chained in time order."""
    spaces: dict[str, list[ThreadFacts]] = {}
    prompts: dict[str, list[ThreadFacts]] = {}
    for f in threads:
        if f.space:
            spaces.setdefault(f.space, []).append(f)
        key = normalize_prompt(f.first_query)
        if key:
            prompts.setdefault(key, []).append(f)
    for space, before, after in _chains(spaces):
        yield before.uuid, after.uuid, "same_space", f"space {space}"
    for _key, before, after in _chains(prompts):
        both = before.scheduled and after.scheduled
        yield (before.uuid, after.uuid, "same_prompt",
               "scheduled task" if both else "manual resend")  # fmt: skip


def _reference_edges(
    threads: Sequence[ThreadFacts], resolve: Mapping[str, str]
) -> Iterator[_Found]:
    """references: answers or citations naming another archived thread."""
    for f in threads:
        for ident, evidence in f.links:
            target = resolve.get(ident)
            if target is not None:
                yield f.uuid, target, "references", evidence


def _subagent_edges(threads: Sequence[ThreadFacts], resolve: Mapping[str, str]) -> Iterator[_Found]:
    """subagent_of: background run ids, council model slots and anchored run ids."""
    for parent in threads:
        for bg_id, run_id in parent.background_ids:
            target = resolve.get(bg_id.lower())
            if target is not None:
                yield target, parent.uuid, "subagent_of", f"sub-agent run {run_id}"
        for member, model in parent.council:
            target = resolve.get(member)
            if target is not None:
                yield target, parent.uuid, "subagent_of", f"council model {model}"
    anchored: dict[str, set[str]] = {}
    for parent in threads:
        for run_id in parent.anchors:
            anchored.setdefault(run_id, set()).add(parent.uuid)
    for child in threads:
        for run_id in child.runs:
            for parent_uuid in anchored.get(run_id, ()):
                yield child.uuid, parent_uuid, "subagent_of", f"sub-agent run {run_id}"


def build_edges(facts: Sequence[ThreadFacts]) -> tuple[Edge, ...]:
    """Every edge of the graph, sorted by (src, dst, kind); see the module docstring."""
    threads = list({f.uuid: f for f in facts}.values())
    resolve = _resolver(threads)
    found: dict[tuple[str, str, str], set[str]] = {}
    for src, dst, kind, evidence in (
        *_grouped_edges(threads),
        *_reference_edges(threads, resolve),
        *_subagent_edges(threads, resolve),
    ):
        if src != dst:
            found.setdefault((src, dst, kind), set()).add(evidence)
    return tuple(
        Edge(src, dst, kind, "; ".join(sorted(evidence)))
        for (src, dst, kind), evidence in sorted(found.items())
    )


def edges_jsonl(edges: Sequence[Edge]) -> bytes:
    """``relations/edges.jsonl``: one JSON object per edge, keys sorted, in edge order."""
    return b"".join(orjson.dumps(e.as_dict(), option=orjson.OPT_SORT_KEYS) + b"\n" for e in edges)


def counts(edges: Iterable[Edge]) -> dict[str, int]:
    """Edges per kind, every kind present (zero when none)."""
    out = dict.fromkeys(KINDS, 0)
    for e in edges:
        out[e.kind] = out.get(e.kind, 0) + 1
    return out


def _clean(text: str, limit: int = 80) -> str:
    """Text for a Markdown line: no control characters, Markdown and HTML specials escaped."""
    text = " ".join(_CONTROL.sub(" ", text).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~&])", r"\\\1", text)


def _clusters(edges: Sequence[Edge], kind: str) -> list[list[str]]:
    """Connected groups of threads joined by edges of ``kind`` (sorted, largest first)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in edges:
        if e.kind == kind:
            a, b = find(e.src), find(e.dst)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[str, list[str]] = {}
    for node in parent:
        groups.setdefault(find(node), []).append(node)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))


_NO_FACTS = ThreadFacts(uuid="")


def graph_md(edges: Sequence[Edge], facts: Sequence[ThreadFacts]) -> bytes:
    """``relations/graph.md``: counts per kind, clusters, reference and sub-agent edges."""
    by_uuid = {f.uuid: f for f in facts}

    def name(uuid: str) -> str:
        f = by_uuid.get(uuid)
        title = _clean(f.title) if f is not None and f.title else "(untitled)"
        return f"{title} `{_CONTROL.sub('', uuid).replace('`', '')}`"

    lines = ["# Relations", "", f"{len(by_uuid)} threads, {len(edges)} edges.", ""]
    lines += ["| kind | edges |", "|---|---|"]
    lines += [f"| {kind} | {n} |" for kind, n in counts(edges).items()]
    for kind, heading in (("same_prompt", "Same prompt"), ("same_space", "Same space")):
        clusters = _clusters(edges, kind)
        lines += ["", f"## {heading} clusters ({len(clusters)})"]
        for number, group in enumerate(clusters, 1):
            ordered = _time_order(by_uuid[u] for u in group if u in by_uuid)
            head = ordered[0] if ordered else _NO_FACTS
            if kind == "same_prompt":
                label = f"prompt “{_clean(head.first_query)}”"
            else:
                label = f"space “{_clean(head.space_title or head.space)}” ({_clean(head.space)})"
            lines += ["", f"{number}. {label}: {len(group)} threads"]
            lines += [f"   - {name(f.uuid)}" for f in ordered]
    for kind, heading in (("references", "References"), ("subagent_of", "Sub-agents")):
        chosen = [e for e in edges if e.kind == kind]
        lines += ["", f"## {heading} ({len(chosen)})", ""]
        arrow = "links" if kind == "references" else "is a sub-agent of"
        lines += [f"- {name(e.src)} {arrow} {name(e.dst)} ({_clean(e.evidence)})" for e in chosen]
        if not chosen:
            lines.append("None.")
    return ("\n".join(lines).rstrip("\n") + "\n").encode("utf-8")
