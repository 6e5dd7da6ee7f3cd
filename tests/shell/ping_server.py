"""A loopback HTTP server recording health-check pings (method, path, body) for tests."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclasses.dataclass
class Ping:
    """One request the server received."""

    method: str
    path: str
    body: bytes


@dataclasses.dataclass
class PingServer:
    """The running server: its base URL and the pings so far."""

    url: str
    pings: list[Ping]


@contextmanager
def ping_server(status: int = 200) -> Iterator[PingServer]:
    """Serve on 127.0.0.1 (a free port) answering every request with ``status``."""
    pings: list[Ping] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            pings.append(Ping("POST", self.path, self.rfile.read(length)))
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"OK")

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield PingServer(f"http://127.0.0.1:{server.server_address[1]}/ping/secret-key", pings)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
