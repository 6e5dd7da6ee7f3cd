"""Whether a run writes in a process of its own: :class:`Offloader` decides and starts it.

See :mod:`~pplx_archiver.shell.writer.writer_process` for the process itself.
"""

from __future__ import annotations

import os
from typing import Any

import structlog

from pplx_archiver.errors import StoreError
from pplx_archiver.shell.writer.writer_process import OffloadedStore, WriterProcess

log = structlog.get_logger()

# Below this many threads to fetch a run keeps its writer in a thread: starting the child
# (an interpreter and its imports, ~0.3 s of CPU) pays only on a run of some size.
OFFLOAD_MIN_THREADS = 150


class Offloader:
    """The run's ``offload``: a writer process for ``archive`` when the run is worth one.

    ``setting`` ``on`` always, ``off`` never, ``auto`` on a machine of several cores when the
    run fetches at least :data:`OFFLOAD_MIN_THREADS` threads — or at once when ``early`` (a
    first archive of an account: every listed thread is new, so the run is as large as the
    account): the child is then started right away, its start-up overlapping the session check
    and the listing, and takes over from the first write (:attr:`min_threads` 1). A child
    started early and never used is ended by :meth:`discard`.
    """

    def __init__(self, archive: Any, setting: str = "auto", *, early: bool = False) -> None:
        self._archive = archive
        self._setting = setting
        cores = (os.cpu_count() or 1) > 1
        early = early and (setting == "on" or (setting == "auto" and cores))
        self.min_threads = 1 if early else OFFLOAD_MIN_THREADS
        self._spare: WriterProcess | None = None
        if early:
            try:
                self._spare = WriterProcess(archive.out, wait=False)
            except StoreError as exc:
                log.warning("WRITER_PROCESS_UNAVAILABLE", error=str(exc))

    def __call__(self, to_fetch: int) -> OffloadedStore | None:
        spare, self._spare = self._spare, None
        wanted = spare is not None or self._setting == "on"
        if self._setting == "auto" and not wanted:
            wanted = to_fetch >= OFFLOAD_MIN_THREADS and (os.cpu_count() or 1) > 1
        if not wanted:
            return None
        try:
            return OffloadedStore(self._archive, self._archive.out, spare)
        except StoreError as exc:  # the run still works: it writes in a thread instead
            log.warning("WRITER_PROCESS_UNAVAILABLE", error=str(exc))
            return None

    def discard(self) -> None:
        """End the child started early if the run never wrote anything."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.discard()


def offload_for(archive: Any, setting: str = "auto", *, early: bool = False) -> Offloader:
    """The run's :class:`Offloader` (see there)."""
    return Offloader(archive, setting, early=early)
