"""Notes of a vault (Obsidian or Logseq) made from archived threads (pure: text in, text out).

A note is the user's file: the generated part sits between :data:`BEGIN` and :data:`END`,
and :func:`merge` replaces only that part (and the properties this program owns) in the
note as it is now, so text written above, below or around it is kept. Properties are YAML
front matter for Obsidian and ``key:: value`` lines for Logseq; a property the user added is
kept, in its place after ours.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from pplx_archiver.core.thread.labels import label

BEGIN = "<!-- pplx-archiver:begin (generated: edit outside these markers) -->"
END = "<!-- pplx-archiver:end -->"
FLAVORS = ("obsidian", "logseq")
OWNED = ("pplx_uuid", "url", "title", "mode", "models", "space", "created", "updated", "credits")
_MARKER_BEGIN = "<!-- pplx-archiver:begin"
_CITATION = re.compile(r"^\d+\. \[(?P<name>.*)\]\(<?(?P<url>[^)>]*)>?\)", re.MULTILINE)
_MARK = re.compile(r"\[(\d{1,3})\](?!\()")


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One turn as the vault shows it."""

    query: str
    answer: str
    citations: tuple[tuple[str, str], ...]  # (name, url), numbered from 1


@dataclasses.dataclass(frozen=True, slots=True)
class Link:
    """A wikilink to another note, with what it says."""

    note: str
    text: str
    why: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class NoteInput:
    """What a thread's note is made of."""

    uuid: str
    title: str
    url: str
    mode: str
    models: tuple[str, ...]
    created: str
    updated: str
    credits: float | None
    folder: str
    turns: tuple[Turn, ...]
    space: Link | None = None
    report: str | None = None  # the report's note name
    assets: tuple[str, ...] = ()  # vault paths of the thread's files
    related: tuple[Link, ...] = ()
    domains: tuple[Link, ...] = ()


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _fence_step(line: str, open_fence: str) -> str:
    """The open fence after ``line`` ("" when none): CommonMark's opening and closing rule."""
    found = _FENCE.match(line)
    if not found:
        return open_fence
    run = found.group(1)
    if not open_fence:
        return run if not (run[0] == "`" and "`" in line[found.end() :]) else ""
    closes = run[0] == open_fence[0] and len(run) >= len(open_fence)
    return "" if closes and not line[found.end() :].strip() else open_fence


def _section(text: str, name: str) -> str:
    """The body of the first ``## name…`` section, headings inside code fences ignored."""
    lines = text.split("\n")
    fence = ""
    start: int | None = None
    for n, line in enumerate(lines):
        if not fence and line.startswith("## "):
            if start is not None:
                return "\n".join(lines[start:n]).strip()
            if line[3:].strip().startswith(name):
                start = n + 1
        fence = _fence_step(line, fence)
    return "\n".join(lines[start:]).strip() if start is not None else ""


def parse_turn(text: str, lang: str = "en") -> Turn:
    """A rendered turn file (``turns/turn_NNNN.md``) as query, answer and citations."""
    citations = _section(text, label("citations", lang))
    return Turn(
        query=_section(text, label("query", lang)),
        answer=_section(text, label("answer", lang)),
        citations=tuple((m["name"], m["url"]) for m in _CITATION.finditer(citations)),
    )


def footnoted(answer: str, turn: int, count: int) -> str:
    """The answer with its citation marks ``[n]`` as footnote references ``[^t-n]``
    (outside code fences; a mark beyond the citations is left as it is), and a fence the
    answer leaves open closed, so nothing after it is swallowed."""
    out: list[str] = []
    fence = ""
    for line in answer.split("\n"):
        if not fence and not _FENCE.match(line):
            line = _MARK.sub(
                lambda m: f"[^{turn}-{m[1]}]" if 1 <= int(m[1]) <= count else m[0], line
            )
        fence = _fence_step(line, fence)
        out.append(line)
    if fence:
        out.append(fence)
    return "\n".join(out)


def _link(target: Link) -> str:
    text = " ".join(target.text.split()).replace("|", "/").replace("[", "(").replace("]", ")")
    return f"[[{target.note}|{text}]]" if text != target.note else f"[[{target.note}]]"


def properties(note: NoteInput) -> list[tuple[str, str | list[str]]]:
    """The properties this program owns, in order (``credits`` only when known)."""
    props: list[tuple[str, str | list[str]]] = [
        ("pplx_uuid", note.uuid),
        ("url", note.url),
        ("title", note.title),
        ("mode", note.mode),
        ("models", list(note.models)),
        ("space", _link(note.space) if note.space else ""),
        ("created", note.created),
        ("updated", note.updated),
    ]
    if note.credits is not None:
        props.append(("credits", f"{note.credits:.2f}"))
    return props


