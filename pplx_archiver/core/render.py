"""The render entry point: one thread's raw pages in, every derived archive file out.

``render_thread`` decodes the pages, detects the mode, places sub-agent payloads, renders
``conversation.md``, ``turns/turn_NNNN.md``, ``sources.json``/``sources.md``,
``thread.json`` and ``report.md``, and returns findings for the shell to log. Pure and
deterministic: same input, byte-identical output.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Any

import orjson

from pplx_archiver.core import labels
from pplx_archiver.core import markdown as md
from pplx_archiver.core.answers import extract_answer, workflow_answer
from pplx_archiver.core.assets import assets_of
from pplx_archiver.core.citations import dedupe, entry_sources, sources_json, workflow_sources
from pplx_archiver.core.decode import decode_thread
from pplx_archiver.core.interruptions import annotation, kind_of, record
from pplx_archiver.core.layout import thread_dir_name, thread_key
from pplx_archiver.core.model import Finding, RenderContext, RenderResult, ThreadInput
from pplx_archiver.core.modes import detect_mode, needs_blocks
from pplx_archiver.core.prose import ThreadProse, TurnProse, joined, sources_text
from pplx_archiver.core.report import pick_report, render_report
from pplx_archiver.core.subagents import STUB_TRIGGER, Payload, collect_payloads, place
from pplx_archiver.core.timeparse import date_of, iso, parse_ts
from pplx_archiver.core.values import Entry, Thread, WebResult
from pplx_archiver.core.variants import variant_records
from pplx_archiver.core.workflow import (
    Scope,
    code,
    inline,
    render_plain_steps,
    render_steps,
    render_subagent,
    source_list,
)
from pplx_archiver.errors import PayloadError

__all__ = ["ThreadParts", "TurnParts", "needs_blocks", "render_parts", "render_thread"]

BASE_URL = "https://www.perplexity.ai"
_YAML_VERBATIM = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII except " and \


# C0 controls but tab and newline, and DEL, shown as their Unicode control pictures (␀ ␇ ␛):
# a Markdown file stays text for grep and editors whatever a payload held.
_CONTROLS = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)} | {0x7F: 0x2421}
_HAS_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _md_bytes(text: str) -> bytes:
    """A Markdown file's bytes: UTF-8, no control character but tab and newline."""
    if _HAS_CONTROL.search(text):
        text = text.translate(_CONTROLS)
    return text.encode("utf-8", "replace")


def _yaml(value: str | None) -> str:
    """A YAML double-quoted scalar (or ``null``) safe for any text."""
    if value is None:
        return "null"
    if _YAML_VERBATIM.fullmatch(value):
        return f'"{value}"'
    out = ['"']
    for ch in value:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"):
            code = ord(ch)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _thread_uuid(inp: ThreadInput, thread: Thread) -> str:
    for entry in thread.entries:
        if entry.slug:
            return entry.slug
    if inp.listing is not None and (inp.listing.slug or inp.listing.thread_id):
        return inp.listing.slug or inp.listing.thread_id
    if thread.entries:
        return thread.entries[0].key
    return inp.thread_id


def _real_uuid(address: str, thread: Thread) -> str:
    """The thread's uuid: the address itself today (the slug is the first entry's uuid); for
    an older text slug the first entry's ``backend_uuid`` (else ``uuid``), else
    ``context_uuid`` — never the words of the slug."""
    return thread_key(address, (c for e in thread.entries for c in (e.key, e.uuid, e.context_uuid)))


def _utc(text: str) -> str:
    """An update time in the front-matter format (``…Z``, UTC); unreadable text as is."""
    try:
        return iso(parse_ts(text)) or text
    except PayloadError:
        return text


def _completeness(thread: Thread) -> dict[str, Any]:
    plain = [p for p in thread.pages if p.flavour == "plain"]
    blocks = [p for p in thread.pages if p.flavour == "blocks"]

    def finished(pages: list[Any]) -> bool:
        if not pages:
            return True
        cursors = [p.next_cursor for p in pages if p.next_cursor]
        last = pages[-1]
        ended = not last.has_next_page or not last.next_cursor
        return ended and len(cursors) == len(set(cursors))

    return {
        "plain_pages": len(plain),
        "blocks_pages": len(blocks),
        "entries": len(thread.entries),
        "background_entries": len(thread.background),
        "cursor_chain": [p.next_cursor for p in plain],
        "complete": bool(plain or blocks) and finished(plain) and finished(blocks),
    }


