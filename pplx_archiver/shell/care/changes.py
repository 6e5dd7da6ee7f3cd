"""What changed, read offline: a thread's versions, the diff of two, alerts, served models.

Backs ``history``, ``diff``, ``alerts`` and ``audit models``. Reads the index and the thread
folders only (``history/``, see :mod:`~pplx_archiver.shell.archive.history`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from pplx_archiver.core.thread.revisions import EntryDigest, compare, digest, word_diff
from pplx_archiver.core.thread.timeparse import iso
from pplx_archiver.errors import ConfigError, PayloadError, StoreError
from pplx_archiver.shell.archive.files import RAW_BLOCKS, RAW_ENTRIES
from pplx_archiver.shell.archive.history import all_versions, raw_of
from pplx_archiver.shell.archive.index import ThreadRow
from pplx_archiver.shell.archive.index_schema import INCOMPLETE_WHERE
from pplx_archiver.shell.archive.store import Archive


def find_thread(archive: Archive, ref: str) -> ThreadRow:
    """The thread named by its uuid, a unique uuid prefix (≥ 6 characters) or its folder."""
    ref = ref.strip().rstrip("/")
    row = archive.index.get(ref)
    if row is not None:
        return row
    owner = archive.index.path_owner(ref)
    if owner is not None:
        found = archive.index.get(owner)
        if found is not None:
            return found
    if len(ref) >= 6 and "%" not in ref and "_" not in ref:
        rows = archive.index.select(
            "SELECT uuid FROM threads WHERE uuid LIKE ? LIMIT 2", (ref + "%",)
        )
        if len(rows) == 1:
            found = archive.index.get(str(rows[0][0]))
            if found is not None:
                return found
        if len(rows) > 1:
            raise ConfigError(f"thread {ref!r}: several threads start with it; give more of it")
    raise ConfigError(f"thread {ref!r}: not in this archive (give its uuid or folder)")


def _folder(archive: Archive, row: ThreadRow) -> Any:
    if not row.path:
        raise StoreError(f"thread {row.uuid}: the archive has no folder for it")
    return archive.folder(row.path)


def history_records(archive: Archive, row: ThreadRow) -> list[dict[str, Any]]:
    """The versions of a thread, oldest first, with what changed in each."""
    lines = all_versions(_folder(archive, row), row)
    out = []
    for i, line in enumerate(lines):
        changes = line.get("changes") or {}
        out.append(
            {
                "version": line["version"],
                "current": i == len(lines) - 1,
                "fetched_at": line.get("fetched_at"),
                "run_id": line.get("run_id"),
                "updated_at": line.get("updated_at"),
                "changes": changes or None,
            }
        )
    return out


def change_words(changes: dict[str, Any] | None) -> str:
    """A version's changes in a few words (``history``'s text output)."""
    if not changes:
        return "first version"
    if changes.get("unreadable"):
        return "pages changed (a version could not be read)"
    parts = []
    if changes.get("turns_added"):
        parts.append(f"{len(changes['turns_added'])} turn(s) added")
    if changes.get("turns_removed"):
        parts.append(f"{len(changes['turns_removed'])} turn(s) removed")
    for entry in changes.get("entries") or ():
        what = [k for k in ("answer", "model", "status") if entry.get(k)]
        if entry.get("sources_added") or entry.get("sources_removed"):
            what.append("sources")
        parts.append(f"turn {entry.get('turn')}: {', '.join(what)}")
    return "; ".join(parts) or "pages changed, nothing a reader sees"


def _digest_of(archive: Archive, row: ThreadRow, line: dict[str, Any]) -> tuple[EntryDigest, ...]:
    raw = raw_of(_folder(archive, row), line)
    try:
        return digest(raw[RAW_ENTRIES], raw.get(RAW_BLOCKS), row.mode or "")
    except (PayloadError, KeyError) as exc:
        raise StoreError(f"thread {row.uuid}: version {line['version']}: {exc}") from None


def _pick(lines: list[dict[str, Any]], number: int | None, default: int) -> dict[str, Any]:
    if number is None:
        return lines[default]
    for line in lines:
        if line["version"] == number:
            return line
    known = ", ".join(str(x["version"]) for x in lines)
    raise ConfigError(f"no version {number} of this thread (versions: {known})")


def diff_record(
    archive: Archive,
    row: ThreadRow,
    v_from: int | None = None,
    v_to: int | None = None,
    entry: int | None = None,
) -> dict[str, Any]:
    """The diff of two versions (default: the two newest): answers word by word, sources,
    models and statuses; ``entry`` keeps one turn (1-based, in the newer version)."""
    lines = all_versions(_folder(archive, row), row)
    if not lines:
        raise StoreError(f"thread {row.uuid}: no raw files in its folder")
    old_line = _pick(lines, v_from, max(0, len(lines) - 2))
    new_line = _pick(lines, v_to, len(lines) - 1)
    old, new = _digest_of(archive, row, old_line), _digest_of(archive, row, new_line)
    changes = compare(old, new)
    before = {d.uuid: d for d in old}
    entries = []
    for change in changes.entries:
        if entry is not None and change.turn != entry:
            continue
        item = change.as_json()
        item["query"] = new[change.turn - 1].query
        if change.answer:
            item["answer_diff"] = word_diff(before[change.uuid].answer, new[change.turn - 1].answer)
        entries.append(item)
    return {
        "thread_uuid": row.uuid,
        "from": old_line["version"],
        "to": new_line["version"],
        "turns_added": list(changes.turns_added),
        "turns_removed": list(changes.turns_removed),
        "entries": entries,
    }


def _done_rows(archive: Archive, since: str | None) -> Iterator[ThreadRow]:
    for row in archive.iter_threads():
        live = row.path and row.status in ("done", "pending", "failed")
        if live and (since is None or (row.last_updated or "") >= since):
            yield row


def audit_models(archive: Archive, since: str | None = None) -> list[dict[str, Any]]:
    """Turns per (month, chosen model, served model); ``unknown`` where a field is absent."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for row in _done_rows(archive, since):
        folder = archive.folder(row.path or "")
        try:
            entries = (folder / RAW_ENTRIES).read_bytes()
            blocks = (folder / RAW_BLOCKS).read_bytes() if (folder / RAW_BLOCKS).is_file() else None
            digests = digest(entries, blocks, row.mode or "")
        except (OSError, PayloadError):
            continue
        for d in digests:
            month = iso(d.created_us)[:7] if d.created_us is not None else "unknown"
            if since is not None and month != "unknown" and month < since[:7]:
                continue
            counts[(month, d.chosen_model or "unknown", d.served_model or "unknown")] += 1
    return [
        {
            "month": month,
            "chosen": chosen,
            "served": served,
            "turns": n,
            "substituted": "unknown" not in (chosen, served) and chosen != served,
        }
        for (month, chosen, served), n in sorted(counts.items())
    ]


