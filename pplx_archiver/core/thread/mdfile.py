"""Bytes and scalars of the Markdown files: no control characters, safe YAML front matter."""

from __future__ import annotations

import re
import unicodedata

_YAML_VERBATIM = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII except " and \


# C0 controls but tab and newline, and DEL, shown as their Unicode control pictures (␀ ␇ ␛):
# a Markdown file stays text for grep and editors whatever a payload held.
_CONTROLS = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)} | {0x7F: 0x2421}
# The same characters as UTF-8 bytes: each is one byte below 0x80, which no byte of a
# longer sequence is, so deleting them from the encoded text finds them (~5x faster than
# a regular expression's search of the text).
_CONTROL_BYTES = bytes(sorted(_CONTROLS))


def md_bytes(text: str) -> bytes:
    """A Markdown file's bytes: UTF-8, no control character but tab and newline."""
    data = text.encode("utf-8", "replace")
    if len(data.translate(None, _CONTROL_BYTES)) == len(data):
        return data
    return text.translate(_CONTROLS).encode("utf-8", "replace")


def yaml_scalar(value: str | None) -> str:
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
