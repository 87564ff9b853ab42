"""Pure event decisions: which surface answers, dedup keys, thread context, readable files."""

from __future__ import annotations

import pytest

from bot.slack import events

BOT = "UBOT"


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"type": "app_mention", "user": "U1", "text": "<@UBOT> hi", "channel": "C1", "ts": "1.1"}, "mention"),
        ({"type": "message", "user": "U1", "text": "hi", "channel": "D1", "channel_type": "im", "ts": "1.1"}, "dm"),
        ({"type": "message", "user": "U1", "text": "log", "channel": "CP", "channel_type": "channel"}, "passive"),
        ({"type": "message", "user": "U1", "text": "log", "channel": "C9", "channel_type": "channel"}, None),
        ({"type": "message", "user": "U1", "text": "<@UBOT> log", "channel": "CP", "channel_type": "channel"}, None),
        ({"type": "message", "subtype": "message_changed", "channel": "D1", "channel_type": "im"}, None),
        ({"type": "message", "bot_id": "B1", "text": "x", "channel": "D1", "channel_type": "im"}, None),
        ({"type": "message", "user": BOT, "text": "x", "channel": "D1", "channel_type": "im"}, None),
        ({"type": "message", "subtype": "file_share", "user": "U1", "channel": "D1", "channel_type": "im"}, "dm"),
        ({"type": "reaction_added", "user": "U1"}, None),
    ],
)
def test_classify(event, expected):
    assert events.classify(event, bot_user_id=BOT, passive_channels=["CP"]) == expected


def test_message_key_is_shared_by_both_deliveries():
    mention = {"type": "app_mention", "channel": "C1", "ts": "5.5"}
    copy = {"type": "message", "channel": "C1", "ts": "5.5"}
    assert events.message_key(mention) == events.message_key(copy) == "msg:C1:5.5"
    assert events.message_key({"type": "app_home_opened"}) is None


def test_reply_thread():
    assert events.reply_thread({"ts": "2", "thread_ts": "1"}, "mention") == "1"
    assert events.reply_thread({"ts": "2"}, "mention") == "2"
    assert events.reply_thread({"ts": "2"}, "dm") is None


def test_bare_mention_and_thread_context():
    assert events.is_bare("<@UBOT>  ") and events.is_bare("<@UBOT|traindoc>")
    assert not events.is_bare("<@UBOT> RuntimeError: x")
    messages = [
        {"ts": "1.0", "user": "U1", "text": "log"},
        {"ts": "1.5", "bot_id": "B", "text": "bot"},
        {"ts": "2.0", "user": "U1", "text": "<@UBOT>"},
        {"ts": "3.0", "user": "U2", "text": "later"},
    ]
    assert [m["ts"] for m in events.earlier_thread_messages(messages, before_ts="2.0", bot_user_id=BOT)] == ["1.0"]


def test_text_files():
    files = [
        {"name": "train.log"},
        {"name": "x.png", "mimetype": "image/png"},
        {"name": "s", "mode": "snippet"},
        {"name": "out.gz", "mimetype": "application/gzip"},
    ]
    readable, skipped = events.text_files(files)
    assert [f["name"] for f in readable] == ["train.log", "s", "out.gz"] and skipped == ["x.png"]
