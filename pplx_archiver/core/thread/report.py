"""Deep-research report bodies: which downloaded version to use and how it becomes ``report.md``.

Several versions of one report file can exist and older drafts can be empty; a download can
also be something other than Markdown (a PDF, an archive, an image). The core never guesses:
:func:`classify_report_bytes` names what a body is, :func:`pick_report` chooses the newest
usable version (and says why every other candidate was passed over, so the caller can log
``REPORT_SKIPPED``), and :func:`render_report` turns usable bytes into Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pplx_archiver.core.thread.markdown import normalize_latex
from pplx_archiver.core.thread.model import AssetRef
from pplx_archiver.core.thread.node import Node
from pplx_archiver.core.thread.values import Thread

ReportKind = Literal["ok", "empty", "binary"]

_MAGIC: tuple[bytes, ...] = (
    b"%PDF",  # PDF
    b"PK\x03\x04",  # zip (docx, xlsx, pptx, epub)
    b"PK\x05\x06",  # empty zip
    b"\x89PNG",  # PNG
    b"\xff\xd8\xff",  # JPEG
    b"GIF8",  # GIF
    b"RIFF",  # WEBP, WAV
    b"\x1f\x8b",  # gzip
    b"\xd0\xcf\x11\xe0",  # legacy Office (OLE)
    b"7z\xbc\xaf\x27\x1c",  # 7-zip
    b"Rar!",  # RAR
)

_BOM = b"\xef\xbb\xbf"


def classify_report_bytes(data: bytes) -> ReportKind:
    """Say whether report bytes are usable Markdown text (``ok``), ``empty`` or ``binary``.

    Binary: a known file signature, a NUL byte or invalid UTF-8. Empty: nothing but whitespace
    (a UTF-8 byte-order mark counts as nothing).
    """
    body = data.removeprefix(_BOM)
    if body.startswith(_MAGIC) or b"\x00" in body:
        return "binary"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "binary"
    return "empty" if not text.strip() else "ok"


def render_report(data: bytes, *, file_name: str) -> str | None:
    """Return ``report.md`` text for usable report bytes, or ``None`` for empty/binary bytes.

    Line endings become LF, the text ends with exactly one newline and LaTeX delimiters are
    normalized (code protected). Nothing else changes: the report is never shortened.
    ``file_name`` is the asset's file name; it is accepted so callers pass it uniformly and
    is not written into the text.
    """
    del file_name  # part of the call shape; the body alone decides
    if classify_report_bytes(data) != "ok":
        return None
    text = data.removeprefix(_BOM).decode("utf-8")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = normalize_latex(text)
    return text.rstrip("\n") + "\n"


ReportCandidate = tuple[str, int, str, bytes]
"""``(file_name, version, created_at, data)`` of one downloaded report version."""


def pick_report(
    candidates: Sequence[ReportCandidate], wanted_file_name: str | None
) -> tuple[int | None, list[tuple[int, str]]]:
    """Choose the report version to render and list the candidates passed over with a reason.

    Order of preference: usable candidates whose ``file_name`` equals ``wanted_file_name``
    (newest first by ``(version, created_at)``), then every other usable candidate, newest
    first. Returns ``(index or None, [(index, "empty" | "binary"), …])``; a skipped entry is
    listed for every unusable candidate that ranks above the chosen one (all of them when
    nothing is usable), in preference order.
    """

    def newest(index: int) -> tuple[int, tuple[int, int, str]]:
        return candidates[index][1], _time_key(candidates[index][2])

    def exact_first(index: int) -> int:
        return 0 if wanted_file_name is not None and candidates[index][0] == wanted_file_name else 1

    order = sorted(range(len(candidates)), key=newest, reverse=True)  # stable for ties
    order.sort(key=exact_first)
    skipped: list[tuple[int, str]] = []
    for index in order:
        kind = classify_report_bytes(candidates[index][3])
        if kind == "ok":
            return index, skipped
        skipped.append((index, kind))
    return None, skipped


def _time_key(created_at: str) -> tuple[int, int, str]:
    """Order creation times: epoch-second strings numerically, other strings as text."""
    value = created_at.strip()
    if value.isascii() and value.isdigit():
        return (1, int(value), "")
    return (0, 0, value)


RESEARCH_REPORT = "RESEARCH_REPORT"


def answer_report_ref(thread: Thread, refs: Sequence[AssetRef]) -> AssetRef | None:
    """The report named by the newest ``RESEARCH_ANSWER`` step's ``url``, as one more report
    version to download — only when no report asset of the thread has a URL or inline text.

    The step carries the report descriptor ``{title, file_name, url}``; older deep-research
    threads have it without any report asset, so it is the fallback source of ``report.md``.
    """
    if any(r.asset_type == RESEARCH_REPORT and (r.url or r.inline_content) for r in refs):
        return None
    for entry in reversed(thread.entries):
        for step in reversed(entry.steps):
            if step.step_type != "RESEARCH_ANSWER":
                continue
            content = Node(step.content, step.where, "content")
            url = content.get_text("url").strip()
            if not url:
                continue
            name = content.get_text("file_name") or content.get_text("title") or "report.md"
            return AssetRef(
                uuid=step.uuid or f"{entry.key}:research_answer",
                asset_type=RESEARCH_REPORT,
                created_at="",
                file_name=name,
                url=url,
                is_handle=False,
                version=1 + sum(1 for r in refs if r.file_name == name),
                title=content.get_text("title"),
                path=f"{step.path}.content.url",
            )
    return None
