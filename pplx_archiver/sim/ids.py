"""Uuid-shaped identifiers that carry their owner: kind and thread index, checked by a MAC.

The simulator never keeps a table of its 50,000 thread ids: an id's last group encodes the
kind of object and the (masked) thread index, plus a 16-bit check value derived from the
seed, so a lookup regenerates the thread and compares. Ids still look like random v4 uuids.
"""

from __future__ import annotations

import random
import re
import string
import zlib

THREAD = 0
ENTRY = 1
ASSET = 2
SIBLING = 3
BACKGROUND = 4
CONTEXT = 5
OTHER = 6

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_ALNUM = string.ascii_letters + string.digits


def _mask(seed: int) -> int:
    return zlib.crc32(f"mask:{seed}".encode()) & 0xFFFFFFF


def _mac(seed: int, kind: int, index: int) -> int:
    return zlib.crc32(f"{seed}:{kind}:{index}".encode()) & 0xFFFF


def make_id(rng: random.Random, seed: int, kind: int, index: int) -> str:
    """A v4-shaped uuid whose last group names ``kind`` and ``index`` for ``seed``."""
    h = f"{rng.getrandbits(80):020x}"
    variant = "89ab"[int(h[16], 16) % 4]
    mixed = (index ^ _mask(seed)) & 0xFFFFFFF
    tail = f"{kind:x}{mixed:07x}{_mac(seed, kind, index):04x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{tail}"


def decode_id(value: str, seed: int) -> tuple[int, int] | None:
    """``(kind, index)`` of an id made by :func:`make_id` for ``seed``; ``None`` otherwise."""
    if not _UUID.match(value):
        return None
    tail = value[-12:]
    kind = int(tail[0], 16)
    index = (int(tail[1:8], 16) ^ _mask(seed)) & 0xFFFFFFF
    if int(tail[8:], 16) != _mac(seed, kind, index):
        return None
    return kind, index


def tool_id(rng: random.Random) -> str:
    """A tool-call id shaped like ``toolu_`` + 24 letters and digits."""
    return "toolu_" + "".join(rng.choice(_ALNUM) for _ in range(24))
