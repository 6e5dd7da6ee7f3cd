"""Run the simulator on a loopback socket: in a background thread or in another process.

``with serve_in_thread(SimConfig()) as sim:`` gives ``sim.base_url``, ``sim.cookies``,
``sim.account_id`` and ``sim.session_token``; the server stops when the block ends.
``serve_subprocess`` does the same in a child process (benchmarks: the server then has its
own interpreter and GIL). Both bind 127.0.0.1 on a free port only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn

from pplx_archiver.sim.config import SimConfig
from pplx_archiver.sim.sessions import Sessions
from pplx_archiver.sim.state import AccountState

HOST = "127.0.0.1"


@dataclasses.dataclass(frozen=True, slots=True)
class RunningSim:
    """Where a running simulator listens and how to log in to it."""

    base_url: str
    cookies: dict[str, str]
    account_id: str
    session_token: str
    config: SimConfig
    # One (cookies, account id, session token, user name) per account (``config.accounts``).
    logins: tuple[AccountLogin, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class AccountLogin:
    """How to log in to one simulated account."""

    cookies: dict[str, str]
    account_id: str
    session_token: str
    username: str


def logins_for(config: SimConfig) -> tuple[AccountLogin, ...]:
    """The login of every account ``config`` serves (account 0 first)."""
    from pplx_archiver.sim.multi import account_configs

    out = []
    for account in account_configs(config):
        cookies, account_id, token = login_for(account)
        out.append(AccountLogin(cookies, account_id, token, account.username))
    return tuple(out)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _bound_socket() -> socket.socket:
    """A socket bound to a free loopback port, kept open until the server listens on it (a
    port that is only looked up can be taken by any other socket before the server binds)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, 0))
    except OSError:
        sock.close()
        raise
    return sock


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (0 = a free port) and already listening, for
    ``sim serve``: a port in use is an OSError here, before anything is printed, and a client
    that connects as soon as the port is printed waits in the backlog until uvicorn serves."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def login_for(config: SimConfig) -> tuple[dict[str, str], str, str]:
    """Cookies, account id and session token a client needs for ``config``."""
    account_id = AccountState(dataclasses.replace(config, threads=0)).account_id
    sess = Sessions(config, account_id)
    return sess.cookies(), account_id, sess.current_token()


def _running(config: SimConfig, port: int) -> RunningSim:
    cookies, account_id, token = login_for(config)
    base_url = f"http://{HOST}:{port}"
    return RunningSim(base_url, cookies, account_id, token, config, logins_for(config))


def _uvicorn_config(
    config: SimConfig, port: int, wrap: Callable[[Any], Any] | None = None
) -> uvicorn.Config:
    from pplx_archiver.sim.multi import create_multi_app

    app = create_multi_app(config)
    return uvicorn.Config(
        wrap(app) if wrap is not None else app,
        host=HOST,
        port=port,
        log_level="critical",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=30,
    )


@contextlib.contextmanager
def serve_in_thread(
    config: SimConfig | None = None,
    timeout: float = 60.0,
    *,
    wrap: Callable[[Any], Any] | None = None,
) -> Iterator[RunningSim]:
    """Serve the simulator with uvicorn in a daemon thread for the ``with`` block.

    ``timeout`` bounds the start-up and the shutdown (generous: a busy machine is slow).
    ``wrap`` (tests) puts an ASGI middleware in front of the simulator's app, e.g. one that
    makes a chosen request trickle or answer a huge body."""
    config = config or SimConfig()
    sock = _bound_socket()
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(_uvicorn_config(config, port, wrap))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="pplx-sim", daemon=True
    )
    try:
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"simulator did not start on {HOST}:{port}")
            time.sleep(0.01)
        yield _running(config, port)
    finally:
        server.should_exit = True
        if thread.is_alive():
            thread.join(timeout)
        sock.close()


def _child(config: SimConfig, port: int) -> None:
    uvicorn.Server(_uvicorn_config(config, port)).run()


def _wait_port(port: int, timeout: float, proc: Any) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.is_alive():
            raise RuntimeError("simulator process exited during start-up")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            if sock.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError(f"simulator did not start on {HOST}:{port}")


@contextlib.contextmanager
def serve_subprocess(
    config: SimConfig | None = None, timeout: float = 20.0
) -> Iterator[RunningSim]:
    """Serve the simulator with uvicorn in a child process for the ``with`` block."""
    config = config or SimConfig()
    port = _free_port()
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=_child, args=(config, port), name="pplx-sim", daemon=True)
    proc.start()
    try:
        _wait_port(port, timeout, proc)
        yield _running(config, port)
    finally:
        proc.terminate()
        proc.join(timeout)
        if proc.is_alive():
            proc.kill()
            proc.join()
