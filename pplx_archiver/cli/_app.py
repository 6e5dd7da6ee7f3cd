"""The typer application object every command module attaches to."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="pplx-export",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
