"""``pplx-export vault``: the archive as notes of an Obsidian or Logseq vault, kept in sync.

One note per thread (properties: uuid, URL, mode, models, space, dates, credits when the
``usage`` table has them), a note per space and per cited source domain, each deep-research
report as a note of its own and the thread's stored assets as vault files. The archive is
read only (index opened read-only, thread folders read); the vault is written through
:class:`VaultFiles`, only where bytes change. A note found with the thread's ``pplx_uuid``
under another name (the user renamed or moved it) is updated where it is.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import urllib.parse
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from pplx_archiver.core.relations import relations as graph
from pplx_archiver.core.thread import output_files as outputs
from pplx_archiver.core.vault import vault as notes
from pplx_archiver.core.vault.vault_names import safe_stem, unique_names
from pplx_archiver.errors import PplxError
from pplx_archiver.shell.care import relations
from pplx_archiver.shell.care.catalog import Catalog, ThreadInfo, read_record
from pplx_archiver.shell.care.vault_files import Layout, VaultFiles


@dataclasses.dataclass(slots=True)
class VaultSummary:
    """What one ``vault`` run did."""

    threads: int = 0
    spaces: int = 0
    domains: int = 0
    reports: int = 0
    files: int = 0
    written: int = 0
    unchanged: int = 0
    failures: list[str] = dataclasses.field(default_factory=list)

    def line(self) -> str:
        return (
            f"vault: {self.threads} thread notes, {self.spaces} spaces, {self.domains} source "
            f"domains, {self.reports} reports, {self.files} files; {self.written} written, "
            f"{self.unchanged} unchanged, {len(self.failures)} failed"
        )


def _file_name(path: str) -> str:
    """A safe vault file name for an asset, its extension kept when the name is cut."""
    name = PurePosixPath(path)
    ext = name.suffix if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", name.suffix) else ""
    return safe_stem(name.stem if ext else name.name, fallback="file", suffix=ext)


def _domain(url: str) -> str:
    return (urllib.parse.urlsplit(url).hostname or "").lower().removeprefix("www.")


@dataclasses.dataclass(slots=True)
class _Names:
    threads: dict[str, str]  # the program's name of each thread's note
    spaces: dict[str, str]
    domains: dict[str, str]
    links: dict[str, str] = dataclasses.field(default_factory=dict)  # the name it has now


class VaultExport:
    """One run: the archive's catalog read, the vault's notes written."""

    def __init__(self, catalog: Catalog, files: VaultFiles, flavor: str) -> None:
        self.catalog = catalog
        self.files = files
        self.flavor = flavor
        self.layout = Layout.of(flavor)
        self.summary = VaultSummary()

    def _rows(self, sql: str, table: str) -> list[Any]:
        try:
            found = self.catalog.archive.index.select(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            )
            return self.catalog.archive.index.select(sql) if found else []
        except (PplxError, sqlite3.Error):
            return []

    def run(self) -> VaultSummary:
        threads = self.catalog.refresh()
        credits = {
            str(r[0]): int(r[1]) / 100
            for r in self._rows(
                "SELECT thread_uuid, usage_cents FROM usage WHERE status = 'ok'", "usage"
            )
            if r[1] is not None
        }
        edges = self._edges()
        sources = {uuid: self._sources(info) for uuid, info in threads.items()}
        names = self._names(threads, sources)
        found: dict[str, str] = {}
        for rel, uuid in self.files.notes("" if self.flavor == "obsidian" else "pages"):
            found.setdefault(uuid, rel)  # a note the user copied: the first one found
        # Links name a note as it is called now (renamed by the user or not).
        names.links = {
            u: PurePosixPath(found[u]).stem if u in found else n for u, n in names.threads.items()
        }
        related: dict[str, list[notes.Link]] = defaultdict(list)
        for src, dst, kind in edges:
            for a, b in ((src, dst), (dst, src)):
                if a in threads and b in threads:
                    related[a].append(notes.Link(names.links[b], threads[b].title, kind))
        for uuid in sorted(threads):
            info = threads[uuid]
            try:
                self._thread(info, names, sources[uuid], related[uuid], credits.get(uuid), found)
            except (PplxError, OSError, ValueError) as exc:
                self.summary.failures.append(f"{info.path}: {exc}")
        self._listings(threads, names, sources)
        self.summary.written = self.files.written
        self.summary.unchanged = self.files.unchanged
        return self.summary

    def _edges(self) -> list[tuple[str, str, str]]:
        """The relations table's edges; when ``relations`` never ran, the graph computed in
        memory from the raw files (the archive is not written)."""
        rows = self._rows("SELECT src, dst, kind FROM relations", "relations")
        if rows:
            return [(str(a), str(b), str(c)) for a, b, c in rows]
        facts = []
        for row in self.catalog.archive.iter_threads("done"):
            try:
                folder = self.catalog.folder_of(str(row.path))
                facts.append(relations.load_facts(folder, row.uuid, row.listing))
            except (PplxError, OSError, ValueError):
                continue  # a thread whose raw files cannot be read has no edges
        return [(e.src, e.dst, e.kind) for e in graph.build_edges(facts)]

    def _sources(self, info: ThreadInfo) -> list[str]:
        try:
            raw = (self.catalog.folder_of(info.path) / outputs.SOURCES_JSON.path).read_bytes()
            items = orjson.loads(raw).get("sources") or []
        except (OSError, ValueError, AttributeError, PplxError):
            return []
        return sorted({_domain(str(s.get("url", ""))) for s in items if isinstance(s, dict)} - {""})

    def _names(self, threads: dict[str, ThreadInfo], sources: dict[str, list[str]]) -> _Names:
        wanted = {u: safe_stem(t.title, suffix=f" ({u[:8]})") for u, t in threads.items()}
        spaces = {t.space_slug or t.space_title for t in threads.values()} - {""}
        titles = {
            t.space_slug or t.space_title: t.space_title or t.space_slug for t in threads.values()
        }
        domains = {d for ds in sources.values() for d in ds}
        thread_names = unique_names(wanted)
        space_names = unique_names(
            {s: safe_stem(f"Space - {titles[s]}") for s in spaces}, thread_names.values()
        )
        domain_names = unique_names(
            {d: safe_stem(f"Source - {d}") for d in domains},
            [*thread_names.values(), *space_names.values()],
        )
        return _Names(thread_names, space_names, domain_names)

    def _thread(
        self,
        info: ThreadInfo,
        names: _Names,
        domains: list[str],
        related: list[notes.Link],
        credits: float | None,
        found: dict[str, str],
    ) -> None:
        folder = self.catalog.folder_of(info.path)
        lang = str(read_record(folder).get("lang") or "en")
        turns = []
        for n in range(1, info.turns + 1):
            try:
                text = (folder / outputs.TURN.at(n)).read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            turns.append(notes.parse_turn(text, lang))
        name = names.threads[info.uuid]
        space_key = info.space_slug or info.space_title
        space = notes.Link(names.spaces[space_key], info.space_title) if space_key else None
        note = notes.NoteInput(
            uuid=info.uuid, title=info.title, url=info.url, mode=info.mode,
            models=info.models, created=info.created, updated=info.updated, credits=credits,
            folder=info.path, turns=tuple(turns), space=space,
            report=self._report(info, name), assets=self._assets(info),
            related=tuple(sorted(set(related), key=lambda r: (r.why, r.note))),
            domains=tuple(notes.Link(names.domains[d], d) for d in domains),
        )  # fmt: skip
        rel = found.get(info.uuid) or f"{self.layout.threads}/{name}.md"
        self._note(rel, notes.properties(note), notes.body(note, self.flavor))
        self.summary.threads += 1

    def _note(self, rel: str, props: list[tuple[str, str | list[str]]], generated: str) -> None:
        old = self.files.read(rel)
        text = old.decode("utf-8", "replace") if old is not None else None
        self.files.put(rel, notes.merge(text, props, generated, self.flavor).encode("utf-8"))

    def _report(self, info: ThreadInfo, name: str) -> str | None:
        try:
            data = (self.catalog.folder_of(info.path) / outputs.REPORT.path).read_bytes()
        except FileNotFoundError:
            return None
        report = f"{name} report"
        self.files.put(f"{self.layout.reports}/{report}.md", data)
        self.summary.reports += 1
        return report

    def _assets(self, info: ThreadInfo) -> tuple[str, ...]:
        folder = self.catalog.folder_of(info.path)
        try:
            manifest = orjson.loads((folder / "assets" / "manifest.json").read_bytes())
        except (OSError, ValueError):
            return ()
        placed = []
        for item in manifest.get("assets") or [] if isinstance(manifest, dict) else []:
            path = item.get("path") if isinstance(item, dict) else None
            if item.get("status") != "stored" or not isinstance(path, str):
                continue
            source = self.catalog.folder_of(f"{info.path}/{path}")
            rel = f"{self.layout.assets}/{info.uuid[:8]}/{_file_name(path)}"
            try:
                self.files.put(rel, source.read_bytes())
            except FileNotFoundError:
                continue
            placed.append(rel)
            self.summary.files += 1
        return tuple(placed)

    def _listings(
        self, threads: dict[str, ThreadInfo], names: _Names, sources: dict[str, list[str]]
    ) -> None:
        newest = sorted(threads.values(), key=lambda t: (t.created, t.uuid), reverse=True)
        by_space: dict[str, list[notes.Link]] = defaultdict(list)
        by_domain: dict[str, list[notes.Link]] = defaultdict(list)
        for info in newest:
            link = notes.Link(names.links[info.uuid], info.title, info.created[:10])
            if info.space_slug or info.space_title:
                by_space[info.space_slug or info.space_title].append(link)
            for domain in sources[info.uuid]:
                by_domain[domain].append(link)
        for key, items in sorted(by_space.items()):
            title = next(t.space_title for t in newest if key in (t.space_slug, t.space_title))
            self._listing(self.layout.spaces, names.spaces[key], title or key, items)
            self.summary.spaces += 1
        for domain, items in sorted(by_domain.items()):
            self._listing(self.layout.sources, names.domains[domain], domain, items)
            self.summary.domains += 1

    def _listing(self, folder: str, name: str, title: str, items: list[notes.Link]) -> None:
        props: list[tuple[str, str | list[str]]] = [("title", title)]
        self._note(f"{folder}/{name}.md", props, notes.listing_body(title, items))


def export_vault(out: Path, vault: Path, flavor: str) -> VaultSummary:
    """Write (or bring up to date) the vault at ``vault`` from the archive at ``out``."""
    catalog = Catalog(out)
    try:
        return VaultExport(catalog, VaultFiles(vault, out), flavor).run()
    finally:
        catalog.close()
