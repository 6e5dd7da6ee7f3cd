"""``pplx-export mcp``: a read-only Model Context Protocol server over an archive.

Built on the official SDK's ``MCPServer`` (``mcp.server.mcpserver``): the SDK speaks the
protocol over stdio (or streamable HTTP on 127.0.0.1), derives each tool's JSON schema from its
signature and its description from its docstring. The tools call :class:`Reader`, which opens
the index read-only and reads thread folders; a bad argument comes back as a tool error with
the reason (``is_error``), never as a crash of the server. No lock, no write, no network.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from pplx_archiver import __version__
from pplx_archiver.core.thread import mode_table
from pplx_archiver.errors import PplxError
from pplx_archiver.shell.care.mcp_reader import (
    DEFAULT_TEXT,
    MAX_SEARCH_OFFSET,
    MAX_TEXT,
    Reader,
    ToolInputError,
)

INSTRUCTIONS = (
    "A person's archived Perplexity history (threads of questions and answers, deep-research "
    "reports, sources). Find with `search` (literal text, any language) or `list_threads`, "
    "then read with `get_thread` (outline first, full=true for the text), `get_turn`, "
    "`get_report`, `sources_for`, `related`. Every answer names the thread's folder in the "
    "archive and its URL on perplexity.ai; cite them. Read-only."
)

F = TypeVar("F", bound=Callable[..., Any])
Thread = Annotated[
    str,
    Field(description="The thread: its uuid, a unique uuid prefix (8+ characters), its folder "
          "as given in answers, or its perplexity.ai URL."),
]  # fmt: skip
Mode = Annotated[
    str | None,
    Field(description=f"Only this mode: {', '.join(mode_table.VIEWS.names)}."),
]
Since = Annotated[str | None, Field(description="Only on or after this date (2026-07-20).")]
Until = Annotated[str | None, Field(description="Only on or before this date (2026-07-31).")]
Offset = Annotated[int, Field(ge=0, description="Character (or item) offset to start from.")]
MaxChars = Annotated[
    int, Field(ge=1, le=MAX_TEXT, description="At most this many characters of text.")
]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def _guarded(fn: F) -> F:
    """Turn the reader's refusals and archive errors into tool errors with their message."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None
        except (PplxError, OSError) as exc:
            raise ToolError(f"the archive could not be read: {exc}") from None

    return call  # type: ignore[return-value]


