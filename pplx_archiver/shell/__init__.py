"""The async shell around the pure core, in parts named for what they own.

* :mod:`~pplx_archiver.shell.net` — the network: the API client, its retry policy and rate
  limiter, cookies and the session, CDN downloads, the library listing.
* :mod:`~pplx_archiver.shell.archive` — the archive on disk: the store and its one writer, the
  state index, the writer lock, crash-safe writes, the variant registry, search, assets.
* :mod:`~pplx_archiver.shell.run` — an archiving run: the runner, the per-thread pipeline, the
  scheduler, progress, monitoring, deletions, spaces.
* :mod:`~pplx_archiver.shell.writer` — the run's writer in a process of its own: the parent's
  proxy, the child, the frames between them, and the decision to offload.
* :mod:`~pplx_archiver.shell.ask` — asking: the stream of one answer, the steps around it, the
  model table.
* :mod:`~pplx_archiver.shell.timers` — the OS timers that run a sync: systemd user units or a
  crontab entry.
* :mod:`~pplx_archiver.shell.care` — the offline care commands: re-render, assets-backfill,
  reindex, verify, status, relations, usage-backfill.

Nothing here imports the simulator (an architecture test checks it).
"""
