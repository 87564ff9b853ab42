"""serve() fails fast, before any network I/O, naming every missing variable."""

from __future__ import annotations

import pytest
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from bot.settings import Settings
from bot.slack.app import build_client, create_app
from bot.slack.serve import ConfigError, check_settings, serve
from bot.store.memory import MemoryStore
from tests.fakes.engine import FakeEngine


def test_socket_mode_names_both_missing_tokens():
    with pytest.raises(ConfigError) as info:
        serve(Settings(), mode="socket", host="127.0.0.1", port=0)
    assert "SLACK_BOT_TOKEN" in str(info.value) and "SLACK_APP_TOKEN" in str(info.value)


def test_http_mode_needs_the_signing_secret():
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET") as info:
        check_settings(Settings(SLACK_BOT_TOKEN="xoxb-1-x"), "http")
    assert "SLACK_BOT_TOKEN" not in str(info.value)
    check_settings(Settings(SLACK_BOT_TOKEN="xoxb-1-x", SLACK_SIGNING_SECRET="s"), "http")


def test_api_url_gets_the_trailing_slash_and_rate_limit_retries():
    client = build_client(Settings(SLACK_BOT_TOKEN="xoxb-1-x", slack_api_url="http://127.0.0.1:9/api"))
    assert client.base_url == "http://127.0.0.1:9/api/"
    kinds = (RateLimitErrorRetryHandler, ServerErrorRetryHandler, ConnectionErrorRetryHandler)
    assert all(any(isinstance(h, kind) for h in client.retry_handlers) for kind in kinds)


def test_create_app_makes_no_slack_call():
    # An unroutable API URL: any call at construction time would raise or hang.
    settings = Settings(SLACK_BOT_TOKEN="xoxb-1-x", SLACK_SIGNING_SECRET="s", slack_api_url="http://127.0.0.1:9/")
    app = create_app(settings, store=MemoryStore(), engine=FakeEngine(entries=()))
    assert app.client.base_url == "http://127.0.0.1:9/"
