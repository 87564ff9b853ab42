"""The lifecycle every loopback test server shares: start on a free port in a daemon thread, stop,
use as a context manager."""

from __future__ import annotations

import threading
from typing import Any, Self


class LoopbackServer:
    thread_name = "loopback-server"

    def __init__(self) -> None:
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def _make_server(self) -> Any:
        """A server object with serve_forever() and shutdown(), bound to 127.0.0.1:0."""
        raise NotImplementedError

    def _serve_args(self) -> tuple[Any, ...]:
        return ()

    def start(self) -> Self:
        self._server = self._make_server()
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=self._serve_args(), name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            if hasattr(self._server, "server_close"):
                self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
