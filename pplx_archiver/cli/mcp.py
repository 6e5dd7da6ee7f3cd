"""``pplx-export mcp``: serve an archive to assistants over the Model Context Protocol.

Read-only: the index is opened read-only, no lock is taken, nothing is written (no log file
either: the events go to stderr), the network is never used. Exit codes: 0 the client closed
the connection; 2 usage or config error (no archive at --out, the ``mcp`` extra missing).
"""

from __future__ import annotations

from pathlib import Path

import typer

from pplx_archiver import logconfig
from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import OUT, bounded, require_archive
from pplx_archiver.cli._run import fail
from pplx_archiver.errors import EXIT_OK, ConfigError, PplxError
from pplx_archiver.settings import load_settings

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8765


@app.command("mcp")
def mcp(
    out: Path | None = OUT,
    http: bool = typer.Option(
        False, "--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio."
    ),
    port: int = bounded(
        "mcp_port", DEFAULT_PORT, "--port", metavar="PORT", help="Port of --http on 127.0.0.1."
    ),
) -> None:
    """Serve the archive to an assistant (MCP): search, threads, turns, reports, sources.

    A read-only Model Context Protocol server over stdio (what MCP clients start), or over
    streamable HTTP on 127.0.0.1 with --http (http://127.0.0.1:PORT/mcp). Tools: search,
    list_threads, list_spaces, get_thread, get_turn, get_report, sources_for, related,
    alerts; resources pplx://thread/<uuid>, pplx://thread/<uuid>/turn/<n>,
    pplx://report/<uuid>. It takes no lock and writes nothing, so it runs beside a sync and
    on a read-only archive, and it never uses the network. Needs the `mcp` extra
    (pip install 'pplx-archiver[mcp]').

    \b
    Examples:
      pplx-export mcp --out ~/pplx-archive
      pplx-export mcp --out ~/pplx-archive --http --port 8765
    """
    try:
        settings = load_settings({"out_dir": out})
        require_archive(settings)
        try:
            from pplx_archiver.shell.care.mcp_server import build_server
        except ImportError as exc:
            raise ConfigError(
                f"mcp: the MCP SDK is not installed ({exc}); pip install 'pplx-archiver[mcp]'"
            ) from None
        # stdout carries the protocol: every event of this process goes to stderr, as JSON.
        logconfig.configure(log_format="json", console_level="warning")
        server, reader = build_server(settings.out_dir)
    except (PplxError, OSError) as exc:
        raise typer.Exit(fail(exc)) from None
    try:
        if http:
            server.run("streamable-http", host=LOOPBACK, port=port)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        reader.close()
    raise typer.Exit(EXIT_OK)