def incomplete_records(archive: Archive) -> list[dict[str, Any]]:
    """Threads archived without a report or an asset that could not be fetched (the next
    run retries them), with what they lack as the run that found it recorded."""
    rows = archive.index.select(
        f"SELECT uuid, title, path FROM threads WHERE {INCOMPLETE_WHERE} ORDER BY uuid"
    )
    out = []
    for uuid, title, path in rows:
        found = archive.alerts.list(kinds=("THREAD_INCOMPLETE",), thread_uuid=uuid)
        fields = found[-1].fields if found else {}
        out.append(
            {
                "thread_uuid": uuid,
                "title": title,
                "path": path,
                "report_missing": bool(fields.get("report_missing")),
                "assets_missing": list(fields.get("assets_missing") or []),
            }
        )
    return out


def incomplete_reason(record: dict[str, Any]) -> str:
    """One line saying what an incomplete thread lacks."""
    names = ", ".join(str(n) for n in record["assets_missing"][:3]) or "assets"
    what = "report.md" if record["report_missing"] else "asset files"
    return f"incomplete: {what} could not be fetched ({names}); the next run retries it"


def render_version(archive: Archive, row: ThreadRow, number: int, lang: str | None) -> Any:
    """The render of one stored version (a :class:`RenderResult`), as ``re-render`` would
    render it were it the newest: same listing row, record context and stored reports."""
    from pplx_archiver.core.thread.model import ThreadInput
    from pplx_archiver.core.thread.rawfile import decode_raw_pages
    from pplx_archiver.core.thread.render import render_thread
    from pplx_archiver.shell.archive.stored import build_input, context_for

    folder = _folder(archive, row)
    line = _pick(all_versions(folder, row), number, -1)
    raw = raw_of(folder, line)
    current, record = build_input(folder, row.uuid, row.listing)
    blocks = raw.get(RAW_BLOCKS)
    inp = ThreadInput(
        thread_id=current.thread_id,
        plain_pages=decode_raw_pages(raw[RAW_ENTRIES], name=RAW_ENTRIES),
        blocks_pages=decode_raw_pages(blocks, name=RAW_BLOCKS) if blocks else (),
        listing=current.listing,
        downloads=current.downloads,
    )
    return render_thread(inp, context_for(record, row.account, lang))
