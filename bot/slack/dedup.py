"""Dedup middleware, first in the app's own chain: exactly one answer per user message.

Slack retries deliveries (same event_id) and sends one mention twice when both app_mention and
message.* are subscribed (different event_ids, same channel+ts). Both keys are claimed in the shared
store with a TTL. A retry whose first delivery never arrived finds no claim and is answered.
The (channel, ts) claim is only taken for events a listener will answer, so a message.channels copy
that traindoc ignores cannot swallow the app_mention of the same message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_bolt import BoltResponse

from bot.slack.deps import Deps, log
from bot.slack.events import classify, message_key


def dedup_middleware(deps: Deps) -> Callable[..., Any]:
    def dedup(body: dict[str, Any], context: Any, next: Callable[[], Any]) -> Any:
        if body.get("type") != "event_callback":
            return next()
        event = body.get("event") or {}
        deps.metrics.events.labels(type=str(event.get("type", "?"))).inc()
        event_id = body.get("event_id")
        if event_id and not deps.store.claim(f"event:{event_id}"):
            deps.metrics.duplicates.labels(key="event_id").inc()
            log.info("dropped duplicate delivery of %s", event_id)
            return BoltResponse(status=200, body="")
        surface = classify(
            event, bot_user_id=context.bot_user_id, passive_channels=deps.settings.passive_channels
        )
        context["surface"] = surface
        key = message_key(event)
        if surface is not None and key is not None and not deps.store.claim(key):
            deps.metrics.duplicates.labels(key="message").inc()
            log.info("dropped second delivery of message %s (%s)", key, event_id)
            return BoltResponse(status=200, body="")
        return next()

    return dedup
