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


def _serve_cli(monkeypatch, env: dict[str, str], *args: str):
    from typer.testing import CliRunner

    from bot import cli

    for key in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "TRAINDOC_ABSTAIN_BELOW"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return CliRunner().invoke(cli.app, ["serve", *args])


def _one_line_error(result) -> str:
    """Exit 1 with one `traindoc: ...` line (log lines may precede it), never a traceback."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit | None), result.output
    errors = [line for line in result.output.splitlines() if line.startswith("traindoc: ")]
    assert len(errors) == 1, result.output
    return errors[0]


def test_invalid_abstain_threshold_is_one_line(monkeypatch):
    line = _one_line_error(_serve_cli(monkeypatch, {"TRAINDOC_ABSTAIN_BELOW": "lots"}, "--socket"))
    assert "TRAINDOC_ABSTAIN_BELOW" in line and "lots" in line


def test_bad_log_level_is_one_line(monkeypatch):
    env = {"SLACK_BOT_TOKEN": "xoxb-1-x", "SLACK_APP_TOKEN": "xapp-1-x"}
    line = _one_line_error(_serve_cli(monkeypatch, env, "--socket", "--log-level", "loud"))
    assert "--log-level" in line


@pytest.mark.slow  # waits for the index build to fail
def test_unwritable_index_dir_is_one_line(monkeypatch, tmp_path):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")  # an index directory below a regular file cannot be created, even by root
    env = {
        "SLACK_BOT_TOKEN": "xoxb-1-x",
        "SLACK_APP_TOKEN": "xapp-1-x",
        "TRAINDOC_INDEX_DIR": str(not_a_dir / "index"),
    }
    line = _one_line_error(_serve_cli(monkeypatch, env, "--socket"))
    assert "TRAINDOC_INDEX_DIR" in line


@pytest.mark.slow  # waits out the connection retries
def test_slack_unreachable_in_socket_mode_is_one_line(monkeypatch):
    from bot.slack import serve as serve_module

    env = {
        "SLACK_BOT_TOKEN": "xoxb-1-x",
        "SLACK_APP_TOKEN": "xapp-1-x",
        "TRAINDOC_SLACK_API_URL": "http://127.0.0.1:9/api/",  # nothing listens on port 9
        "TRAINDOC_DATABASE_URL": "sqlite://",
    }
    monkeypatch.setattr(serve_module, "warmed_engine", lambda settings: FakeEngine())
    line = _one_line_error(_serve_cli(monkeypatch, env, "--socket"))
    assert "cannot connect to Slack over Socket Mode" in line
