"""Asset files of a thread: their names, their extensions and ``assets/manifest.json``.

Pure: the shell resolves each :class:`~pplx_archiver.core.thread.model.AssetRef` version (reused,
downloaded, inline, or a status without a file) and this module names the files and writes
the manifest. Files are named ``assets/<stem>.v<N><ext>``: the stem from the file name,
sanitized; the extension follows the content (:func:`choose_extension`: magic bytes of
PNG/JPEG/GIF/WebP/PDF and other binary formats, then SVG/HTML/XML/JSON text, so a PNG is
never stored under a ``.md`` name the URL or the asset type suggested). Two versions that
would share a name get the asset's uuid8 in it. The manifest lists every version sorted, with
no URL query and no time of the run, so an unchanged thread gives the same bytes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from pplx_archiver.core.thread.assets import FILE_KEYS
from pplx_archiver.core.thread.layout import safe_component, uuid8
from pplx_archiver.core.thread.model import AssetRef

ASSETS_DIR = "assets"
MANIFEST = f"{ASSETS_DIR}/manifest.json"
MANIFEST_FORMAT = 1
REPORT_TYPE = "RESEARCH_REPORT"
HEAD_BYTES = 4096  # how much of a file the extension is chosen from

# Entry statuses of the manifest.
STORED = "stored"
HANDLE = "handle"
NO_CHANNEL = "no_channel"
TOO_LARGE = "too_large"
FAILED = "failed"
MISSING = "missing"  # offline backfill: downloadable, not fetched yet
INCOMPLETE = frozenset({FAILED, MISSING})

_EXT = re.compile(r"^\.[A-Za-z0-9]{1,8}$")
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", ".pdf"),
    (b"\x89PNG", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"GIF8", ".gif"),
    (b"PK\x03\x04", ".zip"),
    (b"PK\x05\x06", ".zip"),
    (b"\x1f\x8b", ".gz"),
    (b"\xd0\xcf\x11\xe0", ".doc"),
    (b"7z\xbc\xaf\x27\x1c", ".7z"),
    (b"Rar!", ".rar"),
    (b"ID3", ".mp3"),
    (b"OggS", ".ogg"),
    (b"glTF", ".glb"),
)
# A declared extension kept when the magic bytes name its container format.
_CONTAINED = {
    ".zip": frozenset({".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".epub", ".jar"}),
    ".doc": frozenset({".xls", ".ppt", ".msg"}),
    ".jpg": frozenset({".jpeg"}),
    ".gz": frozenset({".tgz"}),
}
# A declared extension kept when text sniffing names its family.
_FAMILY = {
    ".html": frozenset({".html", ".htm", ".xhtml"}),
    ".svg": frozenset({".svg"}),
    ".xml": frozenset({".xml", ".svg", ".xhtml", ".rss", ".atom", ".xsd", ".xsl", ".kml", ".gpx"}),
    ".json": frozenset({".json", ".geojson", ".ipynb", ".jsonl", ".map", ".webmanifest"}),
}
_BINARY_EXTS = frozenset({e for _m, e in _MAGIC} | {e for s in _CONTAINED.values() for e in s}) | {
    ".webp",
    ".wav",
    ".bmp",
    ".ico",
    ".tif",
    ".tiff",
    ".mp4",
    ".mov",
    ".avi",
    ".bin",
    ".exe",
}
_TEXT_EXTS = frozenset({e for s in _FAMILY.values() for e in s}) | {
    ".md",
    ".txt",
    ".csv",
    ".tsv",
    ".diff",
    ".patch",
    ".py",
    ".js",
    ".ts",
    ".css",
    ".yaml",
    ".yml",
    ".tex",
    ".rst",
}
_TYPE_EXT = {
    "RESEARCH_REPORT": ".md",
    "DOC_FILE": ".md",
    "ASSET_DIFF": ".diff",
    "CODE_FILE": ".txt",
    "CODE_ASSET": ".txt",
    "SLIDES": ".pptx",
}


def _suffix(name: str) -> str | None:
    """The lowercased extension of the last path component (as ``PurePosixPath.suffix``)."""
    base = name.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    suffix = base[dot:] if 0 < dot < len(base) - 1 else ""
    return suffix.lower() if _EXT.match(suffix) else None


def _magic_ext(head: bytes) -> str | None:
    for magic, ext in _MAGIC:
        if head.startswith(magic):
            return ext
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return ".webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return ".wav"
    return None


def _strong_text(head: bytes) -> str | None:
    """Text formats recognizable beyond doubt: HTML, SVG, XML, JSON (the head parses)."""
    text = head.decode("utf-8", "ignore").lstrip("\ufeff").lstrip()
    lower = text[:256].lower()
    if lower.startswith(("<!doctype html", "<html")):
        return ".html"
    if lower.startswith("<svg") or (lower.startswith("<?xml") and "<svg" in lower):
        return ".svg"
    if lower.startswith("<?xml"):
        return ".xml"
    if text.startswith(("{", "[")):
        try:
            orjson.loads(head)
        except orjson.JSONDecodeError:
            return None
        return ".json"
    return None


def _weak_text(head: bytes) -> str | None:
    """Likely text formats (diff, Python, JSON cut by the head, Markdown)."""
    text = head.decode("utf-8", "ignore").lstrip("\ufeff").lstrip()
    if text.startswith(("diff --git", "--- ", "@@ ")):
        return ".diff"
    if text.startswith("#!") and "python" in text.split("\n", 1)[0]:
        return ".py"
    if text.startswith(("{", "[")) and text.rstrip().endswith(("}", "]")):
        return ".json"
    if text.startswith("# ") or "\n## " in text:
        return ".md"
    return None


def is_text(head: bytes) -> bool:
    """True when ``head`` is UTF-8 text (a character cut at its end allowed)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3
    return True


