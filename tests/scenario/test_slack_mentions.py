"""Scenario tier: signed event payloads dispatched into the Bolt app; the Web API is a local fake."""

from __future__ import annotations

from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.engine import BOOM, LEAKY_SECRET
from tests.fakes.slack_harness import dispatch


def _answers(fake, channel=p.CHANNEL):
    return [c for c in fake.calls_to("chat.update") if c.args.get("channel") == channel]


def test_mention_with_traceback_gets_one_threaded_answer(make_app, fake_slack):
    app = make_app()
    event = p.mention(logs.SHM_BUS_ERROR)
    assert dispatch(app, p.event_body(event)).status == 200
    update = fake_slack.wait_calls("chat.update")[0]
    placeholder = fake_slack.calls_to("chat.postMessage")[0]
    assert placeholder.args["thread_ts"] == event["ts"]
    assert update.args["ts"].startswith("17")
    assert logs.SHM_ENTRY in str(update.args["blocks"])
    assert "Bus error" in update.args["text"] or "shm" in update.args["text"].lower()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


def test_retry_of_the_same_event_is_not_answered_twice(make_app, fake_slack, store):
    app = make_app()
    body = p.event_body(p.mention(logs.SHM_BUS_ERROR))
    dispatch(app, body)
    fake_slack.wait_calls("chat.update")
    assert dispatch(app, body, retry_num=1).status == 200
    assert dispatch(app, body, retry_num=2).status == 200
    assert not store.claim(f"event:{body['event_id']}")
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


def test_retry_whose_first_delivery_never_arrived_is_answered(make_app, fake_slack):
    app = make_app()
    dispatch(app, p.event_body(p.mention(logs.SHM_BUS_ERROR)), retry_num=1)
    fake_slack.wait_calls("chat.update")


def test_app_mention_and_message_copies_give_one_answer(make_app, fake_slack):
    app = make_app(passive_channels=[p.CHANNEL])
    mention = p.mention(logs.SHM_BUS_ERROR)
    copy = p.message(mention["text"], ts=mention["ts"])
    dispatch(app, p.event_body(copy))
    dispatch(app, p.event_body(mention))
    fake_slack.wait_calls("chat.update")
    dispatch(app, p.event_body(p.message("bye", ts=p.new_ts())))  # unrelated chatter: silent
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


def test_dm_is_answered_flat(make_app, fake_slack):
    app = make_app()
    dispatch(app, p.event_body(p.message(logs.HOST_OOM, channel=p.DM_CHANNEL, channel_type="im")))
    update = fake_slack.wait_calls("chat.update")[0]
    assert logs.OOM_ENTRY in str(update.args["blocks"])
    assert "thread_ts" not in fake_slack.calls_to("chat.postMessage")[0].args


def test_abstention_names_nearest_entries(make_app, fake_slack):
    app = make_app()
    dispatch(app, p.event_body(p.mention(logs.NO_MATCH)))
    update = fake_slack.wait_calls("chat.update")[0]
    assert update.args["text"].startswith("No confident match")
    assert "Paste next" in str(update.args["blocks"])


def test_passive_channel_answers_only_confident_logs(make_app, fake_slack, fake_engine):
    app = make_app(passive_channels=[p.CHANNEL])
    calls_before = fake_engine.completed
    dispatch(app, p.event_body(p.message("anyone seen the new GPU quota?")))
    dispatch(app, p.event_body(p.message(logs.NO_MATCH)))
    dispatch(app, p.event_body(p.message(logs.SHM_BUS_ERROR)))
    post = fake_slack.wait_calls("chat.postMessage")[0]
    fake_slack.wait_for(lambda: fake_engine.completed >= calls_before + 2, what="both logs diagnosed")
    assert logs.SHM_ENTRY in str(post.args["blocks"])
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # no placeholder, no answer to chatter
    assert not fake_slack.calls_to("chat.update")


def test_bare_mention_in_thread_reads_the_thread(make_app, fake_slack):
    app = make_app()
    parent_ts = p.new_ts()
    fake_slack.threads[(p.CHANNEL, parent_ts)] = [
        {"type": "message", "user": "UOTHER", "text": logs.HOST_OOM.replace("<", "&lt;"), "ts": parent_ts},
        {"type": "message", "bot_id": "BBOT", "user": "UBOT", "text": "earlier bot chatter", "ts": parent_ts + "1"},
    ]
    dispatch(app, p.event_body(p.mention("", thread_ts=parent_ts, ts=p.new_ts() + "9")))
    update = fake_slack.wait_calls("chat.update")[0]
    replies = fake_slack.calls_to("conversations.replies")[0]
    assert replies.args["ts"] == parent_ts
    assert logs.OOM_ENTRY in str(update.args["blocks"])


def test_bare_mention_outside_a_thread_explains_usage(make_app, fake_slack):
    app = make_app()
    dispatch(app, p.event_body(p.mention("")))
    update = fake_slack.wait_calls("chat.update")[0]
    assert "How to use traindoc" in str(update.args["blocks"])
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


def test_listener_exception_posts_short_error_in_thread(make_app, fake_slack, caplog):
    app = make_app()
    body = p.event_body(p.mention(logs.SHM_BUS_ERROR + BOOM))
    dispatch(app, body)
    update = fake_slack.wait_calls("chat.update")[0]
    assert "couldn't analyse this" in update.args["text"]
    fake_slack.wait_for(lambda: body["event_id"] in caplog.text, what="error logged with the event id")
    assert "engine exploded" in caplog.text and LEAKY_SECRET not in caplog.text


def test_secrets_are_redacted_in_the_answer_and_input(make_app, fake_slack, fake_engine):
    app = make_app()
    dispatch(app, p.event_body(p.mention(logs.WITH_SECRET)))
    fake_slack.wait_calls("chat.update")
    assert "hf_abcdefghijklmnop" not in fake_engine.calls[-1].text
    assert all("hf_abcdefghijklmnop" not in str(c.args) for c in fake_slack.calls)


def test_image_attachment_gets_a_clear_message(make_app, fake_slack):
    app = make_app()
    url = fake_slack.add_file("screenshot.png", b"\x89PNG....", content_type="image/png")
    dispatch(app, p.event_body(p.mention("", files=[p.slack_file("screenshot.png", url, mimetype="image/png")])))
    update = fake_slack.wait_calls("chat.update")[0]
    assert "not screenshot.png" in update.args["text"] and not fake_slack.calls_to("file")


def test_snippet_is_read(make_app, fake_slack):
    app = make_app()
    url = fake_slack.add_file("-.txt", logs.HOST_OOM.encode())
    snippet = {**p.slack_file("-.txt", url), "mode": "snippet", "name": "Untitled"}
    dispatch(app, p.event_body(p.message("", channel=p.DM_CHANNEL, channel_type="im", files=[snippet])))
    assert logs.OOM_ENTRY in str(fake_slack.wait_calls("chat.update")[0].args["blocks"])


def test_passive_min_confidence_raises_the_bar(make_app, fake_slack, fake_engine):
    app = make_app(passive_channels=[p.CHANNEL], passive_min_confidence=0.99)
    before = fake_engine.completed
    dispatch(app, p.event_body(p.message(logs.SHM_BUS_ERROR)))
    fake_slack.wait_for(lambda: fake_engine.completed > before, what="diagnosed")
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))  # a later mention is still answered
    fake_slack.wait_calls("chat.update")
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
