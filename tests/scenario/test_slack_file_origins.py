"""The bot token never leaves Slack's file origin, whatever a message's file objects say.

Each case runs the real app against the fake Slack Web API while a second loopback server (the
"attacker") records whether it was contacted and whether it saw an Authorization header.
"""

from __future__ import annotations

import pytest

from tests.fakes import slack_payloads as p
from tests.fakes.attacker import AttackerServer
from tests.fakes.slack_harness import dispatch


@pytest.fixture
def attacker():
    with AttackerServer() as server:
        yield server


def _answer_text(fake_slack) -> str:
    return str(fake_slack.wait_calls("chat.update")[0].args)


def test_file_url_on_another_host(make_app, fake_slack, attacker):
    app = make_app()
    f = p.slack_file("run.log", attacker.root + "files-pri/T0TEST-F1/run.log")
    dispatch(app, p.event_body(p.mention("", files=[f])))
    assert "only downloads files from Slack" in _answer_text(fake_slack)
    assert attacker.requests == []


def test_redirect_to_another_host(make_app, fake_slack, attacker):
    app = make_app()
    url = fake_slack.add_redirect("run.log", attacker.root + "loot")
    dispatch(app, p.event_body(p.mention("", files=[p.slack_file("run.log", url)])))
    assert "only downloads files from Slack" in _answer_text(fake_slack)
    assert attacker.requests == [] and not attacker.saw_token()


def test_external_remote_file(make_app, fake_slack, attacker):
    app = make_app()
    f = {**p.slack_file("remote.log", attacker.root + "remote.log"), "is_external": True, "mode": "external"}
    dispatch(app, p.event_body(p.mention("", files=[f])))
    assert "external file" in _answer_text(fake_slack)
    assert attacker.requests == []


def test_file_url_with_file_scheme_is_not_read(make_app, fake_slack, tmp_path):
    secret = tmp_path / "secret.log"
    secret.write_text("RuntimeError: CUDA error: out of memory\nTOP-SECRET-LINE\n")
    app = make_app()
    dispatch(app, p.event_body(p.mention("", files=[p.slack_file("secret.log", secret.as_uri())])))
    answer = _answer_text(fake_slack)
    assert "only downloads files from Slack" in answer and "TOP-SECRET-LINE" not in answer


def test_file_in_the_threads_parent(make_app, fake_slack, attacker):
    app = make_app()
    parent_ts = p.new_ts()
    fake_slack.threads[(p.CHANNEL, parent_ts)] = [
        {
            "type": "message",
            "user": "UOTHER",
            "text": "",
            "ts": parent_ts,
            "files": [p.slack_file("parent.log", attacker.root + "files-pri/T0TEST-F9/parent.log")],
        }
    ]
    dispatch(app, p.event_body(p.mention("", thread_ts=parent_ts, ts=p.new_ts() + "9")))
    assert "only downloads files from Slack" in _answer_text(fake_slack)
    assert attacker.requests == []


def test_file_on_the_slack_origin_is_still_read(make_app, fake_slack):
    from tests.fakes import logs

    app = make_app()
    url = fake_slack.add_file("oom.log", logs.HOST_OOM.encode())
    dispatch(app, p.event_body(p.mention("", files=[p.slack_file("oom.log", url)])))
    assert logs.OOM_ENTRY in _answer_text(fake_slack)
    assert fake_slack.calls_to("file")[-1].headers["authorization"].startswith("Bearer xoxb-")
