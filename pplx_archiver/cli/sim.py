"""The ``pplx-export sim`` commands: serve the simulated Perplexity, print its truth manifest."""

from __future__ import annotations

import socket
import sys
from typing import Any

import orjson
import typer

from pplx_archiver.cli._app import app
from pplx_archiver.cli._options import bounded
from pplx_archiver.sim.config import DEFAULT_SEED, DEFAULT_THREADS, FAULT_KINDS, SimConfig

sim_app = typer.Typer(
    name="sim",
    help="Run the simulated Perplexity (for the demo, tests and benchmarks).",
    no_args_is_help=True,
)
app.add_typer(sim_app, name="sim")


def _windows(specs: list[str]) -> tuple[tuple[int, int], ...]:
    out = []
    for spec in specs:
        start, _, count = spec.partition(":")
        try:
            out.append((int(start), int(count or "10")))
        except ValueError:
            raise typer.BadParameter(
                f"--challenge {spec!r}: expected FIRST_REQUEST:COUNT, e.g. 100:20"
            ) from None
    return tuple(out)


@sim_app.command("serve")
def serve(
    host: str = typer.Option(
        "127.0.0.1", metavar="ADDRESS", help="Address to bind (keep it on loopback)."
    ),
    port: int = bounded("sim_port", 8765, metavar="N", help="Port to bind (0 = any free port)."),
    threads: int = bounded(
        "sim_threads", DEFAULT_THREADS, metavar="N", help="Number of threads in the account."
    ),
    seed: int = bounded("seed", DEFAULT_SEED, metavar="N", help="Seed of the synthetic account."),
    latency_ms: float = bounded("sim_ms", 0.0, metavar="MS", help="Added latency per request."),
    jitter_ms: float = bounded(
        "sim_ms", 0.0, metavar="MS", help="Uniform random extra latency per request."
    ),
    rate: float = bounded(
        "sim_rate", 0.0, metavar="RATE", help="Token-bucket rate in requests/s (0 = unlimited)."
    ),
    burst: int = bounded("burst", 10, metavar="N", help="Token-bucket burst size."),
    retry_after: bool = typer.Option(
        True, "--retry-after/--no-retry-after", help="Send Retry-After with every 429."
    ),
    fault_rate: float = bounded(
        "sim_share", 0.0, metavar="SHARE", help="Share of requests that fail (0..1)."
    ),
    fault_kinds: str = typer.Option(
        ",".join(FAULT_KINDS),
        metavar="KINDS",
        help=f"Comma list of fault kinds, from {', '.join(FAULT_KINDS)}.",
    ),
    fault_seed: int = bounded("seed", 1, metavar="N", help="Seed of the fault draws."),
    challenge: list[str] = typer.Option(
        [],
        metavar="FIRST:COUNT",
        help="Answer COUNT requests from request number FIRST with the Cloudflare page "
        "(repeatable).",
    ),
    challenge_after_429s: int = bounded(
        "sim_count",
        0,
        metavar="N",
        help="Open a challenge window after this many 429s within 10 s (0 = never).",
    ),
    era: str = typer.Option(
        "b",
        metavar="[b|c]",
        help="Session era: b (next-auth cookie) or c (per-account cookies and header).",
    ),
    logged_out: bool = typer.Option(
        False, "--logged-out", help="Treat every cookie as invalid (a logged-out session)."
    ),
    rotate_session_every: int = bounded(
        "sim_count", 0, metavar="N", help="Rotate the session cookie every N requests (0 = never)."
    ),
    transient_404: int = bounded(
        "sim_count", 0, metavar="N", help="404s before a newly added thread is served."
    ),
    deleted_rate: float = bounded(
        "sim_share", 0.0, metavar="SHARE", help="Share of threads answering ENTRY_DELETED."
    ),
    expired_rate: float = bounded(
        "sim_share", 0.0, metavar="SHARE", help="Share of threads answering ENTRY_EXPIRED."
    ),
    vanish_rate: float = bounded(
        "sim_share",
        0.0,
        metavar="SHARE",
        help="Share of threads gone from the listing and answering 404.",
    ),
    asset_url_ttl: int = bounded(
        "sim_ttl", 900, metavar="SECONDS", help="Lifetime of signed asset URLs in seconds."
    ),
    graphql_empty_end_cursor: bool = typer.Option(
        False,
        "--graphql-empty-end-cursor",
        help="Last GraphQL page says hasNextPage=true with an empty endCursor.",
    ),
    ask_generation: str = typer.Option(
        "diff",
        metavar="[diff|blocks|text]",
        help="Ask stream payloads: diff, blocks or text (also POST /__sim/ask).",
    ),
    ask_delay_ms: float = bounded(
        "sim_ms", 0.0, metavar="MS", help="Pause between the frames of an ask stream."
    ),
    accounts: int = bounded(
        "sim_accounts",
        1,
        metavar="N",
        help="Serve N distinct accounts, told apart by their cookies.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the URL and accounts as one JSON object line."
    ),
) -> None:
    """Serve the simulator until Ctrl-C; prints the base URL and the cookie to use.

    The lines are printed once the port listens, with the port it got (--port 0 takes any
    free one); a port in use is one error line (exit 2) and nothing else is printed. With
    --json they are one JSON object: {"base_url", "accounts": [{username, account_id,
    cookie}]}.

    \b
    Examples:
      pplx-export sim serve --threads 2000 --seed 7
      pplx-export sim serve --era c --rate 5 --fault-rate 0.02 --challenge 300:20
      pplx-export sim serve --accounts 3 --era c
    """
    from pplx_archiver.cli._run import require_simulator

    require_simulator()
    import uvicorn

    from pplx_archiver.sim.multi import create_multi_app
    from pplx_archiver.sim.runner import logins_for

    try:
        config = SimConfig(
            threads=threads, seed=seed, era=era, logged_in=not logged_out,
            rotate_session_every=rotate_session_every, deleted_rate=deleted_rate,
            expired_rate=expired_rate, vanish_rate=vanish_rate, latency_ms=latency_ms,
            jitter_ms=jitter_ms, rate=rate, burst=burst, retry_after=retry_after,
            fault_rate=fault_rate,
            fault_kinds=tuple(k for k in fault_kinds.split(",") if k), fault_seed=fault_seed,
            challenge_windows=_windows(challenge), challenge_after_429s=challenge_after_429s,
            transient_404=transient_404, asset_url_ttl_s=asset_url_ttl,
            graphql_empty_end_cursor=graphql_empty_end_cursor, accounts=accounts,
        )  # fmt: skip
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    from pplx_archiver.sim.ask import GENERATIONS

    if ask_generation not in GENERATIONS:
        raise typer.BadParameter(f"--ask-generation: choose from {', '.join(GENERATIONS)}")
    sock = _listen(host, port)
    try:
        app = create_multi_app(config)
        for sim in getattr(app, "sims", [app.sim]):
            sim.ask.control.generation = ask_generation
            sim.ask.control.delay_s = max(0.0, ask_delay_ms) / 1000
        port = int(sock.getsockname()[1])
        _announce(f"http://{_url_host(host)}:{port}", logins_for(config), as_json)
        sys.stdout.flush()
        server = uvicorn.Server(
            uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
        )
        server.run(sockets=[sock])
    finally:
        sock.close()


