"""The render entry point: one thread's raw pages in, every derived archive file out.

``render_thread`` decodes the pages, detects the mode, places sub-agent payloads, renders
the files of :data:`~pplx_archiver.core.thread.output_files.OUTPUTS` (``conversation.md``,
``turns/turn_NNNN.md``, ``sources.json``/``sources.md``, ``thread.json`` and ``report.md``),
and returns findings for the shell to log. Pure and
deterministic: same input, byte-identical output.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from pplx_archiver.core.thread import labels, mode_table
from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.core.thread.assets import assets_of
from pplx_archiver.core.thread.citations import dedupe, sources_json
from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.layout import thread_dir_name, thread_key
from pplx_archiver.core.thread.mdfile import md_bytes, yaml_scalar
from pplx_archiver.core.thread.model import Finding, RenderContext, RenderResult, ThreadInput
from pplx_archiver.core.thread.modes import detect_mode, needs_blocks
from pplx_archiver.core.thread.paginate import completeness
from pplx_archiver.core.thread.prose import ThreadProse, TurnProse, joined
from pplx_archiver.core.thread.report import pick_report, render_report
from pplx_archiver.core.thread.revisions import substitution_findings
from pplx_archiver.core.thread.subagents import collect_payloads, place
from pplx_archiver.core.thread.timeparse import date_of, iso, parse_ts
from pplx_archiver.core.thread.turns import TurnParts, Turns, conclusion, sources_markdown
from pplx_archiver.core.thread.values import Thread, WebResult
from pplx_archiver.core.thread.variants import variant_records
from pplx_archiver.core.thread.workflow import (
    Scope,
    inline,
)
from pplx_archiver.errors import PayloadError

__all__ = ["ThreadParts", "TurnParts", "needs_blocks", "render_parts", "render_thread"]

BASE_URL = "https://www.perplexity.ai"


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


def _findings(events: list[tuple[str, dict[str, Any]]], thread_uuid: str) -> tuple[Finding, ...]:
    return tuple(
        Finding(event=name, level="warning", fields={"thread_uuid": thread_uuid, **fields})
        for name, fields in events
    )


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
        self.decision = detect_mode(thread, listing)
        self.mode = self.decision.mode
        # a thread of a mode with a web path of its own (a computer task) is addressed by it
        # when its type signals say so; every other thread by /search/
        typed = self.decision.typed == self.mode
        route = (typed and mode_table.VIEWS.routes.get(self.mode)) or "search"
        self.url = f"{BASE_URL}/{route}/{self.address}"
        self.payloads = collect_payloads(thread.background)
        self.placement = place(thread.entries, self.payloads)
        self.scope = Scope(
            lang=self.lang,
            thread_uuid=self.uuid,
            by_id=self.placement.by_id,
            locked=thread.locked_reason,
            notices=self.placement.notices,
        )
        self.scope.findings.extend((n, dict(f)) for n, f in self.decision.findings)
        self.turns = Turns(self.scope, self.placement, self.mode, self.labels)
        self.degraded = self.turns.degraded
        self.appendix: list[str] = []
        self.report_md: str | None = None

    def label(self, key: str) -> str:
        return self.labels[key]

    def render(self) -> RenderResult:
        thread = self.thread
        files: dict[str, bytes] = {}
        answers: list[TurnParts] = []
        all_cited: list[WebResult] = []
        for number, entry in enumerate(thread.entries, 1):
            if entry.problems:
                self.degraded[number] = entry.problems
            text, part = self.turns.turn(number, entry)
            files[outputs.TURN.at(number)] = md_bytes(text)
            answers.append(part)
            all_cited.extend(part.citations)
        appendix = self.turns.appendix(all_cited)
        thread_row = TurnProse(
            turn=0,
            created=iso(self.created_us()),
            title=self.title,
            subagents=joined(conclusion(p) for p in self.placement.appendix),
        )
        self.appendix = appendix
        sources = dedupe(all_cited)
        files[outputs.CONVERSATION.path] = md_bytes(self.conversation(answers, appendix))
        files[outputs.SOURCES_JSON.path] = sources_json(sources)
        files[outputs.SOURCES_MD.path] = md_bytes(self.sources_md(sources))
        report = self.report_md = self.report()
        if report is not None:
            files[outputs.REPORT.path] = md_bytes(report)
        variants = self.variants()
        record_ = self.record(sources, variants)
        files[outputs.THREAD_JSON.path] = (
            orjson.dumps(record_, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
        events = list(self.scope.findings)
        events.extend(self.degraded_events())
        for rec in self.scope.interruptions:
            events.append(("WORKFLOW_INTERRUPTED", dict(rec)))
        for var in variants:
            events.append(("ANSWER_VARIANT_DETECTED", dict(var)))
        events.extend(substitution_findings(self.thread.entries))
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
            prose=ThreadProse(rows=(thread_row, *self.turns.prose)),
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
            f"title: {yaml_scalar(self.title)}",
            f"uuid: {yaml_scalar(self.uuid)}",
            f"url: {yaml_scalar(self.url)}",
            f"mode: {yaml_scalar(self.mode)}",
            f"created: {yaml_scalar(iso(self.created_us()))}",
            f"updated: {yaml_scalar(_utc(self.last_updated()))}",
            f"space: {yaml_scalar(space['title'] or space['slug'] if space else None)}",
            f"model: {yaml_scalar(self.model())}",
            "---",
        ]
        parts = ["\n".join(front), f"# {inline(self.title) or '?'}"]
        for number, part in enumerate(answers, 1):
            note = self.turns.note(self.degraded.get(number, ()))
            work = f"### {self.turns.subagent_work(part)}\n\n" if part.subagents else ""
            parts.append(
                f"## {self.label('turn')} {number}\n\n"
                + (f"{note}\n\n" if note else "")
                + f"### {self.label('query')}\n\n{part.query}\n\n{work}"
                f"### {self.label('answer')}{part.answer_note}\n\n{part.answer}"
                + (f"\n\n{self.turns.cited(part, '###')}" if part.citations else "")
            )
        if appendix:
            parts.append(
                f"## {self.label('background_unassigned')}\n\n{self.label('appendix_note')}\n\n"
                + "\n\n".join(appendix)
            )
        return "\n\n".join(parts) + "\n"

    def sources_md(self, sources: tuple[WebResult, ...]) -> str:
        return sources_markdown(sources, self.turns.parts, self.labels)

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
            "completeness": completeness(thread),
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


def render_thread(
    inp: ThreadInput, ctx: RenderContext, *, thread: Thread | None = None
) -> RenderResult:
    """Render every derived file of one thread; malformed input raises PayloadError only.

    ``thread`` is the thread already decoded from exactly ``inp``'s pages, when the caller
    has it (:func:`~pplx_archiver.core.thread.flow.thread_flow`); it is decoded here otherwise.
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
            turns=tuple(renderer.turns.parts),
            appendix=tuple(renderer.appendix),
            report=renderer.report_md,
        )
    except PayloadError:
        raise
    except RecursionError:
        raise PayloadError(inp.thread_id, "payload nested too deeply to render") from None
    except (TypeError, ValueError) as exc:  # orjson encode of hostile strings, etc.
        raise PayloadError(inp.thread_id, f"payload cannot be rendered: {exc}") from None
