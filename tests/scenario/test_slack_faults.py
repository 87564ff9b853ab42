"""Slack answering 5xx, 429 or ok:false: the finished answer still reaches the thread, once."""

from __future__ import annotations

from bot.slack.app import create_app
from bot.slack.metrics import Metrics
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.slack_harness import dispatch, test_settings


def _app(fake_slack, store, fake_engine):
    metrics = Metrics()
    return create_app(test_settings(fake_slack), store=store, engine=fake_engine, metrics=metrics), metrics


def test_server_errors_are_retried(fake_slack, store, fake_engine):
    app, metrics = _app(fake_slack, store, fake_engine)
    fake_slack.script("chat.update", status=500, body={"ok": False, "error": "internal_error"}, times=2)
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    updates = fake_slack.wait_calls("chat.update", 3)  # two 500s, then the answer
    assert logs.OOM_ENTRY in str(updates[-1].args["blocks"]) and len(fake_slack.calls_to("chat.postMessage")) == 1
    assert metrics.api_retries.labels(reason="server_error")._value.get() == 2


def test_rate_limits_honour_retry_after(fake_slack, store, fake_engine):
    app, metrics = _app(fake_slack, store, fake_engine)
    fake_slack.script(
        "chat.update", status=429, body={"ok": False, "error": "ratelimited"}, headers={"Retry-After": "0"}, times=4
    )
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    updates = fake_slack.wait_calls("chat.update", 5)  # four 429s, then the answer
    assert logs.OOM_ENTRY in str(updates[-1].args["blocks"])
    assert "couldn't analyse" not in str([c.args for c in fake_slack.calls])
    assert metrics.api_retries.labels(reason="rate_limited")._value.get() == 4


def test_update_that_keeps_failing_posts_the_answer_anew_and_removes_the_placeholder(fake_slack, store, fake_engine):
    app, metrics = _app(fake_slack, store, fake_engine)
    fake_slack.script("chat.update", status=200, body={"ok": False, "error": "message_not_found"}, times=1)
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    [delete] = fake_slack.wait_calls("chat.delete")
    placeholder, answer = fake_slack.calls_to("chat.postMessage")
    assert logs.OOM_ENTRY in str(answer.args["blocks"]) and answer.args["thread_ts"] == placeholder.args["thread_ts"]
    assert delete.args["ts"] == fake_slack.calls_to("chat.update")[0].args["ts"]  # the placeholder goes
    assert metrics.api_errors.labels(method="chat.update")._value.get() == 1


def test_failed_placeholder_still_gets_the_answer(fake_slack, store, fake_engine):
    app, metrics = _app(fake_slack, store, fake_engine)
    fake_slack.script("chat.postMessage", status=200, body={"ok": False, "error": "fatal_error"}, times=1)
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    failed, answer = fake_slack.wait_calls("chat.postMessage", 2)
    assert logs.OOM_ENTRY not in str(failed.args.get("blocks"))  # the first post was the placeholder
    assert logs.OOM_ENTRY in str(answer.args["blocks"]) and not fake_slack.calls_to("chat.update")
    assert metrics.api_errors.labels(method="chat.postMessage")._value.get() == 1


def test_rate_limited_placeholder_is_skipped_not_waited_for(fake_slack, store, fake_engine):
    app, metrics = _app(fake_slack, store, fake_engine)
    fake_slack.script(
        "chat.postMessage", status=429, body={"ok": False, "error": "ratelimited"}, headers={"Retry-After": "30"}
    )
    dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    # had the placeholder waited out Retry-After, no answer could arrive within the wait below
    limited, answer = fake_slack.wait_calls("chat.postMessage", 2, timeout=5)
    assert logs.OOM_ENTRY not in str(limited.args.get("blocks")) and logs.OOM_ENTRY in str(answer.args["blocks"])
    assert metrics.api_retries.labels(reason="rate_limited")._value.get() == 0


def test_first_event_survives_a_failing_auth_test(fake_slack, store, fake_engine):
    app, metrics = _app(fake_slack, store, fake_engine)
    # a 500 is retried by the client itself: the first event is answered without Slack's help
    fake_slack.script("auth.test", status=500, body={"ok": False, "error": "internal_error"}, times=1)
    first = dispatch(app, p.event_body(p.mention(logs.HOST_OOM)))
    assert first.status == 200
    assert logs.OOM_ENTRY in str(fake_slack.wait_calls("chat.update")[0].args["blocks"])
    assert metrics.api_retries.labels(reason="server_error")._value.get() == 1


def test_first_event_is_handed_back_when_auth_test_keeps_failing(fake_slack, store, fake_engine):
    app, _ = _app(fake_slack, store, fake_engine)
    fake_slack.script("auth.test", body={"ok": False, "error": "fatal_error"}, times=1)
    body = p.event_body(p.mention(logs.HOST_OOM))
    refused = dispatch(app, body)
    assert refused.status == 503  # not acknowledged: Slack delivers the event again
    assert not fake_slack.calls_to("chat.postMessage")
    again = dispatch(app, body, retry_num=1)  # Slack's redelivery of the same event
    assert again.status == 200
    assert logs.OOM_ENTRY in str(fake_slack.wait_calls("chat.update")[0].args["blocks"])