def choose_extension(url: str | None, head: bytes, asset_type: str, file_name: str) -> str:
    """The file extension of an asset whose content starts with ``head``.

    The content decides: binary magic bytes (a declared extension of the same container is
    kept: ``.docx`` for a zip); for text, the URL's extension unless it names a binary format
    or another text format than the content shows, then the sniffed text format, the asset
    type's and the file name's; ``.txt`` for other text and ``.bin`` for other bytes.
    """
    url_ext = _suffix(unquote(urlsplit(url).path)) if url else None
    name_ext = _suffix(file_name)
    type_ext = _TYPE_EXT.get(asset_type)
    magic = _magic_ext(head)
    if magic is not None:
        declared = url_ext or name_ext
        return declared if declared is not None and declared in _CONTAINED.get(magic, ()) else magic
    if not is_text(head):
        for ext in (url_ext, type_ext, name_ext):
            if ext is not None and ext not in _TEXT_EXTS:
                return ext
        return ".bin"
    strong = _strong_text(head)
    if url_ext and url_ext not in _BINARY_EXTS and (strong is None or url_ext in _FAMILY[strong]):
        return url_ext
    if strong is not None:
        return strong
    for ext in (_weak_text(head), type_ext, name_ext):
        if ext is not None and ext not in _BINARY_EXTS:
            return ext
    return ".txt"


def file_stem(file_name: str) -> str:
    """The sanitized stem of an asset file name (its extension dropped)."""
    suffix = _suffix(file_name)
    stem = file_name[: -len(suffix)] if suffix else file_name
    return safe_component(stem, fallback="asset", max_len=100)


def base_entry(ref: AssetRef, url_path: str | None) -> dict[str, Any]:
    """The manifest entry of a version before it is resolved (``url_path``: no query)."""
    entry: dict[str, Any] = {
        "uuid": ref.uuid,
        "asset_type": ref.asset_type,
        "file_name": ref.file_name,
        "title": ref.title,
        "version": ref.version,
        "created_at": ref.created_at,
        "found_at": ref.path,
    }
    if url_path is not None:
        entry["url_path"] = url_path
    return entry


def dump_manifest(thread_uuid: str, entries: Sequence[Mapping[str, Any]]) -> bytes:
    """``assets/manifest.json`` bytes: sorted keys, entries by (file name, version, uuid)."""
    ordered = sorted(
        entries, key=lambda e: (str(e["file_name"]), int(e["version"]), str(e["uuid"]))
    )
    body = {"format": MANIFEST_FORMAT, "thread_uuid": thread_uuid, "assets": ordered}
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


@dataclasses.dataclass(frozen=True, slots=True)
class Resolved:
    """One version as the shell resolved it: its entry, extension, and whether it is reused."""

    ref: AssetRef
    entry: Mapping[str, Any]
    ext: str = ".bin"
    reused: bool = False


def name_files(versions: Sequence[Resolved]) -> list[str | None]:
    """The archive path of each version (None: no new file), unique within the thread.

    A reused version keeps its stored path; a stored new one is ``assets/<stem>.v<N><ext>``,
    with the asset's uuid8 added when that name is taken.
    """
    taken = {str(v.entry["path"]) for v in versions if v.reused}
    names: list[str | None] = []
    for v in versions:
        if v.entry["status"] != STORED or v.reused:
            names.append(None)
            continue
        stem, number = file_stem(v.ref.file_name), v.ref.version
        rel = f"{ASSETS_DIR}/{stem}.v{number}{v.ext}"
        if rel in taken or rel == MANIFEST:
            tag = safe_component(uuid8(v.ref.uuid), fallback="x")
            rel = f"{ASSETS_DIR}/{stem}.{tag}.v{number}{v.ext}"
        taken.add(rel)
        names.append(rel)
    return names


def status_counts(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Versions per status (and per source for stored ones), for ``ASSETS_ARCHIVED``."""
    out: dict[str, int] = {}
    for entry in entries:
        key = str(entry["status"])
        if key == STORED:
            key = f"stored_{entry.get('source', 'download')}"
        out[key] = out.get(key, 0) + 1
    return out


def refreshed_url(decoded: Any) -> str | None:
    """The fresh signed URL of a ``/rest/assets/{uuid}/data`` answer, if it holds one."""
    if not isinstance(decoded, dict):
        return None
    data = decoded.get("asset_data")
    if not isinstance(data, dict):
        return None
    for key in FILE_KEYS:
        obj = data.get(key)
        if isinstance(obj, dict) and isinstance(obj.get("url"), str) and obj["url"]:
            return str(obj["url"])
    infos = data.get("download_info")
    for info in infos if isinstance(infos, list) else ():
        if isinstance(info, dict):
            for key in ("url", "s3_url"):
                if isinstance(info.get(key), str) and info[key]:
                    return str(info[key])
    image = data.get("generated_image")
    if isinstance(image, dict) and isinstance(image.get("url"), str) and image["url"]:
        return str(image["url"])
    return None