def body(note: NoteInput, flavor: str) -> str:
    """The generated part of a thread's note (between the markers)."""
    lines = [f"# {note.title}", ""]
    where = f"[Open on Perplexity]({note.url}) · {note.mode} · {note.created[:10]}"
    lines += [f"{where} · archive folder `{note.folder}`", ""]
    for n, turn in enumerate(note.turns, 1):
        lines += _turn(n, turn, flavor)
    if note.report:
        embed = (
            f"![[{note.report}]]" if flavor == "obsidian" else f"{{{{embed [[{note.report}]]}}}}"
        )
        lines += ["## Report", "", embed, ""]
    if note.assets:
        lines += ["## Files", "", *[_file(a, flavor) for a in note.assets], ""]
    if note.related:
        lines += ["## Related threads", ""]
        lines += [f"- {_link(r)}" + (f" ({r.why})" if r.why else "") for r in note.related]
        lines.append("")
    if note.domains:
        lines += ["## Source domains", "", " · ".join(_link(d) for d in note.domains), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _file(path: str, flavor: str) -> str:
    if flavor == "obsidian":
        return f"- [[{path}]]"
    return f"- [{path.rsplit('/', 1)[-1]}](../{path.replace(' ', '%20')})"


def _turn(n: int, turn: Turn, flavor: str) -> list[str]:
    first = turn.query.strip().split("\n", 1)[0][:120] or f"Turn {n}"
    lines = [f"## {n}. {first}", ""]
    if "\n" in turn.query.strip() or len(turn.query.strip()) > 120:
        lines += ["> " + q for q in turn.query.strip().split("\n")] + [""]
    if flavor == "obsidian":
        lines += [footnoted(turn.answer, n, len(turn.citations)), ""]
        lines += [f"[^{n}-{i}]: [{name}]({url})" for i, (name, url) in enumerate(turn.citations, 1)]
    else:
        lines += [footnoted(turn.answer, n, 0), ""]
        lines += [f"{i}. [{name}]({url})" for i, (name, url) in enumerate(turn.citations, 1)]
    return [*lines, ""]


def listing_body(title: str, items: Sequence[Link]) -> str:
    """The generated part of a space's or a source domain's note: its threads."""
    lines = [f"# {title}", "", *[f"- {_link(i)}" + (f" — {i.why}" if i.why else "") for i in items]]
    return "\n".join(lines) + "\n"


# -- properties on disk -------------------------------------------------------------------------


def _yaml(value: str | list[str]) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


def _scalar(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c for c in escaped)
    return f'"{escaped}"'


def _split_front(text: str, flavor: str) -> tuple[list[str], str]:
    """(property lines, the rest of the note)."""
    if flavor == "obsidian":
        if text.startswith("---\n"):
            end = text.find("\n---\n", 3)
            if end != -1:
                return text[4:end].split("\n"), text[end + 5 :]
        return [], text
    lines = text.split("\n")
    n = 0
    while n < len(lines) and re.match(r"^[\w-]+:: ", lines[n]):
        n += 1
    return lines[:n], "\n".join(lines[n:]).lstrip("\n") if n else text


def _user_props(lines: list[str], flavor: str) -> list[str]:
    """The property lines (with their continuation lines) of keys this program does not own."""
    kept: list[str] = []
    keep = False
    for line in lines:
        key = re.match(r"^([\w-]+)::? ?", line)
        if key and not line.startswith((" ", "-")):
            keep = key.group(1) not in OWNED
        if keep:
            kept.append(line)
    return kept


def _flat(value: str | list[str]) -> str:
    return " ".join((", ".join(value) if isinstance(value, list) else value).split())


def render_props(props: list[tuple[str, str | list[str]]], user: list[str], flavor: str) -> str:
    if flavor == "obsidian":
        own = [f"{k}: {_yaml(v)}" for k, v in props]
        return "---\n" + "\n".join([*own, *user]) + "\n---\n"
    # Logseq's own ``title::`` would rename the page away from its file name (and links).
    own = [f"{k}:: {_flat(v)}" for k, v in props if v and k != "title"]
    return "\n".join([*own, *user]) + "\n\n" if own or user else ""


def merge(
    existing: str | None, props: list[tuple[str, str | list[str]]], generated: str, flavor: str
) -> str:
    """The note with its properties and generated part replaced, the user's text kept.

    A note without the markers (the user removed them) gets the generated part appended
    below its text; nothing the user wrote is dropped.
    """
    if existing is None:
        return render_props(props, [], flavor) + f"{BEGIN}\n{generated}{END}\n"
    existing = existing.replace("\r\n", "\n")  # an editor that saved Windows line ends
    front, rest = _split_front(existing, flavor)
    start = rest.find(_MARKER_BEGIN)
    stop = rest.find(END, start + 1) if start != -1 else -1
    if start == -1 or stop == -1:
        above, below = rest.rstrip("\n") + ("\n\n" if rest.strip() else ""), "\n"
    else:
        above, below = rest[:start], rest[stop + len(END) :]
    head = render_props(props, _user_props(front, flavor), flavor)
    return f"{head}{above}{BEGIN}\n{generated}{END}{below}"
