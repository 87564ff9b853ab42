"""The Slack manifests declare exactly what the app registers and calls: no missing, no extra."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from bot.render import blocks as render
from bot.slack import registry
from bot.slack.app import create_app
from bot.slack.http import EVENTS_PATH
from bot.slack.metrics import Metrics
from bot.store.memory import MemoryStore
from tests.fakes import slack_payloads as p
from tests.fakes.engine import FakeEngine
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_harness import dispatch, test_settings

ROOT = Path(__file__).resolve().parents[4]
MANIFESTS = {mode: ROOT / "deploy" / "slack" / f"manifest.{mode}.yml" for mode in ("socket", "http")}

# Slack's documented requirements, written down independently of bot/slack/registry.py.
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "message.im": "im:history",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "app_home_opened": None,
}
METHOD_SCOPES = {
    "chat_postMessage": {"chat:write"},
    "chat_update": {"chat:write"},
    "chat_delete": {"chat:write"},  # removing a placeholder whose update failed: the bot's own message
    "conversations_replies": {"channels:history", "groups:history"},
    "views_open": set(),
    "views_publish": set(),
    "auth_test": set(),  # the bot's identity at start-up: no scope needed
}


def load(mode: str) -> dict:
    return yaml.safe_load(MANIFESTS[mode].read_text())


def web_api_methods_called() -> set[str]:
    source = "\n".join(path.read_text() for path in (ROOT / "bot" / "slack").glob("*.py"))
    return set(re.findall(r"\bclient\.([a-z]+_[A-Za-z]+)\(", source))


@pytest.mark.parametrize("mode", ["socket", "http"])
def test_manifest_matches_registry(mode):
    manifest = load(mode)
    settings = manifest["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == set(registry.BOT_EVENTS)
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == set(registry.BOT_SCOPES)
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == list(registry.COMMANDS)
    assert settings["interactivity"]["is_enabled"] is bool(registry.BLOCK_ACTIONS or registry.VIEW_SUBMISSIONS)
    assert manifest["features"]["app_home"]["home_tab_enabled"] is ("app_home_opened" in registry.BOT_EVENTS)
    assert settings["socket_mode_enabled"] is (mode == "socket")
    if mode == "http":
        urls = [
            settings["event_subscriptions"]["request_url"],
            settings["interactivity"]["request_url"],
            *([settings["interactivity"]["message_menu_options_url"]] if registry.OPTIONS else []),
            *[c["url"] for c in manifest["features"]["slash_commands"]],
        ]
        assert all(u.startswith("https://") and u.endswith(EVENTS_PATH) for u in urls)


def test_scopes_are_exactly_what_events_calls_and_downloads_need():
    needed = {s for e in registry.BOT_EVENTS if (s := EVENT_SCOPES[e])}
    called = web_api_methods_called()
    assert called <= set(METHOD_SCOPES), f"add the scope of {called - set(METHOD_SCOPES)} to this test"
    for method in called:
        needed |= METHOD_SCOPES[method]
    needed |= {"commands"} if registry.COMMANDS else set()
    needed |= {"files:read"}  # url_private downloads (bot/slack/files.py)
    assert set(registry.BOT_SCOPES) == needed


def test_app_registers_a_listener_for_everything_in_the_manifest_and_nothing_else():
    with FakeSlackAPI() as fake:
        app = create_app(
            test_settings(fake, passive_channels=[p.CHANNEL]),
            store=MemoryStore(),
            engine=FakeEngine(),
            metrics=Metrics(),
        )
        events = {
            "app_mention": p.mention("hello"),
            "message.im": p.message("hello", channel="D1", channel_type="im"),
            "message.channels": p.message("hello", channel_type="channel"),
            "message.groups": p.message("hello", channel="G1", channel_type="group"),
            "app_home_opened": {"type": "app_home_opened", "user": p.USER, "tab": "home"},
        }
        for name in load("socket")["settings"]["event_subscriptions"]["bot_events"]:
            assert dispatch(app, p.event_body(events[name])).status == 200, name
        assert dispatch(app, p.event_body({"type": "reaction_added", "user": p.USER})).status == 404
        url = fake.response_url()
        assert dispatch(app, p.slash_command("help", response_url=url), form=True).status == 200
        other = p.slash_command("help", response_url=url).replace("%2Ftraindoc", "%2Fother")
        assert dispatch(app, other, form=True).status == 404
        for action_id in (*registry.BLOCK_ACTIONS[:-1], "show_entry_0"):
            value = json.dumps({"ref": "x", "entry": "x", "top": []}) if action_id != render.ACTION_SIBLINGS else "x"
            assert dispatch(app, p.block_action(action_id, value, response_url=url), form=True).status == 200, action_id
        assert dispatch(app, p.block_action("unknown_action", "x", response_url=url), form=True).status == 404
        values = {render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": "x"}}}
        assert dispatch(app, p.view_submission(render.FEEDBACK_MODAL, values, "{}"), form=True).status == 200
        fake.wait_for(lambda: len(fake.calls_to("response_url")) >= 4, what="listeners ran")
