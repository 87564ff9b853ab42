"""App Home: how to use traindoc, the KB size by category, the workspace's recent diagnoses."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient

from bot.render import blocks as render
from bot.slack.deps import Deps

RECENT = 10


def make_home_listener(deps: Deps) -> Callable[..., None]:
    def on_home_opened(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        if event.get("tab", "home") != "home":
            return
        records = deps.store.recent_diagnoses(body.get("team_id", ""), RECENT)
        recent = [
            render.RecentDiagnosis(
                when=time.strftime("%Y-%m-%d %H:%M", time.gmtime(r.created_at)),
                title=r.title or r.entry_id,
                verdict=r.verdict,
                confidence=r.confidence,
                channel=r.channel,
            )
            for r in records
        ]
        client.views_publish(
            user_id=event["user"], view=render.render_home(deps.engine.entries(), recent)
        )

    return on_home_opened
