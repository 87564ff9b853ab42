"""A small threaded HTTP server for the Bolt app: POST /slack/events, GET /healthz, /readyz, /metrics.

Standard library only, so HTTP mode needs no web framework; Bolt verifies signatures and acks.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from slack_bolt import App, BoltRequest

from bot.slack.metrics import Metrics
from bot.slack.workers import WorkerPool

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1 << 20  # Slack payloads are small; refuse anything huge before reading it


def make_http_server(
    app: App, metrics: Metrics, host: str, port: int, *, pool: WorkerPool | None = None
) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "traindoc"

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            if path == "/healthz":  # alive: the work pool makes progress
                if pool is not None and pool.stuck():
                    self._send(503, b"stuck: queued work has not progressed\n", "text/plain; charset=utf-8")
                else:
                    self._send(200, b"ok\n", "text/plain; charset=utf-8")
            elif path == "/readyz":  # ready for more: the work queue has room
                if pool is not None and pool.full():
                    self._send(503, b"busy: the work queue is full\n", "text/plain; charset=utf-8")
                else:
                    self._send(200, b"ready\n", "text/plain; charset=utf-8")
            elif path == "/metrics":
                self._send(200, metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
            else:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if url.path != EVENTS_PATH:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            if length > MAX_BODY_BYTES:
                self._send(413, b"payload too large\n", "text/plain; charset=utf-8")
                return
            raw = self.rfile.read(length).decode("utf-8")
            headers: dict[str, list[str]] = {}
            for key, value in self.headers.items():
                headers.setdefault(key.lower(), []).append(value)
            response = app.dispatch(BoltRequest(body=raw, query=url.query, headers=headers))
            body = (response.body or "").encode("utf-8")
            self.send_response(response.status)
            for key, values in response.headers.items():
                if key.lower() == "content-length":
                    continue
                for value in values:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
