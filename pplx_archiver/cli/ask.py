"""The `pplx-ask` command line: ask Perplexity, watch the answer arrive, find it archived.

Same settings, credentials, logs and error tree as `pplx-export`; its own exit codes 10–15
for the problems an ask stream reports in-band (see :mod:`pplx_archiver.errors`).
"""

from __future__ import annotations

import contextlib
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import orjson
import typer

from pplx_archiver import __version__
from pplx_archiver.cli._app import OneLineGroup
from pplx_archiver.cli._options import (
    BASE_URL,
    COOKIES,
    COOKIES_FROM,
    IMPERSONATE,
    LOG_FORMAT,
    PROXY,
    TOKEN,
    bounded,
)
from pplx_archiver.cli._run import fail, run_logging
from pplx_archiver.core.ask.asking import RECENCY, SOURCES, table_lines
from pplx_archiver.core.ask.stream import AskResult
from pplx_archiver.core.thread import mode_table
from pplx_archiver.errors import EXIT_INTERRUPTED, ConfigError, PplxError
from pplx_archiver.settings import Settings, load_settings

ask_app = typer.Typer(
    name="pplx-ask",
    cls=OneLineGroup,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

OUT = typer.Option(
    None, "--out", "-o", metavar="DIR", help="Archive root folder [default: ./archive]."
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Text for a terminal: control characters (escape sequences) removed, newlines kept."""
    return _CONTROL.sub("", text)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"pplx-ask {__version__}")
        raise typer.Exit(0)


@ask_app.callback()
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
    """Ask Perplexity from the command line; the answer is archived at once.

    Exit codes: 0 answered (and archived), 2 usage or config error, 3 authentication failure,
    4 interrupted (nothing archived), 5 stopped by Cloudflare, 10 rate limit or quota,
    11 the ask failed in the stream, 12 deep research asked clarifying questions, 13 the
    service answered 200 without starting a thread (expired session), 14 timeout,
    15 the stream ended before the answer completed.
    """


def _settings(**kw: Any) -> Settings:
    return load_settings(
        {
            "out_dir": kw.get("out"),
            "log_format": kw.get("log_format"),
            "base_url": kw.get("base_url"),
            "cookies_file": kw.get("cookies"),
            "session_token": kw.get("session_token"),
            "cookies_from": kw.get("cookies_from"),
            "impersonate": kw.get("impersonate"),
            "proxy": kw.get("proxy"),
        }
    )


def _emit(record: dict[str, Any], out: IO[str]) -> None:
    out.write(orjson.dumps(record).decode() + "\n")
    out.flush()


class PlainView:
    """Writes the answer as it grows (plain text), then the sources."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.shown = ""

    def update(self, answer: str) -> None:
        if answer.startswith(self.shown) and len(answer) > len(self.shown):
            self.out.write(clean(answer[len(self.shown) :]))
            self.out.flush()
            self.shown = answer

    def finish(self, result: AskResult) -> None:
        if result.answer != self.shown:
            if not self.shown:
                self.out.write(clean(result.answer))
            else:  # the closing text differs (e.g. renumbered citations): say so once
                sys.stderr.write(
                    "note: the service revised the streamed answer; the archived copy is final\n"
                )
        self.out.write("\n")
        _write_sources(self.out, result)


class TerminalView:
    """Renders the growing answer as Markdown in place (rich), then the sources."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console()
        self.live = Live(console=self.console, refresh_per_second=8, vertical_overflow="visible")
        self.live.start()

    def _markdown(self, text: str) -> Any:
        from rich.markdown import Markdown

        return Markdown(clean(text))

    def update(self, answer: str) -> None:
        self.live.update(self._markdown(answer))

    def finish(self, result: AskResult) -> None:
        self.live.update(self._markdown(result.answer))
        self.stop()
        _write_sources(sys.stdout, result)

    def stop(self) -> None:
        if self.live.is_started:
            self.live.stop()


def _write_sources(out: IO[str], result: AskResult) -> None:
    if result.sources:
        out.write("\nSources:\n")
        for n, source in enumerate(result.sources, start=1):
            out.write(f"  [{n}] {clean(source.title)} — {clean(source.url)}\n")
    out.flush()


def _prompt(prompt: str) -> str:
    text = sys.stdin.read() if prompt == "-" else prompt
    text = text.strip()
    if not text:
        where = "stdin" if prompt == "-" else "PROMPT"
        raise ConfigError(f"the prompt is empty ({where})")
    return text


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(v.strip() for raw in values or () for v in raw.split(",") if v.strip())


@ask_app.command()
def ask(
    prompt: str = typer.Argument(..., help="The question; '-' reads it from stdin."),
    mode: str | None = typer.Option(
        None,
        "--mode",
        "-m",
        metavar="MODE",
        help=f"{', '.join(mode_table.VIEWS.ask_modes)} "
        "[default: search; a follow-up keeps the thread's mode].",
    ),
    model: list[str] | None = typer.Option(
        None, "--model", help="Model id (see `pplx-ask models`); council: give it 2-3 times."
    ),
    space: str | None = typer.Option(
        None, "--space", metavar="SLUG", help="Move the thread into this space."
    ),
    follow_up: str | None = typer.Option(
        None, "--follow-up", help="Continue this thread (uuid, slug or URL) instead of a new one."
    ),
    sources: list[str] | None = typer.Option(
        None, "--sources", help=f"Source kinds, comma list or repeated: {', '.join(SOURCES)}."
    ),
    recency: str | None = typer.Option(
        None, "--recency", help=f"Only recent sources: {', '.join(RECENCY)}."
    ),
    incognito: bool = typer.Option(False, "--incognito", help="Ask in an incognito thread."),
    mark_read_: bool = typer.Option(False, "--mark-read", help="Mark the thread read afterwards."),
    no_export: bool = typer.Option(False, "--no-export", help="Do not archive the thread."),
    timeout: float = bounded(
        "ask_timeout",
        900.0,
        "--timeout",
        metavar="SECONDS",
        help="Give up after this many seconds.",
    ),
    json_only: bool = typer.Option(
        False, "--json", help="Print only the JSON line (with the answer and sources in it)."
    ),
    out: Path | None = OUT,
    log_format: str | None = LOG_FORMAT,
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
    impersonate: str | None = IMPERSONATE,
    proxy: str | None = PROXY,
) -> None:
    """Ask a question, stream the answer, archive the thread, print one JSON line.

    The answer streams to stdout (rendered Markdown in a terminal, plain text in a pipe) with
    its sources; the last stdout line is JSON: thread_uuid, thread_url, mode, model, folder
    (the archive folder), flags and step_errors. Moving into a space and marking read are
    best effort: a failure there is a warning in step_errors, not an error.

    \b
    Examples:
      pplx-ask ask "What is the capital of Australia?" -o archive
      echo "Rust or Go?" | pplx-ask ask - -m council --model gpt55_thinking --model gemini31pro_high
    """
    from pplx_archiver.shell.ask.ask import AskOptions, NoView, run_ask

    bad = [s for s in _split(sources) if s not in SOURCES]
    if bad:
        raise typer.BadParameter(f"unknown source {bad[0]!r}; choose from {', '.join(SOURCES)}")
    if recency is not None and recency.lower() not in RECENCY:
        raise typer.BadParameter(f"--recency {recency!r}: choose from {', '.join(RECENCY)}")
    ask_modes = mode_table.VIEWS.ask_modes
    if mode is not None and mode not in ask_modes:
        raise typer.BadParameter(f"--mode {mode!r}: choose from {', '.join(ask_modes)}")
    view: Any = None
    try:
        settings = _settings(**locals())
        opts = AskOptions(
            prompt=_prompt(prompt),
            mode=mode,
            models=tuple(model or ()),
            space=space,
            follow_up=follow_up,
            sources=_split(sources) or ("web",),
            recency=recency.lower() if recency else None,
            incognito=incognito,
            mark_read=mark_read_,
            export=not no_export,
            timeout=timeout,
            with_answer=json_only,
        )
        if json_only:
            view = NoView()
        elif sys.stdout.isatty():
            view = TerminalView()
        else:
            view = PlainView(sys.stdout)
        with run_logging(settings, "ask"), _sigterm_interrupts():
            record = anyio.run(lambda: run_ask(settings, opts, view=view))
    except KeyboardInterrupt:
        _stop(view)
        sys.stderr.write("error: interrupted; the answer was not archived\n")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except PplxError as exc:
        _stop(view)
        raise typer.Exit(fail(exc)) from None
    _emit(record, sys.stdout)


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM stops an ask as Ctrl-C does (exit 4, nothing archived), not by the signal."""

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (an in-process caller): left as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop(view: Any) -> None:
    if isinstance(view, TerminalView):
        view.stop()


@ask_app.command()
def models(
    refresh: bool = typer.Option(False, "--refresh", help="Fetch the live config now."),
    out: Path | None = OUT,
    log_format: str | None = LOG_FORMAT,
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
    impersonate: str | None = IMPERSONATE,
    proxy: str | None = PROXY,
) -> None:
    """Print the models each ask mode accepts (* = default) and how old the table is.

    The table comes from the live models config and is cached in the archive
    (index/config/models_config.json); offline, the cache or a pinned table is shown.

    \b
    Examples:
      pplx-ask models -o archive
      pplx-ask models --refresh -o archive
    """
    from pplx_archiver.shell.ask.ask import run_models

    try:
        settings = _settings(**locals())
        with run_logging(settings, "models"):
            loaded = anyio.run(lambda: run_models(settings, refresh=refresh))
    except PplxError as exc:
        raise typer.Exit(fail(exc)) from None
    for line in table_lines(loaded.table, loaded.describe()):
        typer.echo(line)


@ask_app.command("mark-read")
def mark_read(
    thread: str = typer.Argument(..., help="Thread uuid, slug or URL."),
    out: Path | None = OUT,
    log_format: str | None = LOG_FORMAT,
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
    impersonate: str | None = IMPERSONATE,
    proxy: str | None = PROXY,
) -> None:
    """Mark a thread read on the service; prints one JSON line.

    \b
    Examples:
      pplx-ask mark-read 0e2853b4-0848-45c8-acd0-376969f75470
    """
    from pplx_archiver.shell.ask.ask import run_mark_read

    try:
        settings = _settings(**locals())
        with run_logging(settings, "mark-read"):
            record = anyio.run(lambda: run_mark_read(settings, thread))
    except PplxError as exc:
        raise typer.Exit(fail(exc)) from None
    _emit(record, sys.stdout)


@ask_app.command("space-create")
def space_create(
    title: str = typer.Argument(..., help="Title of the new space."),
    description: str = typer.Option("", "--description", help="Its description."),
    out: Path | None = OUT,
    log_format: str | None = LOG_FORMAT,
    base_url: str | None = BASE_URL,
    cookies: Path | None = COOKIES,
    session_token: str | None = TOKEN,
    cookies_from: str | None = COOKIES_FROM,
    impersonate: str | None = IMPERSONATE,
    proxy: str | None = PROXY,
) -> None:
    """Create a space; prints one JSON line with its uuid and slug (for `ask --space`).

    \b
    Examples:
      pplx-ask space-create "Reading list"
    """
    from pplx_archiver.shell.ask.ask import run_space_create

    if not title.strip():
        raise typer.BadParameter("TITLE is empty")
    try:
        settings = _settings(**locals())
        with run_logging(settings, "space-create"):
            record = anyio.run(
                lambda: run_space_create(settings, title.strip(), description=description)
            )
    except PplxError as exc:
        raise typer.Exit(fail(exc)) from None
    _emit(record, sys.stdout)


def main() -> None:
    """Console-script entry point of `pplx-ask`."""
    ask_app(prog_name="pplx-ask")
    sys.exit(0)
