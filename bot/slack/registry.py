"""What the app subscribes to and needs, in one place: create_app registers exactly this, and the
manifests in deploy/slack must declare exactly this (tests/unit/bot/slack/test_manifest.py
checks both)."""

from __future__ import annotations

from bot.render import blocks as render
from bot.slack.commands import COMMAND

# Event subscriptions (manifest names) -> the Bolt event type that handles them.
BOT_EVENTS: dict[str, str] = {
    "app_mention": "app_mention",
    "message.im": "message",
    "message.channels": "message",  # passive channels; also mention+message double delivery
    "message.groups": "message",  # passive private channels
    "app_home_opened": "app_home_opened",
}

# Bot scopes, each with the code that needs it.
BOT_SCOPES: dict[str, str] = {
    "app_mentions:read": "app_mention event",
    "chat:write": "chat.postMessage / chat.update answers",
    "commands": f"{COMMAND} slash command",
    "files:read": "download attached logs (url_private)",
    "im:history": "message.im event (DMs)",
    "channels:history": (
        "message.channels event, conversations.replies for a bare mention in a thread"
    ),
    "groups:history": "message.groups event, conversations.replies in private channels",
}

COMMANDS = (COMMAND,)
BLOCK_ACTIONS = (
    render.ACTION_HELPFUL,
    render.ACTION_WRONG,
    render.ACTION_WHY,
    render.ACTION_SIBLINGS,
    render.ACTION_SHARE,
    render.SHOW_ENTRY_PATTERN.pattern,
)
VIEW_SUBMISSIONS = (render.FEEDBACK_MODAL,)
# external selects (block_suggestion): HTTP needs an options URL
OPTIONS = (render.ACTION_SEARCH_ENTRY,)
