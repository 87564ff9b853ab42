"""Pure functions on Slack event dicts: which surface an event belongs to, its dedup key, its text.

No I/O here: the dedup middleware and the listeners share these decisions, so a mention delivered
both as `app_mention` and as `message.channels` is classified the same way by both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

Surface = Literal["mention", "dm", "passive"]

# Message subtypes that carry a user's words; edits, joins, bot posts and deletions do not.
ANSWERABLE_SUBTYPES = (None, "file_share", "thread_broadcast")
TEXT_FILE_SUFFIXES = (".log", ".txt", ".gz", ".out", ".err", ".trace")
TEXT_FILETYPES = {"text", "log", "gzip", "python", "shell", "json", "yaml", "markdown"}


def is_from_bot(event: Mapping[str, Any], bot_user_id: str | None) -> bool:
    return bool(event.get("bot_id")) or (
        bot_user_id is not None and event.get("user") == bot_user_id
    )


def mentions(text: str, user_id: str | None) -> bool:
    return bool(user_id) and f"<@{user_id}" in text


def classify(
    event: Mapping[str, Any], *, bot_user_id: str | None, passive_channels: Iterable[str]
) -> Surface | None:
    """The surface that answers this event, or None when traindoc stays silent."""
    if is_from_bot(event, bot_user_id) or event.get("subtype") not in ANSWERABLE_SUBTYPES:
        return None
    kind = event.get("type")
    if kind == "app_mention":
        return "mention"
    if kind != "message":
        return None
    if event.get("channel_type") == "im":
        return "dm"
    if mentions(event.get("text") or "", bot_user_id):
        return None  # the app_mention delivery of the same message answers it
    if event.get("channel") in set(passive_channels):
        return "passive"
    return None


def answers_passively(verdict: str, confidence: float, floor: float | None) -> bool:
    """Passive channels hear only confident failure matches: harmless-warning and user-code
    answers, and abstentions, wait until someone addresses the bot (mention, DM, slash command)."""
    return verdict == "match" and (floor is None or confidence >= floor)


def message_key(event: Mapping[str, Any]) -> str | None:
    """(channel, ts) of the user's message: the same for its app_mention and message deliveries."""
    channel, ts = event.get("channel"), event.get("ts")
    return f"msg:{channel}:{ts}" if channel and ts else None


def reply_thread(event: Mapping[str, Any], surface: Surface) -> str | None:
    """Where the answer goes: the message's thread in channels; DMs stay flat unless already
    threaded."""
    if surface == "dm":
        return event.get("thread_ts")
    return event.get("thread_ts") or event.get("ts")


def in_thread(event: Mapping[str, Any]) -> bool:
    """A reply inside a thread (not the thread's parent, not a top-level message)."""
    return bool(event.get("thread_ts")) and event.get("thread_ts") != event.get("ts")


def is_bare(text: str) -> bool:
    """A mention with nothing else in it (then the thread is the input)."""
    return not re.sub(r"<@[A-Z0-9]+(?:\|[^>]*)?>", "", text).strip()


def earlier_thread_messages(
    messages: Iterable[Mapping[str, Any]], *, before_ts: str, bot_user_id: str | None
) -> list[Mapping[str, Any]]:
    """The thread's parent and the replies before the mention, without the bot's own posts."""
    return [
        m
        for m in messages
        if float(m.get("ts", "0")) < float(before_ts) and not is_from_bot(m, bot_user_id)
    ]


def text_files(files: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[str]]:
    """Files worth downloading (snippets, .log/.txt/.gz, text types) and the names of the rest."""
    readable, skipped = [], []
    for f in files:
        name = (f.get("name") or f.get("title") or "").lower()
        mimetype = f.get("mimetype") or ""
        if (
            f.get("mode") == "snippet"
            or name.endswith(TEXT_FILE_SUFFIXES)
            or mimetype.startswith("text/")
            or mimetype in ("application/gzip", "application/x-gzip")
            or f.get("filetype") in TEXT_FILETYPES
        ):
            readable.append(f)
        else:
            skipped.append(f.get("name") or f.get("id") or "file")
    return readable, skipped
