"""A local Socket Mode server: the URL a fake apps.connections.open returns.

Speaks the Socket Mode protocol: a `hello` on connect, envelopes pushed by the test, acks recorded.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

from tests.fakes.loopback import LoopbackServer


class FakeSocketModeServer(LoopbackServer):
    def __init__(self) -> None:
        super().__init__()
        self.acks: list[dict[str, Any]] = []
        self.connections = 0
        self._outbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self._ids = itertools.count(1)
        self._cond = threading.Condition()

    thread_name = "fake-socket-mode"

    def _make_server(self) -> Server:
        return serve(self._handle, "127.0.0.1", 0, ping_interval=None)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link/?ticket=fake"

    def send_event(self, body: dict[str, Any], *, retry_attempt: int = 0) -> str:
        envelope_id = f"env-{next(self._ids)}"
        self._outbox.put(
            {
                "envelope_id": envelope_id,
                "type": "events_api",
                "payload": body,
                "accepts_response_payload": False,
                "retry_attempt": retry_attempt,
                "retry_reason": "timeout" if retry_attempt else "",
            }
        )
        return envelope_id

    def send_interactive(self, payload: dict[str, Any], kind: str = "interactive") -> str:
        envelope_id = f"env-{next(self._ids)}"
        self._outbox.put(
            {"envelope_id": envelope_id, "type": kind, "payload": payload, "accepts_response_payload": True}
        )
        return envelope_id

    def wait_connected(self, timeout: float = 10.0) -> None:
        self._wait(lambda: self.connections > 0, timeout, "a Socket Mode connection")

    def wait_ack(self, envelope_id: str, timeout: float = 10.0) -> dict[str, Any]:
        return self._wait(
            lambda: next((a for a in self.acks if a.get("envelope_id") == envelope_id), None), timeout, envelope_id
        )

    def _wait(self, predicate: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not (value := predicate()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}")
                self._cond.wait(min(left, 0.05))
            return value

    def _handle(self, ws: ServerConnection) -> None:
        ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": 1,
                    "debug_info": {"host": "fake", "approximate_connection_time": 3600},
                    "connection_info": {"app_id": "A0TRAINDOC"},
                }
            )
        )
        with self._cond:
            self.connections += 1
            self._cond.notify_all()
        try:
            while True:
                try:
                    ws.send(json.dumps(self._outbox.get_nowait()))
                except queue.Empty:
                    pass
                try:
                    raw = ws.recv(timeout=0.02)
                except TimeoutError:
                    continue
                with self._cond:
                    self.acks.append(json.loads(raw))
                    self._cond.notify_all()
        except ConnectionClosed:
            return
