"""``cli/_options.shared_options``: options declared once in a table, given to commands."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pplx_archiver.cli._options import OptionTable, shared_options

TABLE: OptionTable = {
    "alpha": (int | None, typer.Option(None, "--alpha", metavar="N", help="Alpha.")),
    "beta": (bool, typer.Option(False, "--beta", help="Beta.")),
}


def _app(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @shared_options(TABLE, ("beta", "own", "alpha"))
    def cmd(own: str = typer.Option("x", "--own", help="Own."), **options: Any) -> None:
        seen.update(options, own=own)

    @app.command()
    def other() -> None:
        """A second command, so that ``cmd`` is a sub-command."""

    return app


def test_a_command_takes_the_named_options_as_keywords_in_their_order() -> None:
    """The table's options parse and typecheck as declared; ``--help`` lists them in the
    order named, the command's own among them."""
    seen: dict[str, Any] = {}
    app = _app(seen)
    result = CliRunner().invoke(app, ["cmd", "--alpha", "3", "--beta"])
    assert result.exit_code == 0, result.output
    assert seen == {"alpha": 3, "beta": True, "own": "x"}
    bad = CliRunner().invoke(app, ["cmd", "--alpha", "three"])
    assert bad.exit_code == 2
    shown = CliRunner().invoke(app, ["cmd", "--help"], terminal_width=100).output
    assert shown.index("--beta") < shown.index("--own") < shown.index("--alpha")


def test_a_parameter_left_out_of_the_names_is_refused() -> None:
    """A command's own parameter missing from the names would vanish from --help: refused."""
    with pytest.raises(TypeError, match="'own'"):

        @shared_options(TABLE, ("alpha",))
        def cmd(own: str = "x", **options: Any) -> None:
            pass
