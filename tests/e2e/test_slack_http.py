"""The real app over loopback HTTP with signed requests, against the recording fake Web API."""

from __future__ import annotations

import gzip
import json
import time

import pytest

from bot.render import blocks as render
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.slack_api import BOT_USER_ID

# The first e2e test builds the session index (minutes on a busy 2-core machine).
pytestmark = pytest.mark.timeout(900)


def _threaded_answers(fake, event):
    """Messages posted in the event's thread (the placeholder, later replaced by the answer)."""
    placeholders = [c for c in fake.calls_to("chat.postMessage") if c.args.get("thread_ts") == event["ts"]]
    return placeholders


def test_mention_gets_exactly_one_threaded_answer_naming_the_entry(bot, record_property):
    event = p.mention("our job died:\n" + logs.SHM_BUS_ERROR)
    started = time.monotonic()
    assert bot.post_event(p.event_body(event)) == 200
    update = bot.fake.wait_calls("chat.update", timeout=30)[0]
    latency = time.monotonic() - started
    record_property("event_to_answer_s", round(latency, 3))
    print(f"\nevent -> answer: {latency * 1000:.0f} ms")
    assert len(_threaded_answers(bot.fake, event)) == 1
    assert update.args["channel"] == p.CHANNEL
    assert f"`{logs.SHM_ENTRY}`" in json.dumps(update.args["blocks"])
    assert update.args["text"]  # always a fallback
    assert update.headers["authorization"].startswith("Bearer xoxb-")


def test_the_same_event_retried_is_not_answered_again(bot):
    body = p.event_body(p.mention(logs.HOST_OOM))
    dropped_before = bot.metrics.duplicates.labels(key="event_id")._value.get()
    assert bot.post_event(body) == 200
    bot.fake.wait_calls("chat.update", timeout=30)
    assert bot.post_event(body, retry_num=1) == 200
    assert bot.post_event(body, retry_num=2) == 200
    # The dedup middleware runs before the ack returns: both retries were dropped, not queued.
    assert bot.metrics.duplicates.labels(key="event_id")._value.get() == dropped_before + 2
    assert b'traindoc_slack_duplicates_total{key="event_id"}' in bot.get("/metrics")[1]
    assert len(bot.fake.calls_to("chat.postMessage")) == 1


def test_app_mention_plus_message_copy_gives_one_answer(bot):
    mention = p.mention(logs.SHM_BUS_ERROR)
    copy = p.message(mention["text"], ts=mention["ts"], channel_type="im", channel=p.CHANNEL)
    assert bot.post_event(p.event_body(copy)) == 200
    assert bot.post_event(p.event_body(mention)) == 200
    bot.fake.wait_calls("chat.update", timeout=30)
    assert len(bot.fake.calls_to("chat.postMessage")) == 1


def test_bad_signature_and_stale_timestamp_are_rejected(bot):
    raw = json.dumps(p.event_body(p.mention(logs.SHM_BUS_ERROR)))
    status, _ = bot.post(raw, secret="not-the-secret")
    assert status == 401
    status, _ = bot.post(raw, timestamp=int(time.time()) - 6 * 60)
    assert status == 401
    assert bot.fake.calls == []


def test_file_share_is_downloaded_and_diagnosed(bot):
    url = bot.fake.add_file("train.log.gz", gzip.compress(logs.HOST_OOM.encode()), content_type="application/gzip")
    event = p.message(
        "",
        channel=p.DM_CHANNEL,
        channel_type="im",
        files=[p.slack_file("train.log.gz", url, mimetype="application/gzip")],
    )
    assert bot.post_event(p.event_body(event)) == 200
    update = bot.fake.wait_calls("chat.update", timeout=30)[0]
    [download] = bot.fake.calls_to("file")
    assert download.headers["authorization"] == f"Bearer {bot.fake.bot_token}"
    assert f"`{logs.OOM_ENTRY}`" in json.dumps(update.args["blocks"])


def test_file_url_answering_html_gives_a_clear_message(bot):
    url = bot.fake.add_file("run.log", logs.HOST_OOM.encode(), html=True)
    event = p.mention("see attached", files=[p.slack_file("run.log", url)])
    assert bot.post_event(p.event_body(event)) == 200
    update = bot.fake.wait_calls("chat.update", timeout=30)[0]
    assert "login page" in update.args["text"] and "files:read" in update.args["text"]


