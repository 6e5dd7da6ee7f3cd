"""The allocator setting keeps large buffers out of the heap arenas (flat RSS in long runs)."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator

import pytest

from pplx_archiver.shell.run.allocator import GC_THRESHOLDS, tune_gc

# Run in a child so the setting does not leak into the test process. After a 300 KB block
# served by mmap is freed, glibc raises its mmap threshold above 300 KB, so the next 250 KB
# block comes from the heap (no new mmapped block); with the threshold fixed it is mmapped.
_CHILD = """
import ctypes, sys
from pplx_archiver.shell.run.allocator import tune_allocator

FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                FIELDS.split()]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
tuned = tune_allocator() if sys.argv[1] == "tune" else False
libc.free(libc.malloc(300_000))
before = libc.mallinfo2().hblks
block = libc.malloc(250_000)
print(tuned, libc.mallinfo2().hblks - before)
libc.free(block)
"""


def _mmapped_blocks(mode: str) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True
    )
    tuned, blocks = done.stdout.split()
    return tuned, int(blocks)


def test_a_large_block_is_mmapped_after_tuning() -> None:
    assert _mmapped_blocks("tune") == ("True", 1)


def test_without_tuning_glibc_moves_it_into_the_heap() -> None:
    # The behaviour the setting turns off: what made a bulk run's RSS grow.
    assert _mmapped_blocks("plain") == ("False", 0)


@pytest.fixture
def gc_state() -> Iterator[None]:
    """The collector's thresholds and frozen objects as the test found them."""
    before = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_tune_gc_collects_rarely_and_freezes_what_exists(gc_state: None) -> None:
    assert gc.get_threshold() != GC_THRESHOLDS
    tune_gc()
    assert gc.get_threshold() == GC_THRESHOLDS
    assert gc.get_freeze_count() > 1000  # the imported modules, functions and classes


def test_the_command_line_tunes_the_collector_before_the_command_runs(
    gc_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pplx_archiver.cli as cli
    from pplx_archiver.shell.run import allocator

    seen: list[tuple[int, ...]] = []
    monkeypatch.setattr(allocator, "tune_allocator", lambda: False)  # not in this process
    monkeypatch.setattr(cli, "app", lambda prog_name: seen.append(gc.get_threshold()))
    with pytest.raises(SystemExit):
        cli.main()
    assert seen == [GC_THRESHOLDS]
