"""Every asset version a thread's payloads mention, numbered v1..vN per file name.

Assets live in ``unified_assets`` blocks, plan-block step assets,
``thread_metadata.workflow_snapshots.SHARED_FILES`` items and ``sources_payload.assets``
(docs/dev/api.md §7). The shell downloads them; a report's bytes come back in
``ThreadInput.downloads``.
"""

from __future__ import annotations

from collections.abc import Iterator

from pplx_archiver.core.thread.decode import decode_thread
from pplx_archiver.core.thread.model import AssetRef, ThreadInput
from pplx_archiver.core.thread.node import Node
from pplx_archiver.core.thread.report import answer_report_ref
from pplx_archiver.core.thread.timeparse import parse_ts
from pplx_archiver.core.thread.values import Entry, Thread, Workflow

FILE_KEYS = (
    "research_report",
    "doc_file",
    "slide_file",
    "pdf_file",
    "docx_file",
    "code_file",
    "xlsx_file",
    "audio_file",
    "chart",
    "quiz",
    "model_3d",
    "app",
)


def _workflow_assets(workflow: Workflow | None) -> Iterator[Node]:
    if workflow is None:
        return
    for step in workflow.steps:
        for item in step.items:
            if item.type == "WORKFLOW_ITEM_SOURCES" and isinstance(item.raw, list):
                holder = Node(item.raw, item.where, "payload.sources_payload.assets")
                yield from holder.list_items()
            if item.workflow is not None:
                yield from _workflow_assets(item.workflow)


def _raw_assets(thread: Thread) -> Iterator[Node]:
    entries: tuple[Entry, ...] = thread.entries + thread.background
    for entry in entries:
        yield from entry.blocks.asset_nodes
        yield from _workflow_assets(entry.blocks.workflow)
    yield from thread.shared_nodes


def _inline(node: Node) -> str | None:
    diff = node.get_obj("asset_diff")
    if diff is not None:
        lines: list[str] = []
        for f in diff.get_list("files"):
            lines.append(f"--- {f.get_text('display_path') or f.get_text('filename')}")
            for line in f.get_list("lines"):
                sign = {"ADD": "+", "REMOVE": "-"}.get(line.get_str("kind"), " ")
                lines.append(sign + line.get_text("text"))
        return "\n".join(lines)
    code = node.get_obj("code")
    if code is not None and code.get_text("script"):
        return code.get_text("script")
    report = node.get_obj("research_report")
    if report is not None and report.get_text("source_content"):
        return report.get_text("source_content")
    for info in node.get_list("download_info"):
        if isinstance(info.v, dict) and info.get_text("text_content"):
            return info.get_text("text_content")
    return None


def _describe(node: Node) -> tuple[str, str | None]:
    """File name and URL of an asset: typed file object, download info, generated image."""
    name = ""
    url: str | None = None
    for key in FILE_KEYS:
        obj = node.get_obj(key)
        if obj is not None:
            name = obj.get_text("filename") or obj.get_text("file_name") or obj.get_text("name")
            url = obj.get_text("url") or None
            break
    for info in node.get_list("download_info"):
        if not isinstance(info.v, dict):
            continue
        name = name or info.get_text("filename")
        url = url or info.get_text("url") or info.get_text("s3_url") or None
    image = node.get_obj("generated_image")
    if image is not None:
        url = url or image.get_text("url") or None
    return name, url


def assets_of(thread: Thread) -> tuple[AssetRef, ...]:
    """The asset versions of a decoded thread (deduplicated, versioned per file name)."""
    found: list[tuple[int, str, AssetRef]] = []
    seen: set[tuple[str, str, str]] = set()
    for node in _raw_assets(thread):
        node.as_obj()
        path = node.path
        uuid = node.get_text("uuid")
        created = node.get_text("created_at")
        name, url = _describe(node)
        name = name or node.get_text("title") or uuid
        key = (uuid, created, name)
        if key in seen:
            continue
        seen.add(key)
        ref = AssetRef(
            uuid=uuid,
            asset_type=node.get_text("asset_type"),
            created_at=created,
            file_name=name,
            url=url,
            is_handle=uuid.startswith("toolu_"),
            version=0,
            title=node.get_text("title"),
            inline_content=_inline(node),
            path=path,
        )
        found.append((parse_ts(created, f"{path}.created_at") or 0, uuid, ref))
    found.sort(key=lambda t: (t[2].file_name, t[0], t[1]))
    counters: dict[str, int] = {}
    refs: list[AssetRef] = []
    for _, _, ref in found:
        counters[ref.file_name] = counters.get(ref.file_name, 0) + 1
        refs.append(
            AssetRef(
                uuid=ref.uuid,
                asset_type=ref.asset_type,
                created_at=ref.created_at,
                file_name=ref.file_name,
                url=ref.url,
                is_handle=ref.is_handle,
                version=counters[ref.file_name],
                title=ref.title,
                inline_content=ref.inline_content,
                path=ref.path,
            )
        )
    fallback = answer_report_ref(thread, refs)  # an older report: only its step's URL
    return (*refs, fallback) if fallback is not None else tuple(refs)


def extract_assets(inp: ThreadInput) -> tuple[AssetRef, ...]:
    """Every asset version of a thread input (plain and schematized pages)."""
    return assets_of(decode_thread(inp.plain_pages, inp.blocks_pages))
