"""Pure render core: raw thread payloads in, archive files and findings out; no I/O.

Grouped by feature, each group's public names in its ``__init__``:

* :mod:`~pplx_archiver.core.thread` — the thread render: decoding, the typed values, modes,
  Markdown, turns, work processes, assets, revisions and the render entry point.
* :mod:`~pplx_archiver.core.archive` — what the archive becomes: listing decisions (plan) and
  the typed write plans the one writer applies.
* :mod:`~pplx_archiver.core.ask` — asking: the request envelope, the model table, the stream.
* :mod:`~pplx_archiver.core.relations` — the relation graph of stored threads.
* :mod:`~pplx_archiver.core.spaces` — the space pages and space members.
* :mod:`~pplx_archiver.core.schedules` — the text of a schedule (systemd units, crontab line).
* :mod:`~pplx_archiver.core.vault` — notes of a vault and their file names.
* :mod:`~pplx_archiver.core.findings` — alert kinds and keys, the shrink guard's judgement.

Groups other than ``thread`` build on ``thread``; ``thread`` imports no other group.
"""
