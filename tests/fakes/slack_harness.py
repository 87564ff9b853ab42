"""Glue for Slack tests: settings pointed at the fake Web API, and signed dispatch into a Bolt app."""

from __future__ import annotations

import json
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse

from bot.settings import Settings
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlackAPI, signed_headers


def test_settings(fake: FakeSlackAPI, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "slack_api_url": fake.base_url,
        "listener_threads": 4,
    }
    values.update(overrides)
    return Settings(**values)


test_settings.__test__ = False  # type: ignore[attr-defined] - a helper, not a test


def dispatch(app: App, body: dict[str, Any] | str, *, form: bool = False, **sign: Any) -> BoltResponse:
    """Send a signed request straight into Bolt (no HTTP), as the scenario tier does."""
    raw = body if isinstance(body, str) else json.dumps(body)
    content_type = "application/x-www-form-urlencoded" if form else "application/json"
    headers = signed_headers(raw, content_type=content_type, **sign)
    return app.dispatch(BoltRequest(body=raw, headers={k.lower(): [v] for k, v in headers.items()}))
