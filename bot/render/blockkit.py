"""Block Kit primitives: the message type and the small builders every Slack surface uses, each
clipped to Slack's limits (bot.render.slack_limits). Pure functions of their inputs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.render import slack_limits as lim


@dataclass(frozen=True)
class Message:
    """What chat.postMessage / chat.update / respond() take: the fallback text and the blocks."""

    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def kwargs(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": self.blocks}


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


def header(text: str) -> dict[str, Any]:
    return {
        "type": "header",
        "text": {"type": "plain_text", "text": lim.clip(text, lim.MAX_HEADER_TEXT), "emoji": True},
    }


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(lim.clip(text, lim.MAX_SECTION_TEXT))}


def context(*texts: str) -> dict[str, Any]:
    return {
        "type": "context",
        "elements": [
            _mrkdwn(lim.clip(t, lim.MAX_CONTEXT_TEXT))
            for t in texts[: lim.MAX_CONTEXT_ELEMENTS]
            if t
        ],
    }


def button(
    text: str, action_id: str, value: str | dict[str, Any], *, style: str | None = None
) -> dict[str, Any]:
    raw = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    out: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": lim.clip(text, lim.MAX_BUTTON_TEXT), "emoji": True},
        "action_id": lim.clip(action_id, lim.MAX_ACTION_ID),
        "value": lim.clip(raw, lim.MAX_BUTTON_VALUE),
    }
    if style:
        out["style"] = style
    return out


def actions(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "actions", "elements": list(elements[: lim.MAX_ACTIONS_ELEMENTS])}


def escape(text: str) -> str:
    """Slack mrkdwn escaping: only &, < and > are special."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, title: str) -> str:
    return f"<{url}|{escape(title).replace('|', '/')}>"


def numbered(steps: Sequence[str], limit: int = lim.MAX_SECTION_TEXT - 20) -> str:
    return lim.clip_lines((f"{i}. {escape(step)}" for i, step in enumerate(steps, 1)), limit)


def bullets(items: Sequence[str]) -> str:
    return "\n".join(f"• {item}" for item in items)
