"""The C allocator's setting for a long run: large buffers go back to the system when freed.

glibc's ``malloc`` serves a request of 128 KiB or more with its own ``mmap`` and returns it
on ``free`` — until the first such block is freed: then it raises that threshold to the
freed block's size (up to 32 MiB), and every later thread payload, response body and
rendered file of that size is carved from the heap arenas instead. Those arenas (one per
worker thread that allocated) keep the freed space as holes the next, differently sized
payload rarely fits, so a bulk run's RSS grew with every thread archived while the live
heap stayed flat (docs/dev/performance.md, "Memory"). Fixing the threshold with
``mallopt(M_MMAP_THRESHOLD, …)`` turns that adjustment off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# glibc's malloc.h: ``#define M_MMAP_THRESHOLD -3``; setting it disables the dynamic threshold.
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024  # glibc's own default, now fixed


def tune_allocator() -> bool:
    """Fix glibc's mmap threshold for this process; False where there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