def _findings(events: list[tuple[str, dict[str, Any]]], thread_uuid: str) -> tuple[Finding, ...]:
    return tuple(
        Finding(event=name, level="warning", fields={"thread_uuid": thread_uuid, **fields})
        for name, fields in events
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TurnParts:
    """The sections of one rendered turn, each structure-safe Markdown (``turns/`` files are
    assembled from them; other readers such as the static site render them their own way)."""

    number: int
    entry_uuid: str
    query: str
    work: tuple[str, ...]
    work_note: str
    subagents: tuple[str, ...]
    answer: str
    citations: tuple[WebResult, ...]
    note: str = ""  # the one-line note of a degraded turn
    related: str = ""  # the "Related questions" section, when the turn has related queries


@dataclasses.dataclass(frozen=True, slots=True)
class ThreadParts:
    """A whole rendering: the archive files and record, plus the sections of every turn."""

    result: RenderResult
    turns: tuple[TurnParts, ...]
    appendix: tuple[str, ...]
    report: str | None


class _Renderer:
    """Holds the decoded thread and the state shared by the files of one rendering."""

    def __init__(self, inp: ThreadInput, ctx: RenderContext, thread: Thread | None = None) -> None:
        self.inp = inp
        self.ctx = ctx
        self.lang = ctx.lang
        self.labels = labels.LABELS.get(self.lang, labels.LABELS[labels.DEFAULT_LANG])
        if thread is None:
            thread = decode_thread(inp.plain_pages, inp.blocks_pages)
        self.thread = thread
        thread = self.thread
        self.address = _thread_uuid(inp, thread)  # the slug the thread is addressed by
        self.uuid = _real_uuid(self.address, thread)  # index key, thread.json uuid, folder
        listing = inp.listing
        self.title = (
            thread.title
            or (listing.title if listing else "")
            or next((e.thread_title for e in thread.entries if e.thread_title), "")
            or next((e.query for e in thread.entries if e.query), "")
        )
        computer_hint = thread.metadata_mode == "4" or (
            listing is not None and (listing.mode or "").upper() in ("ASI", "COMPUTER")
        )
        self.decision = detect_mode(thread, listing)
        self.mode = self.decision.mode
        route = "computer/tasks" if self.mode == "computer" and computer_hint else "search"
        self.url = f"{BASE_URL}/{route}/{self.address}"
        self.payloads = collect_payloads(thread.background)
        self.placement = place(thread.entries, self.payloads)
        self.scope = Scope(
            lang=self.lang,
            thread_uuid=self.uuid,
            by_id=self.placement.by_id,
            locked=thread.locked_reason,
        )
        self.scope.findings.extend((n, dict(f)) for n, f in self.decision.findings)
        self.prose: list[TurnProse] = []
        self.parts: list[TurnParts] = []
        self.appendix: list[str] = []
        self.report_md: str | None = None
        # turn number → (JSON path, reason) of what could not be read in that turn
        self.degraded: dict[int, tuple[tuple[str, str], ...]] = {}

    def label(self, key: str) -> str:
        return self.labels[key]

    # -- turns ------------------------------------------------------------------------
    def note(self, problems: tuple[tuple[str, str], ...]) -> str:
        """The one-line note of a degraded turn ('' when nothing was left out)."""
        if not problems:
            return ""
        path, reason = problems[0]
        more = f" (+{len(problems) - 1})" if len(problems) > 1 else ""
        return "> " + labels.label(
            "degraded", self.lang, path=code(path), reason=inline(reason), more=more
        )

    def turn(self, number: int, entry: Entry) -> tuple[str, TurnParts]:
        """(turn file text, its sections) of one turn.

        A turn whose rendering meets a value it cannot read is rendered again from what
        the decoder recovered (query, answer, sources), as a degraded turn.
        """
        scope = self.scope
        mark = (len(scope.findings), len(scope.interruptions), set(scope.rendered_payloads))
        prose_mark = len(self.prose)
        try:
            part = self.turn_parts(number, entry)
        except PayloadError as exc:
            del scope.findings[mark[0] :], scope.interruptions[mark[1] :]
            del self.prose[prose_mark:]
            scope.rendered_payloads = mark[2]
            problems = (*entry.problems, (exc.path, exc.message))
            self.degraded[number] = problems
            part = self.plain_parts(number, entry, problems)
        self.parts.append(part)
        parts = [f"# {self.label('turn')} {number}"]
        if part.note:
            parts.append(part.note)
        parts.append(f"## {self.label('query')}\n\n{part.query}")
        if part.work:
            parts.append(
                f"## {self.label('work_process')}{part.work_note}\n\n" + "\n\n".join(part.work)
            )
        if part.subagents:
            parts.append(f"## {self.subagent_work(part)}")
        parts.append(f"## {self.label('answer')}\n\n{part.answer}")
        unique = part.citations
        if unique:
            parts.append(f"## {self.label('citations')} ({len(unique)})\n\n{source_list(unique)}")
        if part.related:
            parts.append(part.related)
        return "\n\n".join(parts) + "\n", part

    def subagent_work(self, part: TurnParts) -> str:
        """The "Sub-agent work" section of a stub turn, without its heading marks: the same
        text in the turn file (``##``) and in ``conversation.md`` (``###``)."""
        return f"{self.label('subagent_work')}\n\n" + "\n\n".join(part.subagents)

    def plain_parts(
        self, number: int, entry: Entry, problems: tuple[tuple[str, str], ...]
    ) -> TurnParts:
        """A turn from the decoded query, answer and sources only, with its note."""
        query = md.safe_markdown(entry.query)
        answer = entry.final_answer or entry.blocks.answer or ""
        shown = self.scope.block(answer) if answer.strip() else f"*{self.label('no_answer')}*"
        unique = dedupe([*entry.sources, *entry.final_web_results, *entry.blocks.web_results])
        self.prose.append(
            TurnProse(
                turn=number,
                created=iso(entry.created_us),
                query=entry.query,
                answer=answer,
                sources=sources_text(unique),
            )
        )
        return TurnParts(
            number=number,
            entry_uuid=entry.key,
            query=query,
            work=(),
            work_note="",
            subagents=(),
            answer=shown,
            citations=unique,
            note=self.note(problems),
            related=self.related(entry),
        )

    def related(self, entry: Entry) -> str:
        """The "Related questions" section of a turn ('' without related queries)."""
        if not entry.related:
            return ""
        items = "\n".join(f"- {inline(q)}" for q in entry.related)
        return f"## {self.label('related')}\n\n{items}"

    def turn_parts(self, number: int, entry: Entry) -> TurnParts:
        """The sections of one turn, each as structure-safe Markdown; PayloadError on a value
        it cannot read."""
        scope = self.scope
        where = f"turn_{number:04d}"
        index = number - 1
        stub = entry.trigger == STUB_TRIGGER
        anchored = self.placement.anchored.get(index, ())
        on_stub = self.placement.stubs.get(index, ())
        query = md.safe_markdown(entry.query)
        cited: list[WebResult] = entry_sources(entry)
        conclusions: list[str] = []
        workflow = entry.blocks.workflow
        work: list[str] = []
        heading_note = ""
        if workflow is not None:
            kind = kind_of(
                workflow.status, workflow.locked_reason or entry.locked_reason or scope.locked
            )
            if kind is not None:
                scope.interruptions.append(record(where, kind, workflow.headline, workflow.status))
            heading_note = annotation(kind, self.lang)
            if workflow.steps:
                summary = f"{self.label('steps')} ({len(workflow.steps)}){heading_note}"
                steps_md = render_steps(workflow.steps, scope, where, 0)
                work.append(md.details(summary, steps_md, trusted=True))
        for payload in anchored:
            cited.extend(workflow_sources(payload.workflow))
            if payload.index not in scope.rendered_payloads:
                scope.rendered_payloads.add(payload.index)
                work.append(self.payload_block(payload, f"{where}/subagent"))
                conclusions.append(_conclusion(payload))
        plain = render_plain_steps(entry.steps, scope, where)
        if plain:
            summary = f"{self.label('steps')} ({len(entry.steps)})"
            work.append(md.details(summary, plain, trusted=True))
        blocks = []
        for payload in on_stub:
            cited.extend(workflow_sources(payload.workflow))
            scope.rendered_payloads.add(payload.index)
            blocks.append(self.payload_block(payload, f"{where}/subagent_stub"))
            conclusions.append(_conclusion(payload))
        answer = extract_answer(entry, self.mode, [p.workflow for p in anchored], stub=stub)
        shown = scope.block(answer) if answer.strip() else f"*{self.label('no_answer')}*"
        unique = dedupe(cited)
        self.prose.append(
            TurnProse(
                turn=number,
                created=iso(entry.created_us),
                query=entry.query,
                answer=answer,
                subagents=joined(conclusions),
                sources=sources_text(unique),
            )
        )
        return TurnParts(
            number=number,
            entry_uuid=entry.key,
            query=query,
            work=tuple(work),
            work_note=heading_note,
            subagents=tuple(blocks),
            answer=shown,
            citations=unique,
            note=self.note(entry.problems),
            related=self.related(entry),
        )

    def payload_block(self, payload: Payload, location: str) -> str:
        if payload.workflow is None:  # a background entry with a plain answer, no workflow
            return self.plain_payload(payload)
        return render_subagent(
            payload.workflow,
            self.scope,
            location,
            0,
            anchor=None,
            record_it=True,
            locked=payload.locked_reason,
        )

    def plain_payload(self, payload: Payload) -> str:
        """A workflow-less background entry: its query as heading, its answer and sources."""
        entry = payload.entry
        title = inline(entry.query) or inline(payload.id) or "?"
        parts = [f"#### {self.label('subagent')}: {title}"]
        answer = entry.final_answer or entry.blocks.answer or ""
        if answer.strip():
            parts.append(f"**{self.label('conclusion')}**\n\n{self.scope.block(answer)}")
        cited = dedupe(entry_sources(entry))
        if cited:
            parts.append(f"**{self.label('citations')}** ({len(cited)})\n\n{source_list(cited)}")
        return "\n\n".join(parts)

    # -- whole thread -------------------------------------------------------------------
    def render(self) -> RenderResult:
        thread = self.thread
        files: dict[str, bytes] = {}
        answers: list[TurnParts] = []
        all_cited: list[WebResult] = []
        for number, entry in enumerate(thread.entries, 1):
            if entry.problems:
                self.degraded[number] = entry.problems
            text, part = self.turn(number, entry)
            files[f"turns/turn_{number:04d}.md"] = _md_bytes(text)
            answers.append(part)
            all_cited.extend(part.citations)
        appendix: list[str] = []
        for payload in self.placement.appendix:
            all_cited.extend(workflow_sources(payload.workflow))
            if payload.workflow is None:
                all_cited.extend(entry_sources(payload.entry))
            self.scope.rendered_payloads.add(payload.index)
            appendix.append(self.payload_block(payload, "background_unassigned"))
        thread_row = TurnProse(
            turn=0,
            created=iso(self.created_us()),
            title=self.title,
            subagents=joined(_conclusion(p) for p in self.placement.appendix),
        )
        self.appendix = appendix
        sources = dedupe(all_cited)
        files["conversation.md"] = _md_bytes(self.conversation(answers, appendix))
        files["sources.json"] = sources_json(sources)
        files["sources.md"] = _md_bytes(self.sources_md(sources))
        report = self.report_md = self.report()
        if report is not None:
            files["report.md"] = _md_bytes(report)
        variants = self.variants()
        record_ = self.record(sources, variants)
        files["thread.json"] = (
            orjson.dumps(record_, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
        events = list(self.scope.findings)
        events.extend(self.degraded_events())
        for rec in self.scope.interruptions:
            events.append(("WORKFLOW_INTERRUPTED", dict(rec)))
        for var in variants:
            events.append(("ANSWER_VARIANT_DETECTED", dict(var)))
        created = self.created_us()
        return RenderResult(
            thread_uuid=self.uuid,
            mode=self.mode,
            title=self.title,
            dir_name=thread_dir_name(self.mode, date_of(created), self.title, self.uuid),
            files=dict(sorted(files.items())),
            record=record_,
            findings=_findings(events, self.uuid),
            variants=variants,
            prose=ThreadProse(rows=(thread_row, *self.prose)),
        )

    def degraded_events(self) -> list[tuple[str, dict[str, Any]]]:
        """One ENTRY_DEGRADED finding per value left out (turns, background, metadata)."""
        out: list[tuple[str, dict[str, Any]]] = []
        for number, problems in sorted(self.degraded.items()):
            for path, reason in problems:
                fields = {"turn": number, "entry_index": number - 1, "json_path": path}
                out.append(("ENTRY_DEGRADED", {**fields, "reason": reason}))
        for index, entry in enumerate(self.thread.background):
            for path, reason in entry.problems:
                fields = {"background_index": index, "json_path": path, "reason": reason}
                out.append(("ENTRY_DEGRADED", fields))
        for path, reason in self.thread.problems:
            out.append(("ENTRY_DEGRADED", {"json_path": path, "reason": reason}))
        return out

    def created_us(self) -> int | None:
        if self.thread.created_us is not None:
            return self.thread.created_us
        times = [e.created_us for e in self.thread.entries if e.created_us is not None]
        return min(times) if times else None

    def last_updated(self) -> str:
        listing = self.inp.listing
        if listing is not None and listing.updated_at:
            return listing.updated_at
        newest = max(
            (e for e in self.thread.entries if e.updated_us is not None),
            key=lambda e: e.updated_us or 0,
            default=None,
        )
        if newest is not None:
            return newest.updated_raw or iso(newest.updated_us)
        return self.thread.updated_raw

    def space(self) -> dict[str, str] | None:
        listing = self.inp.listing
        space = (listing.space if listing else None) or self.thread.space
        if space is None:
            space = next((e.space for e in self.thread.entries if e.space), None)
        if space is None:
            return None
        return {"uuid": space.uuid, "slug": space.slug, "title": space.title}

    def model(self) -> str:
        models: list[str] = []
        for entry in self.thread.entries:
            if entry.display_model and entry.display_model not in models:
                models.append(entry.display_model)
        return ", ".join(models)

    def conversation(self, answers: list[TurnParts], appendix: list[str]) -> str:
        space = self.space()
        front = [
            "---",
            f"title: {_yaml(self.title)}",
            f"uuid: {_yaml(self.uuid)}",
            f"url: {_yaml(self.url)}",
            f"mode: {_yaml(self.mode)}",
            f"created: {_yaml(iso(self.created_us()))}",
            f"updated: {_yaml(_utc(self.last_updated()))}",
            f"space: {_yaml(space['title'] or space['slug'] if space else None)}",
            f"model: {_yaml(self.model())}",
            "---",
        ]
        parts = ["\n".join(front), f"# {inline(self.title) or '?'}"]
        for number, part in enumerate(answers, 1):
            note = self.note(self.degraded.get(number, ()))
            work = f"### {self.subagent_work(part)}\n\n" if part.subagents else ""
            parts.append(
                f"## {self.label('turn')} {number}\n\n"
                + (f"{note}\n\n" if note else "")
                + f"### {self.label('query')}\n\n{part.query}\n\n{work}"
                f"### {self.label('answer')}\n\n{part.answer}"
            )
        if appendix:
            parts.append(
                f"## {self.label('background_unassigned')}\n\n{self.label('appendix_note')}\n\n"
                + "\n\n".join(appendix)
            )
        return "\n\n".join(parts) + "\n"

    def sources_md(self, sources: tuple[WebResult, ...]) -> str:
        head = f"# {self.label('sources')} ({len(sources)})"
        return head + ("\n\n" + source_list(sources) if sources else "") + "\n"

    def report(self) -> str | None:
        downloads = self.inp.downloads
        if not downloads:
            return None
        refs = assets_of(self.thread)
        reports = {r.uuid: r for r in refs if r.asset_type == "RESEARCH_REPORT"}
        pool = [d for d in downloads if d.asset_uuid in reports] or list(downloads)
        candidates = [
            (
                d.file_name,
                d.version,
                reports[d.asset_uuid].created_at if d.asset_uuid in reports else "",
                d.data,
            )
            for d in pool
        ]
        wanted = max(reports.values(), key=lambda r: r.version).file_name if reports else None
        chosen, skipped = pick_report(candidates, wanted)
        for index, why in skipped:
            self.scope.findings.append(
                (
                    "REPORT_SKIPPED",
                    {
                        "asset_uuid": pool[index].asset_uuid,
                        "version": pool[index].version,
                        "reason": why,
                    },
                )
            )
        if chosen is None:
            return None
        return render_report(pool[chosen].data, file_name=pool[chosen].file_name)

    def variants(self) -> tuple[dict[str, Any], ...]:
        return variant_records(self.uuid, self.title, self.thread.entries)

    def record(
        self, sources: tuple[WebResult, ...], variants: tuple[dict[str, Any], ...]
    ) -> dict[str, Any]:
        thread = self.thread
        context = next((e.context_uuid for e in thread.entries if e.context_uuid), None)
        if context is None and self.inp.listing is not None:
            context = self.inp.listing.context_uuid
        author = next((e.author for e in thread.entries if e.author), None)
        if author is None and self.inp.listing is not None:
            author = self.inp.listing.author
        rec: dict[str, Any] = {
            "uuid": self.uuid,
            "slug": self.address,
            "context_uuid": context,
            "url": self.url,
            "title": self.title,
            "mode": self.mode,
            "mode_signals": dict(self.decision.signals),
            "author": author,
            "space": self.space(),
            "created": iso(self.created_us()),
            "last_updated": self.last_updated(),
            "counts": {
                "turns": len(thread.entries),
                "background_payloads": len(self.payloads),
                "sources": len(sources),
            },
            "completeness": _completeness(thread),
            "exported_at": self.ctx.exported_at,
            "lang": self.ctx.lang,
        }
        if self.placement.landing:
            rec["background"] = [
                {"payload_id": p.id, "landing": kind, "turn": None if at is None else at + 1}
                for p, kind, at in self.placement.landing
            ]
        if self.degraded:
            rec["counts"]["degraded_turns"] = len(self.degraded)
            rec["degraded"] = [
                {"turn": number, "json_path": path, "reason": reason}
                for number, problems in sorted(self.degraded.items())
                for path, reason in problems
            ]
        if self.scope.interruptions:
            rec["interruptions"] = list(self.scope.interruptions)
        if variants:
            rec["answer_variants"] = [dict(v) for v in variants]
        for key, value in self.ctx.kept_record.items():
            rec[key] = value
        return rec


def _conclusion(payload: Payload) -> str:
    """A sub-agent's conclusion as its block shows it ('' when it has none)."""
    return workflow_answer(payload.workflow) or workflow_answer(payload.workflow, any_variant=True)


def render_thread(
    inp: ThreadInput, ctx: RenderContext, *, thread: Thread | None = None
) -> RenderResult:
    """Render every derived file of one thread; malformed input raises PayloadError only.

    ``thread`` is the thread already decoded from exactly ``inp``'s pages, when the caller
    has it (:func:`~pplx_archiver.core.flow.thread_flow`); it is decoded here otherwise.
    """
    return render_parts(inp, ctx, thread=thread).result


def render_parts(
    inp: ThreadInput, ctx: RenderContext, *, thread: Thread | None = None
) -> ThreadParts:
    """:func:`render_thread` plus the sections of each turn; errors as for render_thread."""
    try:
        renderer = _Renderer(inp, ctx, thread)
        result = renderer.render()
        return ThreadParts(
            result=result,
            turns=tuple(renderer.parts),
            appendix=tuple(renderer.appendix),
            report=renderer.report_md,
        )
    except PayloadError:
        raise
    except RecursionError:
        raise PayloadError(inp.thread_id, "payload nested too deeply to render") from None
    except (TypeError, ValueError) as exc:  # orjson encode of hostile strings, etc.
        raise PayloadError(inp.thread_id, f"payload cannot be rendered: {exc}") from None
