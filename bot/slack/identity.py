"""The bot's identity (auth.test) before the first event is handled, or the event is handed back.

Bolt learns who the bot is lazily, on the first request. If that auth.test fails (after the Web API
client's own retries), Bolt answers the request with status 200 and an error text: Slack considers
the event delivered and it is lost. This middleware runs before Bolt's authorization and makes the
same call first; when it fails, it answers 503 (HTTP mode) or leaves the envelope unacknowledged
(Socket Mode), so Slack delivers the event again a little later.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from slack_bolt.middleware import Middleware
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse

from bot.redact import redact

log = logging.getLogger("traindoc.slack")


class FirstEventIdentity(Middleware):
    def __init__(self) -> None:
        self._known = False
        self._lock = threading.Lock()

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse:
        if self._known or _needs_no_identity(req):
            return next()
        with self._lock:
            if not self._known:
                try:
                    req.context.client.auth_test()
                    self._known = True
                except Exception as exc:  # noqa: BLE001 - SlackApiError, or the transport after retries
                    log.error(
                        "auth.test failed (%s); Slack will deliver this event again",
                        redact(str(exc))[:300],
                    )
                    return BoltResponse(
                        status=503, body="the bot's identity is not known yet; retry"
                    )
        return next()


def _needs_no_identity(req: BoltRequest) -> bool:
    body = req.body if isinstance(req.body, dict) else {}
    return body.get("type") == "url_verification" or "ssl_check" in body
