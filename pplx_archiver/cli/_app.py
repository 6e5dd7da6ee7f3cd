"""The typer application object every command module attaches to, and how it reports a usage
error: on one line, ``error: …``, exit 2, naming the option and, for a number, its range."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from typer._click import echo
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperGroup

from pplx_archiver.limits import Bound


class OneLineUsageError(ClickException):
    """A usage error shown as one ``error:`` line (no usage block, no hint lines)."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        echo(f"error: {self.message}", file=file, err=True)


def _range_of(param: Any) -> str | None:
    info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    if low is None or high is None:
        return None
    integer = getattr(param.type_descriptor, "annotation", None) is int
    return Bound(low, high, integer=integer).text()


def usage_line(exc: UsageError) -> str:
    """One line for a usage error; a bounded number's error says the allowed range."""
    param: Any = getattr(exc, "param", None)
    allowed = _range_of(param) if param is not None else None
    if allowed is not None:
        name = param.opts[0] if param.opts else param.name
        message = f"{name} must be {allowed}"
    else:
        message = " ".join(exc.format_message().split())
    if exc.ctx is not None:
        message += f" (see {exc.ctx.command_path} --help)"
    return message


@contextmanager
def _one_line() -> Iterator[None]:
    try:
        yield
    except NoArgsIsHelpError:
        raise
    except UsageError as exc:
        raise OneLineUsageError(usage_line(exc)) from None


class OneLineGroup(TyperGroup):
    """The root group: usage errors of any command below it become one line."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        with _one_line():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with _one_line():
            return super().invoke(ctx)


app = typer.Typer(
    name="pplx-export",
    cls=OneLineGroup,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