def _announce(base_url: str, logins: Any, as_json: bool) -> None:
    """What a client needs: the URL, and each simulated account's id and (simulated) cookie;
    as lines, or as one JSON object (``--json``)."""
    accounts = [
        {"username": login.username, "account_id": login.account_id,
         "cookie": "; ".join(f"{n}={v}" for n, v in login.cookies.items())}
        for login in logins
    ]  # fmt: skip
    if as_json:
        typer.echo(orjson.dumps({"base_url": base_url, "accounts": accounts}).decode("utf-8"))
        return
    typer.echo(f"base_url: {base_url}")
    for k, account in enumerate(accounts):
        if k:
            typer.echo(f"account {k + 1}: {account['username']}")
        typer.echo(f"account_id: {account['account_id']}")
        typer.echo(f"cookie: {account['cookie']}")


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket of ``sim serve``; a port in use (or an address that cannot be
    bound) is one usage error, exit 2, before the URL or the cookie is printed."""
    from pplx_archiver.sim.runner import listening_socket

    try:
        return listening_socket(host, port)
    except OSError as exc:
        why = exc.strerror or str(exc)
        message = f"cannot listen on {host}:{port}: {why}"
        raise typer.BadParameter(message, param_hint="'--port'") from None


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@sim_app.command("truth")
def truth(
    threads: int = bounded(
        "sim_threads", DEFAULT_THREADS, metavar="N", help="Number of threads in the account."
    ),
    seed: int = bounded("seed", DEFAULT_SEED, metavar="N", help="Seed of the synthetic account."),
) -> None:
    """Print the truth manifest of the simulated account as JSON.

    \b
    Examples:
      pplx-export sim truth > truth.json
      pplx-export sim truth --threads 2000 --seed 7 > truth.json
    """
    from pplx_archiver.sim.state import AccountState

    manifest = AccountState(SimConfig(threads=threads, seed=seed)).truth()
    sys.stdout.buffer.write(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
