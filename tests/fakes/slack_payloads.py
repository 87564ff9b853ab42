"""Build the payloads Slack sends (events, slash commands, block actions, view submissions)."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID

_ids = itertools.count(1)
_ts = itertools.count(1)

USER = "UHUMAN"
CHANNEL = "C0ONCALL"
DM_CHANNEL = "D0DM"


def new_ts() -> str:
    return f"{int(time.time())}.{next(_ts):06d}"


def event_body(event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
    return {
        "token": "legacy",
        "team_id": TEAM_ID,
        "api_app_id": "A0TRAINDOC",
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{next(_ids):08d}",
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
    }


def mention(
    text: str,
    *,
    channel: str = CHANNEL,
    ts: str | None = None,
    thread_ts: str | None = None,
    files: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "app_mention",
        "user": USER,
        "text": f"<@{BOT_USER_ID}> {text}".rstrip(),
        "ts": ts or new_ts(),
        "channel": channel,
        "event_ts": ts or new_ts(),
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    if files:
        event["files"] = files
    return event


def message(
    text: str,
    *,
    channel: str = CHANNEL,
    channel_type: str = "channel",
    ts: str | None = None,
    files: list[dict[str, Any]] | None = None,
    thread_ts: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "message",
        "user": USER,
        "text": text,
        "ts": ts or new_ts(),
        "channel": channel,
        "channel_type": channel_type,
        **extra,
    }
    if files:
        event["subtype"] = "file_share"
        event["files"] = files
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def slack_file(name: str, url: str, *, mimetype: str = "text/plain", size: int = 100) -> dict[str, Any]:
    return {
        "id": f"F{next(_ids)}",
        "name": name,
        "title": name,
        "mimetype": mimetype,
        "filetype": "text" if mimetype.startswith("text/") else name.rsplit(".", 1)[-1],
        "size": size,
        "url_private": url,
        "url_private_download": url,
        "mode": "hosted",
    }


def slash_command(text: str, *, response_url: str, channel: str = CHANNEL) -> str:
    return urlencode(
        {
            "token": "legacy",
            "team_id": TEAM_ID,
            "team_domain": "test",
            "channel_id": channel,
            "channel_name": "oncall",
            "user_id": USER,
            "user_name": "eng",
            "command": "/traindoc",
            "text": text,
            "api_app_id": "A0TRAINDOC",
            "response_url": response_url,
            "trigger_id": f"trig.{next(_ids)}",
        }
    )


def block_action(
    action_id: str, value: str, *, response_url: str, channel: str = CHANNEL, container: str = "message"
) -> str:
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM_ID, "domain": "test"},
        "user": {"id": USER, "username": "eng", "team_id": TEAM_ID},
        "api_app_id": "A0TRAINDOC",
        "token": "legacy",
        "container": {
            "type": container,
            "message_ts": "1.2",
            "channel_id": channel,
            "is_ephemeral": container != "message",
        },
        "trigger_id": f"trig.{next(_ids)}",
        "channel": {"id": channel, "name": "oncall"},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "b1",
                "value": value,
                "text": {"type": "plain_text", "text": "x"},
                "action_ts": str(time.time()),
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)})


def view_submission(callback_id: str, values: dict[str, Any], private_metadata: str) -> str:
    payload = {
        "type": "view_submission",
        "team": {"id": TEAM_ID, "domain": "test"},
        "user": {"id": USER, "username": "eng", "team_id": TEAM_ID},
        "api_app_id": "A0TRAINDOC",
        "token": "legacy",
        "trigger_id": f"trig.{next(_ids)}",
        "view": {
            "id": "V1",
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": private_metadata,
            "state": {"values": values},
            "hash": "h",
            "team_id": TEAM_ID,
            "app_id": "A0TRAINDOC",
        },
    }
    return urlencode({"payload": json.dumps(payload)})


def block_suggestion(action_id: str, block_id: str, typed: str, *, callback_id: str) -> str:
    """What Slack sends while a user types into an external select of a modal."""
    payload = {
        "type": "block_suggestion",
        "team": {"id": TEAM_ID, "domain": "test"},
        "user": {"id": USER, "username": "eng", "team_id": TEAM_ID},
        "api_app_id": "A0TRAINDOC",
        "token": "legacy",
        "action_id": action_id,
        "block_id": block_id,
        "value": typed,
        "view": {"id": "V1", "type": "modal", "callback_id": callback_id},
    }
    return urlencode({"payload": json.dumps(payload)})
