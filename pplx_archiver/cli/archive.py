"""Archiving commands: ``batch``, ``sync``, ``export``, ``sync-deleted`` and ``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._monitor import MonitorOptions
from pplx_archiver.cli._options import (
    ACCOUNT,
    LOG_FORMAT,
    SESSION_OPTIONS,
    OptionTable,
    bounded,
    check_since,
    shared_options,
)
from pplx_archiver.cli._run import CommonOptions, fail, run_cli
from pplx_archiver.core.thread import mode_table
from pplx_archiver.errors import ConfigError

OUT = typer.Option(
    None, "--out", "-o", metavar="DIR", help="Archive root folder [default: ./archive]."
)
MODE = typer.Option(
    None,
    "--mode",
    "-m",
    metavar="MODE",
    help="Only threads of these modes (repeatable): "
    f"{', '.join(mode_table.VIEWS.names)}; e.g. --mode study. "
    "Threads whose mode the listing or an earlier run tells are not fetched.",
)
SINCE = typer.Option(
    None,
    "--since",
    metavar="DATE",
    help="Only threads updated on or after DATE (UTC), e.g. --since 2026-07-20.",
)
LIMIT = bounded("limit", None, "--limit", metavar="N", help="Fetch at most N threads this run.")
CONCURRENCY = bounded(
    "concurrency",
    None,
    "--concurrency",
    "-c",
    metavar="N",
    help="Threads fetched at once [default: 4].",
)
RATE = bounded(
    "rate",
    None,
    "--rate",
    metavar="RATE",
    help="Ceiling of API requests per second, account-wide [default: 2].",
)
BURST = bounded("burst", None, "--burst", metavar="N", help="Token-bucket burst [default: 4].")
LANG = typer.Option(None, "--lang", metavar="[en|zh]", help="Labels in the Markdown [default: en].")
DRY_RUN = typer.Option(False, "--dry-run", help="List and print the plan; fetch nothing.")
LISTER = typer.Option(
    None,
    "--lister",
    metavar="[rest|graphql]",
    help="Library listing: the REST list or the web app's GraphQL query [default: rest].",
)
INCLUDE_SPACES = typer.Option(
    False, "--include-spaces", help="Also archive threads of spaces shared with the account."
)
FORCE = typer.Option(False, "--force", help="Refetch every listed thread, changed or not.")
FULL = typer.Option(False, "--full", help="List everything (no early stop of the listing).")
ASSET_CONCURRENCY = bounded(
    "asset_concurrency",
    None,
    "--asset-concurrency",
    metavar="N",
    help="Asset downloads at once (CDN budget) [default: 4].",
)
ASSET_RATE = bounded(
    "asset_rate",
    None,
    "--asset-rate",
    metavar="RATE",
    help="Asset downloads per second [default: 20].",
)
MAX_ASSET_BYTES = bounded(
    "max_asset_bytes",
    None,
    "--max-asset-bytes",
    metavar="BYTES",
    help="Assets larger than this are recorded, not stored [default: 200 MB].",
)
PAGE_LIMIT = bounded(
    "page_limit",
    None,
    "--page-limit",
    metavar="N",
    help="Entries per thread page request [default: 100].",
)
REQUEST_DEADLINE = bounded(
    "request_deadline",
    None,
    "--request-deadline",
    metavar="SECONDS",
    help="Seconds one API request may take, headers and whole body [default: 60].",
)
DOWNLOAD_DEADLINE = bounded(
    "download_deadline",
    None,
    "--download-deadline",
    metavar="SECONDS",
    help="Seconds one asset download may take [default: 240].",
)
TOTAL_DEADLINE = bounded(
    "total_deadline",
    None,
    "--total-deadline",
    metavar="SECONDS",
    help="Seconds one request or download may take with all its retries [default: 300].",
)
MAX_BODY_BYTES = bounded(
    "max_body_bytes",
    None,
    "--max-body-bytes",
    metavar="BYTES",
    help="Largest API body read [default: 64 MiB].",
)
MAX_THREAD_ENTRIES = bounded(
    "max_thread_entries",
    None,
    "--max-thread-entries",
    metavar="N",
    help="Entries one thread may hold, per flavour, all pages together [default: 10000].",
)
MAX_THREAD_TURNS = bounded(
    "max_thread_turns",
    None,
    "--max-thread-turns",
    metavar="N",
    help="Turns (with background entries) one thread may hold [default: 5000].",
)
MAX_THREAD_BLOCKS = bounded(
    "max_thread_blocks",
    None,
    "--max-thread-blocks",
    metavar="N",
    help="Schematized blocks one thread may hold [default: 200000].",
)
MAX_THREAD_SOURCES = bounded(
    "max_thread_sources",
    None,
    "--max-thread-sources",
    metavar="N",
    help="Sources one thread may cite [default: 100000].",
)
MAX_THREAD_DEPTH = bounded(
    "max_thread_depth",
    None,
    "--max-thread-depth",
    metavar="N",
    help="Nesting depth of one thread page [default: 256].",
)
MAX_THREAD_BYTES = bounded(
    "max_thread_bytes",
    None,
    "--max-thread-bytes",
    metavar="BYTES",
    help="Bytes one thread may write, raw and derived files [default: 512 MiB].",
)
MAX_THREAD_VALUES = bounded(
    "max_thread_values",
    None,
    "--max-thread-values",
    metavar="N",
    help="JSON objects and arrays of one API body, counted before it is parsed [default: 1000000].",
)
VERBOSE = typer.Option(False, "--verbose", "-v", help="Also show per-thread events.")
QUIET = typer.Option(False, "--quiet", "-q", help="Show only errors (and the summary).")
EARLY_STOP = bounded(
    "early_stop",
    None,
    "--early-stop",
    metavar="N",
    help="Stop listing after N known-unchanged threads in a row (0 = never) [default: 50].",
)
ACCEPT_SHRINK = typer.Option(
    False,
    "--accept-shrink",
    help="Proceed when a complete listing lacks over 5% of the archived threads "
    "(otherwise nothing is marked deleted and the exit code is 8).",
)
JSON = typer.Option(
    False, "--json", help="Print one JSON summary object on stdout; human output goes to stderr."
)
HEALTHCHECK = typer.Option(
    None,
    "--healthcheck",
    metavar="URL",
    help="Ping this healthchecks.io-style URL: /start, then the URL or /<exit code>.",
)
METRICS_FILE = typer.Option(
    None,
    "--metrics-file",
    metavar="FILE",
    help="Write a Prometheus textfile (replaced atomically) after the run.",
)


# Each option of the archiving commands, declared once: name → (type, option); the session
# options are the shared ones of cli/_options.py.
RUN_OPTIONS: OptionTable = {
    "out": (Path | None, OUT),
    "mode": (list[str] | None, MODE),
    "since": (str | None, SINCE),
    "limit": (int | None, LIMIT),
    "concurrency": (int | None, CONCURRENCY),
    "rate": (float | None, RATE),
    "burst": (int | None, BURST),
    "lang": (str | None, LANG),
    "log_format": (str | None, LOG_FORMAT),
    "dry_run": (bool, DRY_RUN),
    "force": (bool, FORCE),
    "full": (bool, FULL),
    "early_stop": (int | None, EARLY_STOP),
    "lister": (str | None, LISTER),
    "include_spaces": (bool, INCLUDE_SPACES),
    "accept_shrink": (bool, ACCEPT_SHRINK),
    "asset_concurrency": (int | None, ASSET_CONCURRENCY),
    "asset_rate": (float | None, ASSET_RATE),
    "max_asset_bytes": (int | None, MAX_ASSET_BYTES),
    "page_limit": (int | None, PAGE_LIMIT),
    "json_summary": (bool, JSON),
    "healthcheck": (str | None, HEALTHCHECK),
    "metrics_file": (Path | None, METRICS_FILE),
    "request_deadline": (float | None, REQUEST_DEADLINE),
    "download_deadline": (float | None, DOWNLOAD_DEADLINE),
    "total_deadline": (float | None, TOTAL_DEADLINE),
    "max_body_bytes": (int | None, MAX_BODY_BYTES),
    "max_thread_entries": (int | None, MAX_THREAD_ENTRIES),
    "max_thread_turns": (int | None, MAX_THREAD_TURNS),
    "max_thread_blocks": (int | None, MAX_THREAD_BLOCKS),
    "max_thread_sources": (int | None, MAX_THREAD_SOURCES),
    "max_thread_depth": (int | None, MAX_THREAD_DEPTH),
    "max_thread_bytes": (int | None, MAX_THREAD_BYTES),
    "max_thread_values": (int | None, MAX_THREAD_VALUES),
    "verbose": (bool, VERBOSE),
    "quiet": (bool, QUIET),
    "account": (list[str] | None, ACCOUNT),
    **SESSION_OPTIONS,
}
# The options of each command, in the order --help shows them.
_DEADLINES_AND_BUDGETS = (
    "request_deadline", "download_deadline", "total_deadline", "max_body_bytes",
    "max_thread_entries", "max_thread_turns", "max_thread_blocks", "max_thread_sources",
    "max_thread_depth", "max_thread_bytes", "max_thread_values",
)  # fmt: skip
_MONITOR = ("json_summary", "healthcheck", "metrics_file")
_SESSION = tuple(SESSION_OPTIONS)
_LISTING = (
    "out", "mode", "since", "limit", "concurrency", "rate", "burst", "lang", "log_format",
    "dry_run", "force", "full", "early_stop", "lister", "include_spaces",
)  # fmt: skip
_FETCH = ("accept_shrink", "asset_concurrency", "asset_rate", "max_asset_bytes", "page_limit",
          *_MONITOR, *_DEADLINES_AND_BUDGETS, "verbose", "quiet", *_SESSION, "account")  # fmt: skip
BATCH_OPTIONS = (*_LISTING, *_FETCH)
SYNC_OPTIONS = (*_LISTING, "check_deleted", "retry_failed", *_FETCH, "site")
EXPORT_OPTIONS = ("thread", "out", "lang", "log_format", *_MONITOR, *_DEADLINES_AND_BUDGETS,
                  "verbose", "quiet", *_SESSION)  # fmt: skip
SYNC_DELETED_OPTIONS = ("out", "online", "accept_shrink", "log_format", "lister", *_MONITOR,
                        *_SESSION, "verbose", "quiet")  # fmt: skip


def _common(**kw: Any) -> CommonOptions:
    kw["monitor"] = MonitorOptions(
        json=kw.pop("json_summary"),
        healthcheck=kw.pop("healthcheck"),
        metrics_file=kw.pop("metrics_file"),
        retry_failed=kw.pop("retry_failed", False),
    )
    modes = tuple(kw.pop("mode") or ())
    names = mode_table.VIEWS.names
    bad = [m for m in modes if m not in names]
    if bad:
        raise typer.BadParameter(f"unknown mode {bad[0]!r}; choose from {', '.join(names)}")
    try:
        kw["since"] = check_since(kw.get("since"))
    except ConfigError as exc:
        raise typer.Exit(fail(exc)) from None
    return CommonOptions(modes=frozenset(modes), **kw)


@app.command()
@shared_options(RUN_OPTIONS, BATCH_OPTIONS)
def batch(
    **options: Any,
) -> None:
    """Archive every listed thread; threads archived before and unchanged are skipped.

    A listing read to its end that lacks more than 5% (and at least 10) of the threads
    archived for the account ends the run with exit code 8 (LISTING_SHRANK) after archiving
    what was listed; --accept-shrink proceeds.

    \b
    Examples:
      pplx-export batch -o ~/pplx-archive
      pplx-export batch -o ~/pplx-archive --mode study --since 2026-07-01 --dry-run
      pplx-export batch -o ~/pplx-archive --account work
    """
    run_cli("batch", _common(**options))


@app.command()
@shared_options(RUN_OPTIONS, SYNC_OPTIONS)
def sync(
    check_deleted: bool = typer.Option(
        False, "--check-deleted", help="Also confirm deletions online and tombstone them."
    ),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="Fetch exactly the threads `pplx-export failed` lists."
    ),
    site: bool = typer.Option(
        False, "--site", help="Then update the static site (<archive>/site), as `site` does."
    ),
    **options: Any,
) -> None:
    """Incremental run for schedules: only new, moved and earlier-failed threads are fetched.

    Shrink guard: when a listing read to its end (no early stop, e.g. with --check-deleted)
    lacks more than 5% (and at least 10) of the threads archived for the account, the run
    still archives what was listed but marks nothing deleted and exits with code 8; once the
    threads are known to be really gone, `pplx-export sync --check-deleted --accept-shrink`
    tombstones them.

    \b
    Examples:
      pplx-export sync -o ~/pplx-archive
      pplx-export sync -o ~/pplx-archive --check-deleted --log-format json
      pplx-export sync -o ~/pplx-archive --mode study --site --json
    """
    options.update(check_deleted=check_deleted, retry_failed=retry_failed)
    if not site or options["dry_run"]:
        run_cli("sync", _common(**options))
    from pplx_archiver.cli.site import after_sync

    after_sync(lambda: run_cli("sync", _common(**options)), options["out"], options["log_format"])


@app.command()
@shared_options(RUN_OPTIONS, EXPORT_OPTIONS)
def export(
    thread: list[str] = typer.Argument(
        ..., metavar="THREAD", help="Thread uuid, slug or URL (one or more)."
    ),
    **options: Any,
) -> None:
    """Archive the given threads now, whether or not they changed.

    \b
    Examples:
      pplx-export export -o ~/pplx-archive https://www.perplexity.ai/search/<slug>
      pplx-export export -o ~/pplx-archive <uuid> <uuid>
    """
    run_cli("export", _common(thread=thread, mode=None, force=True, **options))


@app.command("sync-deleted")
@shared_options(RUN_OPTIONS, SYNC_DELETED_OPTIONS)
def sync_deleted(
    online: bool = typer.Option(
        False, "--online", help="Confirm each candidate with a thread request and tombstone it."
    ),
    **options: Any,
) -> None:
    """Find archived threads missing from the listing; with --online, confirm and tombstone.

    Never deletes or moves archive files: a confirmed deletion only writes `remote_deleted`
    into the thread's thread.json and the index. When the listing lacks more than 5% (and at
    least 10) of the archived threads, nothing is confirmed and the exit code is 8 unless
    --accept-shrink is given.

    \b
    Examples:
      pplx-export sync-deleted -o ~/pplx-archive
      pplx-export sync-deleted -o ~/pplx-archive --online
      pplx-export sync-deleted -o ~/pplx-archive --online --accept-shrink
    """
    run_cli("sync-deleted", _common(online=online, mode=None, **options))


@app.command()
def demo(
    out: Path = typer.Option(
        Path("demo-archive"), "--out", "-o", metavar="DIR", help="Where to write the archive."
    ),
    threads: int = bounded(
        "demo_threads", 300, "--threads", metavar="N", help="Size of the simulated account."
    ),
    seed: int = bounded("seed", 7, "--seed", metavar="N", help="Seed of the simulated account."),
    concurrency: int = bounded(
        "concurrency", 16, "--concurrency", "-c", metavar="N", help="Threads fetched at once."
    ),
    lang: str | None = LANG,
    log_format: str | None = LOG_FORMAT,
) -> None:
    """Start the simulator on a free loopback port and archive its account.

    Needs no account and no network: everything stays on 127.0.0.1.

    \b
    Examples:
      pplx-export demo
      pplx-export demo -o /tmp/demo --threads 50 --lang zh
    """
    from pplx_archiver.cli._run import run_demo

    run_demo(
        out=out,
        threads=threads,
        seed=seed,
        concurrency=concurrency,
        lang=lang,
        log_format=log_format,
    )
