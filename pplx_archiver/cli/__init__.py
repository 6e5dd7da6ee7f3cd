"""The `pplx-export` command line: a thin typer app; options → Settings → anyio.run → exit code.

Each command group lives in its own module under ``cli/`` and registers itself on :data:`app`
through :func:`_register`; only this package maps errors to exit codes.
"""

from __future__ import annotations

import sys

import typer

from pplx_archiver import __version__
from pplx_archiver.cli._app import app

# Command modules under cli/, in the order their commands appear in --help.
COMMAND_MODULES: tuple[str, ...] = (
    "archive",
    "archive_care",
    "doctor",
    "unattended",
    "search",
    "site",
    "history",
    "changes",
    "schedule",
    "relations",
    "mcp",
    "vault",
    "usage",
    "assets",
    "auth",
    "sim",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pplx-export {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        callback=_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Archive a Perplexity account: every thread of every mode, complete and re-renderable.

    Start with `pplx-export demo` (archives a simulated account), then `pplx-export auth check`
    and `pplx-export batch` for your own account. Exit codes: 0 all archived, 1 some threads
    failed, 2 usage or config error, 3 authentication failure, 4 interrupted, 5 stopped by
    Cloudflare challenges, 6 archive busy (another command writes it), 7 host unreachable.
    """


def _register() -> None:
    """Import every command module so its commands attach to :data:`app`."""
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"pplx_archiver.cli.{name}")


def main() -> None:
    """Console-script entry point."""
    from pplx_archiver.shell.run.allocator import tune_allocator, tune_gc

    tune_allocator()  # before any worker thread: large buffers stay out of the heap arenas
    _register()
    tune_gc()  # the commands are imported: what exists now lives as long as the process
    app(prog_name="pplx-export")
    sys.exit(0)
