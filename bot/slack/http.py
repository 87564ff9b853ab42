"""HTTP mode on a production server: Bolt's Starlette adapter served by uvicorn.

Two listeners: the events port (POST /slack/events, GET /healthz, GET /readyz), reachable by Slack,
and a separate metrics port (GET /metrics, Prometheus text with process metrics, and the same
probes) that stays inside the cluster. In Socket Mode the metrics port is the only listener: its
probes also say whether the socket to Slack is connected. Bolt's dispatch (signature check,
ack) runs on a worker thread, never on the event loop.
Bodies are capped before they are read; keep-alive and connection counts are bounded by uvicorn.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass

import uvicorn
from slack_bolt import App
from slack_bolt.adapter.starlette.handler import to_bolt_request, to_starlette_response
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from bot.slack.metrics import Metrics
from bot.slack.workers import WorkerPool

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1 << 20  # Slack payloads are small; refuse anything huge before reading it
KEEP_ALIVE_S = 5
MAX_CONNECTIONS = 256  # beyond it uvicorn answers 503 instead of holding a thread per socket
TEXT = "text/plain; charset=utf-8"


def events_app(
    app: App, *, pool: WorkerPool | None = None, max_body: int = MAX_BODY_BYTES
) -> Starlette:
    async def events(request: Request) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > max_body):
            return PlainTextResponse(
                "bad or too large Content-Length\n", status_code=413 if declared.isdigit() else 400
            )
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_body:
                return PlainTextResponse("payload too large\n", status_code=413)
        try:
            bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            return PlainTextResponse("body is not UTF-8\n", status_code=400)
        timestamp = request.headers.get("x-slack-request-timestamp", "")
        # Bolt would fail on int() with a 500; this is an unsigned request
        if not timestamp.isdigit():
            return PlainTextResponse("invalid or missing request timestamp\n", status_code=401)
        bolt_request = to_bolt_request(request, bytes(body))
        try:
            bolt_response = await run_in_threadpool(app.dispatch, bolt_request)
        except ValueError:  # e.g. a non-numeric X-Slack-Request-Timestamp
            return PlainTextResponse("invalid request\n", status_code=401)
        return to_starlette_response(bolt_response)

    return Starlette(routes=[Route(EVENTS_PATH, events, methods=["POST"]), *probe_routes(pool)])


def probe_routes(
    pool: WorkerPool | None, connected: Callable[[], bool] | None = None
) -> list[Route]:
    """/healthz: the process works (queued work progresses; in Socket Mode, the socket is up).
    /readyz: it can take more work now (the queue has room)."""

    async def healthz(_request: Request) -> Response:
        if connected is not None and not connected():
            return PlainTextResponse("not connected to Slack\n", status_code=503)
        if pool is not None and pool.stuck():
            return PlainTextResponse("stuck: queued work has not progressed\n", status_code=503)
        return PlainTextResponse("ok\n")

    async def readyz(_request: Request) -> Response:
        if pool is not None and pool.full():
            return PlainTextResponse("busy: the work queue is full\n", status_code=503)
        return PlainTextResponse("ready\n")

    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]


def metrics_app(
    metrics: Metrics, *, pool: WorkerPool | None = None, connected: Callable[[], bool] | None = None
) -> Starlette:
    async def render(_request: Request) -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return Starlette(
        routes=[Route("/metrics", render, methods=["GET"]), *probe_routes(pool, connected)]
    )


def _config(asgi: Starlette, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        asgi,
        host=host,
        port=port,
        timeout_keep_alive=KEEP_ALIVE_S,
        limit_concurrency=MAX_CONNECTIONS,
        h11_max_incomplete_event_size=64 << 10,  # headers: a slow or huge header block is cut off
        log_config=None,  # serve configures logging; uvicorn logs through it
        access_log=False,
        lifespan="off",
    )


@dataclass
class HttpServers:
    """The events server and the metrics server, run together on one event loop in a thread."""

    events: uvicorn.Server | None
    metrics: uvicorn.Server | None
    _thread: threading.Thread | None = None

    def start(self) -> HttpServers:
        self._thread = threading.Thread(target=self.run, name="traindoc-http", daemon=True)
        self._thread.start()
        for server in self._servers():
            while not server.started:
                if not self._thread.is_alive():
                    raise OSError("the HTTP server could not start (is the port in use?)")
                self._thread.join(0.01)
        return self

    def run(self) -> None:
        """Serve until stop() (or SIGINT/SIGTERM when run in the main thread)."""
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        await asyncio.gather(*(s.serve() for s in self._servers()))

    def _servers(self) -> list[uvicorn.Server]:
        return [s for s in (self.events, self.metrics) if s is not None]

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        for server in self._servers():
            server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)

    @staticmethod
    def port_of(server: uvicorn.Server) -> int:
        return server.servers[0].sockets[0].getsockname()[1]


def make_http_servers(
    app: App,
    metrics: Metrics,
    host: str,
    port: int,
    *,
    metrics_host: str = "127.0.0.1",
    metrics_port: int | None = None,
    pool: WorkerPool | None = None,
) -> HttpServers:
    events = _server(events_app(app, pool=pool), host, port)
    metrics_server = None
    if metrics_port is not None:
        metrics_server = _server(metrics_app(metrics, pool=pool), metrics_host, metrics_port)
    return HttpServers(events, metrics_server)


def make_probe_server(
    metrics: Metrics,
    host: str,
    port: int,
    *,
    pool: WorkerPool | None,
    connected: Callable[[], bool],
) -> HttpServers:
    """Socket Mode's only listener: /metrics, /healthz (socket up, work progressing), /readyz."""
    return HttpServers(
        None, _server(metrics_app(metrics, pool=pool, connected=connected), host, port)
    )


def _server(asgi: Starlette, host: str, port: int) -> uvicorn.Server:
    server = uvicorn.Server(_config(asgi, host, port))
    server.install_signal_handlers = lambda: None  # type: ignore[attr-defined]
    return server
