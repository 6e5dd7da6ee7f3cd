"""Memory settings for a long run: the C allocator's, and the cyclic garbage collector's.

glibc's ``malloc`` serves a request of 128 KiB or more with its own ``mmap`` and returns it
on ``free`` — until the first such block is freed: then it raises that threshold to the
freed block's size (up to 32 MiB), and every later thread payload, response body and
rendered file of that size is carved from the heap arenas instead. Those arenas (one per
worker thread that allocated) keep the freed space as holes the next, differently sized
payload rarely fits, so a bulk run's RSS grew with every thread archived while the live
heap stayed flat (docs/dev/performance.md, "Memory"). Fixing the threshold with
``mallopt(M_MMAP_THRESHOLD, …)`` turns that adjustment off.

The cyclic garbage collector, at Python's default thresholds (700, 10, 10), ran ~3,100
young, ~280 middle and 25 full collections in a 2,000-thread run and took ~11 % of the main
process's CPU, the full ones walking every live object. Nearly every object a thread
creates is freed by its reference count, so :func:`tune_gc` collects far less often
(:data:`GC_THRESHOLDS`) and freezes what start-up made (imports, the command line) out of
every later collection (docs/dev/performance.md, "The garbage collector").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys

# glibc's malloc.h: ``#define M_MMAP_THRESHOLD -3``; setting it disables the dynamic threshold.
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024  # glibc's own default, now fixed
# A young collection after 200,000 net new container objects instead of 700; older ones
# after 20 of the generation below instead of 10. (Nearly every object a thread makes is
# freed by its reference count, which lowers the count again; each request's response no
# longer sits in a reference cycle, see ``shell/net/transport.py: release``, so the run
# makes next to no cyclic garbage.)
GC_THRESHOLDS = (200_000, 20, 20)


def tune_gc() -> None:
    """Collect cyclic garbage rarely, and never walk what exists now (call after start-up)."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


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