def build_server(out: Path) -> tuple[MCPServer[Any], Reader]:
    """The server over the archive at ``out`` and the reader it uses (close it after)."""
    reader = Reader(out)
    server: MCPServer[Any] = MCPServer(
        "pplx-archive", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    _search_tools(server, reader)
    _thread_tools(server, reader)
    _graph_tools(server, reader)
    _resources(server, reader)
    return server, reader


def _search_tools(server: MCPServer[Any], reader: Reader) -> None:
    @server.tool(annotations=READ_ONLY)
    @_guarded
    def search(
        query: Annotated[str, Field(description="Text to find, matched literally.")],
        raw: Annotated[bool, Field(description="Read query as SQLite FTS5 syntax.")] = False,
        mode: Mode = None,
        space: Annotated[str | None, Field(description="Only this space (title or slug).")] = None,
        since: Since = None,
        until: Until = None,
        model: Annotated[str | None, Field(description="Only threads using this model.")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many hits.")] = 10,
        offset: Annotated[
            int, Field(ge=0, le=MAX_SEARCH_OFFSET, description="Hits to skip (paging).")
        ] = 0,
    ) -> dict[str, Any]:
        """Search the archive's questions, answers, titles and sources; best match first.

        Matching ignores case and is literal by default: `c++`, `v1.2` or a 2-character
        Chinese word are found as written (1-2 character queries list newest first). Each
        hit gives the thread uuid, turn number, an excerpt, the turn file, the thread folder
        and URL; read the text with get_turn. next_offset gives the next page.
        """
        return reader.search(
            query, raw=raw, mode=mode, space=space, since=since, until=until, model=model,
            limit=limit, offset=offset,
        )  # fmt: skip

    @server.tool(annotations=READ_ONLY)
    @_guarded
    def list_threads(
        mode: Mode = None,
        space: Annotated[str | None, Field(description="Only this space (title or slug).")] = None,
        since: Since = None,
        until: Until = None,
        model: Annotated[str | None, Field(description="Only threads using this model.")] = None,
        title: Annotated[str | None, Field(description="Only titles containing this.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Threads per page.")] = 20,
        offset: Annotated[int, Field(ge=0, description="Threads to skip (paging).")] = 0,
    ) -> dict[str, Any]:
        """List archived threads, newest first, filtered; next_offset gives the next page."""
        return reader.list_threads(
            mode=mode, space=space, since=since, until=until, model=model, title=title,
            limit=limit, offset=offset,
        )  # fmt: skip

    @server.tool(annotations=READ_ONLY)
    @_guarded
    def list_spaces() -> dict[str, Any]:
        """List the spaces (collections) of the archive with their thread counts."""
        return reader.list_spaces()


def _thread_tools(server: MCPServer[Any], reader: Reader) -> None:
    @server.tool(annotations=READ_ONLY)
    @_guarded
    def get_thread(
        thread: Thread,
        full: Annotated[bool, Field(description="Give the conversation text.")] = False,
        offset: Offset = 0,
        max_chars: MaxChars = DEFAULT_TEXT,
    ) -> dict[str, Any]:
        """A thread: title, mode, dates, models, folder, URL and the question of each turn.

        With full=true, the whole conversation (every query and answer) as Markdown, at most
        max_chars characters from offset; next_offset continues it.
        """
        return reader.get_thread(thread, full=full, offset=offset, max_chars=max_chars)

    @server.tool(annotations=READ_ONLY)
    @_guarded
    def get_turn(
        thread: Thread,
        turn: Annotated[int, Field(ge=1, description="Turn number, 1 for the first.")],
        offset: Offset = 0,
        max_chars: MaxChars = DEFAULT_TEXT,
    ) -> dict[str, Any]:
        """One turn as Markdown: the query, the work process, the full answer, its citations."""
        return reader.get_turn(thread, turn, offset=offset, max_chars=max_chars)

    @server.tool(annotations=READ_ONLY)
    @_guarded
    def get_report(
        thread: Thread, offset: Offset = 0, max_chars: MaxChars = DEFAULT_TEXT
    ) -> dict[str, Any]:
        """The deep-research report of a thread (Markdown) and its report files."""
        return reader.get_report(thread, offset=offset, max_chars=max_chars)

    @server.tool(annotations=READ_ONLY)
    @_guarded
    def sources_for(
        thread: Thread,
        domain: Annotated[str | None, Field(description="Only this domain.")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="Sources per page.")] = 50,
        offset: Annotated[int, Field(ge=0, description="Sources to skip (paging).")] = 0,
    ) -> dict[str, Any]:
        """The web sources a thread cited (name, URL, domain, snippet), unique by URL."""
        return reader.sources_for(thread, domain=domain, limit=limit, offset=offset)


def _graph_tools(server: MCPServer[Any], reader: Reader) -> None:
    @server.tool(annotations=READ_ONLY)
    @_guarded
    def related(
        thread: Thread,
        kind: Annotated[
            str | None,
            Field(
                description="Only edges of this kind: same_space, same_prompt, references, "
                "subagent_of."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Threads related to this one in the archive's relations graph, with the evidence:
        same space, same question asked again, one links the other, sub-agent of."""
        return reader.related(thread, kind=kind)

    @server.tool(annotations=READ_ONLY)
    @_guarded
    def alerts(
        kind: Annotated[str | None, Field(description="Only this kind of alert.")] = None,
        thread: Annotated[str | None, Field(description="Only alerts of this thread.")] = None,
        since: Since = None,
        limit: Annotated[int, Field(ge=1, le=500, description="At most this many.")] = 50,
    ) -> dict[str, Any]:
        """Facts the archiving runs recorded (a vanished thread, a changed model, a listing
        that shrank ...), newest first."""
        return reader.alerts(kind=kind, thread=thread, since=since, limit=limit)


def _text(fn: Callable[[], dict[str, Any]]) -> str:
    try:
        return str(fn()["text"])
    except ToolInputError as exc:
        raise ResourceError(str(exc)) from None
    except (PplxError, OSError) as exc:
        raise ResourceError(f"the archive could not be read: {exc}") from None


def _resources(server: MCPServer[Any], reader: Reader) -> None:
    @server.resource("pplx://thread/{uuid}", mime_type="text/markdown")
    def thread_text(uuid: str) -> str:
        """A thread's whole conversation (conversation.md), up to 200,000 characters."""
        return _text(lambda: reader.get_thread(uuid, full=True, max_chars=MAX_TEXT))

    @server.resource("pplx://thread/{uuid}/turn/{turn}", mime_type="text/markdown")
    def turn_text(uuid: str, turn: str) -> str:
        """One turn of a thread (turns/turn_NNNN.md)."""
        if not turn.isdigit():
            raise ResourceError(f"turn {turn!r}: expected a turn number")
        return _text(lambda: reader.get_turn(uuid, int(turn), max_chars=MAX_TEXT))

    @server.resource("pplx://report/{uuid}", mime_type="text/markdown")
    def report_text(uuid: str) -> str:
        """A deep-research thread's report (report.md)."""
        return _text(lambda: reader.get_report(uuid, max_chars=MAX_TEXT))
