"""Every WorkerPool the tests create, so a fake Slack API can wait for their work before it stops.

Without this, a report still being answered when its test ends posts to a stopped fake, fails, and
logs a traceback into whichever test runs next (a test that asserts "no traceback in the output"
then fails for a reason that is not its own).
"""

from __future__ import annotations

import time
import weakref

from bot.slack.workers import WorkerPool

_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()
_original_init = WorkerPool.__init__


def track() -> None:
    def init(self: WorkerPool, *args: object, **kwargs: object) -> None:
        _original_init(self, *args, **kwargs)  # type: ignore[arg-type]
        _pools.add(self)

    WorkerPool.__init__ = init  # type: ignore[method-assign]


def drain(timeout_s: float = 15.0) -> None:
    """Wait until no tracked pool has work queued or running (or the timeout passes)."""
    deadline = time.monotonic() + timeout_s
    while any(p.busy or p.waiting for p in list(_pools)) and time.monotonic() < deadline:
        time.sleep(0.02)