def test_slash_command_is_ephemeral_and_share_posts_in_channel(bot):
    url = bot.fake.response_url("slash")
    status, _body = bot.post(p.slash_command(logs.SHM_BUS_ERROR, response_url=url), form=True)
    assert status == 200
    answer = bot.fake.wait_calls("response_url", timeout=30)[0].args
    assert answer["response_type"] == "ephemeral"
    share = next(
        e for b in answer["blocks"] for e in b.get("elements", []) if e.get("action_id") == render.ACTION_SHARE
    )
    status, _ = bot.post(
        p.block_action(render.ACTION_SHARE, share["value"], response_url=url, container="message_attachment"), form=True
    )
    assert status == 200
    posted = bot.fake.wait_calls("chat.postMessage", timeout=30)[0].args
    assert posted["channel"] == p.CHANNEL and f"`{logs.SHM_ENTRY}`" in json.dumps(posted["blocks"])


def test_thumbs_down_modal_stores_feedback(bot):
    bot.post_event(p.event_body(p.mention(logs.SHM_BUS_ERROR)))
    blocks = bot.fake.wait_calls("chat.update", timeout=30)[0].args["blocks"]
    wrong = next(e for b in blocks for e in b.get("elements", []) if e.get("action_id") == render.ACTION_WRONG)
    status, _ = bot.post(
        p.block_action(render.ACTION_WRONG, wrong["value"], response_url=bot.fake.response_url()), form=True
    )
    assert status == 200
    view = bot.fake.wait_calls("views.open")[0].args["view"]
    values = {render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": logs.OOM_ENTRY}}}
    before = len(bot.store.list_feedback())
    status, _ = bot.post(p.view_submission(render.FEEDBACK_MODAL, values, view["private_metadata"]), form=True)
    assert status == 200
    feedback = bot.store.list_feedback()[0]
    assert len(bot.store.list_feedback()) == before + 1
    assert feedback.correct_id == logs.OOM_ENTRY and not feedback.helpful


def test_429_on_the_answer_is_delivered_after_retry_after(bot):
    bot.fake.script("chat.update", status=429, body={"ok": False, "error": "ratelimited"}, headers={"Retry-After": "1"})
    started = time.monotonic()
    bot.post_event(p.event_body(p.mention(logs.SHM_BUS_ERROR)))
    limited, answer = bot.fake.wait_calls("chat.update", 2, timeout=30)
    assert answer.at - limited.at >= 1.0 and logs.SHM_ENTRY in str(answer.args["blocks"])
    assert time.monotonic() - started >= 1.0


def test_429_on_the_placeholder_is_not_waited_for(bot):
    bot.fake.script(
        "chat.postMessage", status=429, body={"ok": False, "error": "ratelimited"}, headers={"Retry-After": "30"}
    )
    bot.post_event(p.event_body(p.mention(logs.SHM_BUS_ERROR)))
    _limited, answer = bot.fake.wait_calls("chat.postMessage", 2, timeout=20)  # well before Retry-After
    assert logs.SHM_ENTRY in str(answer.args["blocks"]) and not bot.fake.calls_to("chat.update")


def test_failed_update_posts_the_answer_anew_in_the_thread(bot):
    bot.fake.script("chat.update", status=200, body={"ok": False, "error": "internal_error"})
    event = p.mention(logs.SHM_BUS_ERROR)
    bot.post_event(p.event_body(event))
    [delete] = bot.fake.wait_calls("chat.delete", timeout=30)  # the placeholder is removed...
    _placeholder, answer = _threaded_answers(bot.fake, event)
    assert logs.SHM_ENTRY in str(answer.args["blocks"])  # ...and the finished answer is not lost
    assert delete.args["ts"] == bot.fake.calls_to("chat.update")[0].args["ts"]
    assert "couldn't analyse this" not in str([c.args for c in bot.fake.calls])


def test_healthz_and_metrics(bot):
    assert bot.get("/healthz") == (200, b"ok\n")
    status, body = bot.get("/metrics")
    assert status == 200 and b"traindoc_slack_events_total" in body


def test_self_messages_are_ignored(bot):
    event = p.message(logs.SHM_BUS_ERROR, channel=p.DM_CHANNEL, channel_type="im", user=BOT_USER_ID)
    event["user"] = BOT_USER_ID
    assert bot.post_event(p.event_body(event)) == 200
    bot.post_event(p.event_body(p.mention(logs.HOST_OOM)))
    bot.fake.wait_calls("chat.update", timeout=30)
    assert len(bot.fake.calls_to("chat.postMessage")) == 1
