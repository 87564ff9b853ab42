"""A loopback HTTP server that records every request it gets: the host a leaked token would reach.

Tests point file URLs (directly, through a redirect, as an external file) at it and assert it never
saw an Authorization header (and, where traindoc must not connect at all, no request).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.loopback import LoopbackServer


class AttackerServer(LoopbackServer):
    thread_name = "fake-attacker"

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, str]] = []  # lower-cased headers of every request
        self._lock = threading.Lock()

    def _make_server(self) -> ThreadingHTTPServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                with owner._lock:
                    owner.requests.append({k.lower(): v for k, v in self.headers.items()})
                body = b"RuntimeError: CUDA error: out of memory\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        return server

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def saw_token(self) -> bool:
        with self._lock:
            return any("authorization" in h for h in self.requests)
