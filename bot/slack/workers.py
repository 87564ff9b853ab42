"""A bounded pool for slow work (downloads, diagnosis), off Bolt's listener threads.

Bolt runs every listener on one executor; if downloads and diagnoses ran there, slash commands and
buttons would queue behind them and miss Slack's 3-second ack. Listeners hand the slow part to this
pool and return at once. The queue is bounded: when it is full `submit` says so and the caller
answers "busy" instead of piling up work. `stuck()` feeds /healthz: work is waiting, yet nothing
has finished for `stuck_after_s`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger("traindoc.slack.workers")


class WorkerPool:
    def __init__(
        self,
        workers: int,
        queue_size: int,
        *,
        stuck_after_s: float = 300.0,
        name: str = "traindoc-work",
    ):
        self._queue: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=max(1, queue_size))
        self._busy = 0
        self._lock = threading.Lock()
        self._last_progress = time.monotonic()
        self.stuck_after_s = stuck_after_s
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True)
            for i in range(max(1, workers))
        ]
        for t in self._threads:
            t.start()

    def submit(self, task: Callable[[], None]) -> bool:
        """Queue `task`; False (and nothing queued) when the queue is full."""
        try:
            self._queue.put_nowait(task)
        except queue.Full:
            return False
        return True

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            with self._lock:
                self._busy += 1
            try:
                task()
            except Exception:
                log.exception("background task failed")
            finally:
                with self._lock:
                    self._busy -= 1
                    self._last_progress = time.monotonic()

    @property
    def waiting(self) -> int:
        return self._queue.qsize()

    @property
    def busy(self) -> int:
        with self._lock:
            return self._busy

    def full(self) -> bool:
        return self._queue.full()

    def stuck(self) -> bool:
        """Work is queued or running, yet nothing finished for `stuck_after_s` seconds."""
        with self._lock:
            idle_for = time.monotonic() - self._last_progress
            return (self._busy > 0 or not self._queue.empty()) and idle_for > self.stuck_after_s
