"""Markdown fidelity primitives: fences, table cells and tables, LaTeX, and API-text safety.

Every rendered file is assembled from API text (answers, step payloads, titles) and the
structure this package adds around it (headings, ``<details>`` blocks, fences, tables). The
rules here keep the two apart:

* :func:`fence` sizes a code fence to its content, so no backtick run inside can close it;
* :func:`escape_cell` / :func:`md_table` keep every row and column of a table, whatever the
  cells contain (pipes, newlines, backslashes);
* :func:`normalize_latex` turns ``\\[ … \\]`` / ``\\( … \\)`` into ``$$`` / ``$`` outside code;
* :func:`safe_markdown` makes API text unable to close or swallow what follows it: ``<details>``
  and ``<summary>`` tags are escaped outside code, an unclosed fence is closed, an unterminated
  raw-HTML block opener (``<!--``, ``<pre`` …) is escaped. Nothing else changes.

Block structure (which lines are code, which are paragraphs) is decided by the scanner of
``markdown_blocks`` (the CommonMark block rules, checked against markdown-it-py by the test
suite); inline code spans and tag escaping live in ``markdown_inline``, the LaTeX conversion
in ``markdown_latex``. All functions are pure: same input, same output.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence

from pplx_archiver.core.thread.markdown_blocks import HTML, Scan, lf, paragraph_groups, scan_blocks
from pplx_archiver.core.thread.markdown_inline import (
    BACKTICK_RUN,
    STRUCTURE_TAG,
    escape_outside,
    escape_structure_tags,
    protected_spans,
)
from pplx_archiver.core.thread.markdown_latex import normalize_latex

__all__ = [
    "blockquote",
    "bullet",
    "details",
    "escape_cell",
    "fence",
    "heading",
    "longest_backtick_run",
    "md_table",
    "normalize_latex",
    "safe_markdown",
    "single_line",
]


# --------------------------------------------------------------------------- fences


def longest_backtick_run(text: str) -> int:
    """Return the length of the longest run of consecutive backticks in ``text`` (0 if none)."""
    return max((len(run) for run in BACKTICK_RUN.findall(text)), default=0)


def fence(text: str, lang: str = "") -> str:
    """Wrap ``text`` in a backtick fence one backtick longer than its longest run (minimum 3).

    The content is kept byte for byte (line endings normalized to LF); a final newline is
    added when missing so the closing fence sits on its own line. Tildes inside cannot close
    a backtick fence. ``lang`` becomes the info string (first word, backticks removed).
    """
    body = lf(text)
    marker = "`" * max(3, longest_backtick_run(body) + 1)
    words = lang.replace("`", "").split()
    info = words[0] if words else ""
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{marker}{info}\n{body}{marker}\n"


# --------------------------------------------------------------------------- tables

_PIPE_OR_NEWLINE = re.compile(r"(\\*)(\r\n?|\n|\|)")


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return str(value)


def _escape_pipe_or_newline(match: re.Match[str]) -> str:
    # Backslashes right before a pipe or a line break are doubled, so they stay literal
    # backslashes and cannot turn our ``\|`` or ``<br>`` back into something else.
    slashes = match.group(1) * 2
    return slashes + ("\\|" if match.group(2) == "|" else "<br>")


def escape_cell(value: object) -> str:
    """Return ``value`` as the text of one GFM table cell that cannot split or end the row.

    ``None`` → empty; booleans, numbers → their JSON/str form; dicts and lists → compact JSON;
    ``|`` → ``\\|``; any line break → ``<br>``; backslashes right before either are doubled
    so the escape cannot be undone; ``<details>``/``<summary>`` tags are escaped.
    """
    text = _PIPE_OR_NEWLINE.sub(_escape_pipe_or_newline, _cell_text(value))
    return escape_structure_tags(text)


def md_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    empty_note: str | None = None,
) -> str:
    """Render a GFM table keeping every row and every column.

    Short rows are padded with empty cells; cells beyond the header get extra columns named
    ``col_N`` (N = 1-based column number). A table without any column renders as the note
    line ``empty_note`` (default: an English note with the row count), never as nothing.
    The result ends with a newline; put a blank line before and after it.
    """
    width = max([len(columns), *(len(row) for row in rows)])
    if width == 0:
        note = empty_note or f"(empty table: no columns, {len(rows)} rows)"
        return single_line(note) + "\n"
    header = [*columns, *(f"col_{n}" for n in range(len(columns) + 1, width + 1))]
    lines = [_row(header, width), "|" + "|".join(["---"] * width) + "|"]
    lines.extend(_row(row, width) for row in rows)
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[object], width: int) -> str:
    texts = [escape_cell(cell) for cell in cells]
    texts.extend([""] * (width - len(texts)))
    return "| " + " | ".join(texts) + " |"


# --------------------------------------------------------------------------- block scanner

# --------------------------------------------------------------------------- API-text safety


def _escape_tags_outside_code(lines: list[str], scan: Scan) -> bool:
    """Escape structure tags in prose and raw-HTML lines in place; True if anything changed."""
    changed = False
    for index, kind in enumerate(scan.kinds):
        if kind == HTML and "<" in lines[index]:
            new = escape_structure_tags(lines[index])
            changed |= new != lines[index]
            lines[index] = new
    for first, last in paragraph_groups(scan):
        text = "\n".join(lines[first:last])
        if "<" not in text or not STRUCTURE_TAG.search(text):
            continue
        table = any(index in scan.tables for index in range(first, last))
        new = escape_outside(text, protected_spans(text, table))
        if new != text:
            changed = True
            lines[first:last] = new.split("\n")
    return changed


def safe_markdown(md: str) -> str:
    """Return API Markdown that cannot break the structure around it; otherwise verbatim.

    Outside code (fenced or indented code blocks, inline code spans) ``<details>``,
    ``</details>``, ``<summary>``, ``</summary>`` tags are escaped (``&lt;/details&gt;``). A
    raw-HTML block opener with no terminator (``<!--`` without ``-->``, ``<pre`` without
    ``</pre>`` …) is escaped, since it would swallow the rest of the document. A fence left
    open at the end is closed. Line endings become LF. Nothing is removed or shortened.
    """
    text = lf(md)
    if not any(mark in text for mark in ("<", "```", "~~~")):
        return text
    lines = text.split("\n")
    while True:
        scan = scan_blocks(lines)
        if _escape_tags_outside_code(lines, scan):
            continue
        if scan.open_html is not None:
            line = lines[scan.open_html]
            at = line.index("<")
            lines[scan.open_html] = line[:at] + "&lt;" + line[at + 1 :]
            continue
        break
    text = "\n".join(lines)
    if scan.open_fence is not None:
        text += ("" if text.endswith("\n") else "\n") + scan.open_fence
    return text


# --------------------------------------------------------------------------- structure helpers

_LEADING_BLOCK_CHAR = re.compile(r"[#>+*=|`~_-]|\d+(?=[.)])")


def single_line(text: str) -> str:
    """Return ``text`` as one line of inline Markdown that cannot start a block.

    Line breaks (and the whitespace around them) become one space, outer whitespace is
    stripped, structure tags are escaped and a leading block marker (``#``, ``>``, ``-``,
    ``1.``, a fence …) is backslash-escaped.
    """
    flat = re.sub(r"[ \t]*(?:\r\n?|\n)[ \t]*", " ", text).strip()
    flat = escape_structure_tags(flat)
    match = _LEADING_BLOCK_CHAR.match(flat)
    if match is None:
        return flat
    if match.group().isdigit():
        end = match.end()
        return flat[:end] + "\\" + flat[end:]
    return "\\" + flat


def heading(level: int, text: str) -> str:
    """Return an ATX heading line (with a newline) whose text is one line and stays whole.

    A trailing run of ``#`` is escaped so it is not taken as the closing sequence.
    """
    if not 1 <= level <= 6:
        raise ValueError(f"heading level must be 1..6, got {level}")
    body = single_line(text)
    trailing = re.search(r"(?:^|[ \t])(#+)$", body)
    if trailing is not None:
        body = body[: trailing.start(1)] + "\\" + body[trailing.start(1) :]
    return f"{'#' * level} {body}".rstrip() + "\n"


def bullet(text: str) -> str:
    """Return a ``- `` list item line (with a newline) holding ``text`` as one line."""
    return f"- {single_line(text)}".rstrip() + "\n"


def blockquote(text: str) -> str:
    """Return ``text`` (API Markdown, made safe) as a block quote, ending with a newline."""
    body = safe_markdown(text).rstrip("\n")
    return "\n".join(f"> {line}" if line.strip() else ">" for line in body.split("\n")) + "\n"


_SUMMARY_BREAK = re.compile(r"\s*(?:\r\n?|\n)\s*")


def details(summary: str, body: str, *, trusted: bool = False) -> str:
    """Return a folded ``<details>`` block: ``<details><summary>…</summary>`` + body.

    The summary is HTML-escaped and made one line. The body is API text and goes through
    :func:`safe_markdown`, unless ``trusted`` says it is Markdown this package assembled
    (whose API pieces were already made safe), e.g. nested ``details`` blocks.
    """
    flat = (
        _SUMMARY_BREAK.sub(" ", summary).strip()
        if "\n" in summary or "\r" in summary
        else summary.strip()
    )
    title = html.escape(flat, quote=False)
    inner = (body if trusted else safe_markdown(body)).strip("\n")
    middle = f"{inner}\n\n" if inner.strip() else ""
    return f"<details><summary>{title}</summary>\n\n{middle}</details>\n"
