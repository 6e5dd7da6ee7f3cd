"""The thread render: one thread's raw pages decoded to typed values and rendered to its files."""

from __future__ import annotations

from pplx_archiver.core.thread.answers import extract_answer
from pplx_archiver.core.thread.asset_files import (
    ASSETS_DIR,
    FAILED,
    HANDLE,
    HEAD_BYTES,
    INCOMPLETE,
    MANIFEST,
    MISSING,
    NO_CHANNEL,
    REPORT_TYPE,
    STORED,
    TOO_LARGE,
    Resolved,
    base_entry,
    choose_extension,
    dump_manifest,
    file_stem,
    name_files,
    refreshed_url,
    status_counts,
)
from pplx_archiver.core.thread.assets import extract_assets
from pplx_archiver.core.thread.blocks import BLOCK_KINDS
from pplx_archiver.core.thread.budgets import (
    DEFAULTS,
    Budgets,
    PageTally,
    body_values,
    depth_of,
    output_bytes,
)
from pplx_archiver.core.thread.citations import entry_sources
from pplx_archiver.core.thread.decode import DecodeMemo, decode_thread
from pplx_archiver.core.thread.flow import (
    AssetsNeed,
    FlavourPlan,
    PageNeed,
    ThreadPlan,
    thread_flow,
)
from pplx_archiver.core.thread.frozen import fast_init
from pplx_archiver.core.thread.interruptions import kind_of
from pplx_archiver.core.thread.labels import LABELS, label
from pplx_archiver.core.thread.layout import (
    normalize_timestamp_key,
    safe_component,
    thread_dir_name,
    title_slug,
    uuid8,
)
from pplx_archiver.core.thread.markdown import (
    blockquote,
    bullet,
    details,
    escape_cell,
    fence,
    heading,
    longest_backtick_run,
    md_table,
    safe_markdown,
    single_line,
)
from pplx_archiver.core.thread.markdown_blocks import scan_blocks
from pplx_archiver.core.thread.mdfile import md_bytes
from pplx_archiver.core.thread.mode_table import Mode, ModeViews, views_of
from pplx_archiver.core.thread.model import (
    AssetFile,
    AssetRef,
    ListingRow,
    RawPage,
    RenderContext,
    RenderResult,
    SpaceRef,
    ThreadInput,
)
from pplx_archiver.core.thread.modes import (
    blocks_needed,
    detect_mode,
    listing_modes,
    may_stay_plain,
    needs_blocks,
)
from pplx_archiver.core.thread.node import Node
from pplx_archiver.core.thread.output_files import OUTPUTS, OutputFile, is_output
from pplx_archiver.core.thread.paginate import BLOCKS, PLAIN, PagingRecord, thread_pages
from pplx_archiver.core.thread.plainsteps import KNOWN_PLAIN
from pplx_archiver.core.thread.prose import FIELDS, ThreadProse, TurnProse, joined
from pplx_archiver.core.thread.rawfile import decode_raw_pages, encode_raw_pages
from pplx_archiver.core.thread.render import ThreadParts, render_parts, render_thread
from pplx_archiver.core.thread.report import classify_report_bytes, pick_report, render_report
from pplx_archiver.core.thread.revisions import (
    EntryDigest,
    compare,
    digest,
    rewrite_findings,
    safe_digest,
    same_content,
    sha256,
    split_chunks,
    word_diff,
)
from pplx_archiver.core.thread.scrub import scrub_signed_urls, signed_urls
from pplx_archiver.core.thread.subagents import anchor_ids, collect_payloads
from pplx_archiver.core.thread.timeparse import date_of, iso, parse_ts
from pplx_archiver.core.thread.values import Entry, Item, SideBySide, Thread, WebResult, Workflow
from pplx_archiver.core.thread.variants import is_variant

__all__ = [
    "ASSETS_DIR",
    "BLOCKS",
    "BLOCK_KINDS",
    "DEFAULTS",
    "FAILED",
    "FIELDS",
    "HANDLE",
    "HEAD_BYTES",
    "INCOMPLETE",
    "KNOWN_PLAIN",
    "LABELS",
    "MANIFEST",
    "MISSING",
    "NO_CHANNEL",
    "OUTPUTS",
    "PLAIN",
    "REPORT_TYPE",
    "STORED",
    "TOO_LARGE",
    "AssetFile",
    "AssetRef",
    "AssetsNeed",
    "Budgets",
    "DecodeMemo",
    "Entry",
    "EntryDigest",
    "FlavourPlan",
    "Item",
    "ListingRow",
    "Mode",
    "ModeViews",
    "Node",
    "OutputFile",
    "PageNeed",
    "PageTally",
    "PagingRecord",
    "RawPage",
    "RenderContext",
    "RenderResult",
    "Resolved",
    "SideBySide",
    "SpaceRef",
    "Thread",
    "ThreadInput",
    "ThreadParts",
    "ThreadPlan",
    "ThreadProse",
    "TurnProse",
    "WebResult",
    "Workflow",
    "anchor_ids",
    "base_entry",
    "blockquote",
    "blocks_needed",
    "body_values",
    "bullet",
    "choose_extension",
    "classify_report_bytes",
    "collect_payloads",
    "compare",
    "date_of",
    "decode_raw_pages",
    "decode_thread",
    "depth_of",
    "details",
    "detect_mode",
    "digest",
    "dump_manifest",
    "encode_raw_pages",
    "entry_sources",
    "escape_cell",
    "extract_answer",
    "extract_assets",
    "fast_init",
    "fence",
    "file_stem",
    "heading",
    "is_output",
    "is_variant",
    "iso",
    "joined",
    "kind_of",
    "label",
    "listing_modes",
    "longest_backtick_run",
    "may_stay_plain",
    "md_bytes",
    "md_table",
    "name_files",
    "needs_blocks",
    "normalize_timestamp_key",
    "output_bytes",
    "parse_ts",
    "pick_report",
    "refreshed_url",
    "render_parts",
    "render_report",
    "render_thread",
    "rewrite_findings",
    "safe_component",
    "safe_digest",
    "safe_markdown",
    "same_content",
    "scan_blocks",
    "scrub_signed_urls",
    "sha256",
    "signed_urls",
    "single_line",
    "split_chunks",
    "status_counts",
    "thread_dir_name",
    "thread_flow",
    "thread_pages",
    "title_slug",
    "uuid8",
    "views_of",
    "word_diff",
]
