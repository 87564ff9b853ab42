"""Scenario tier: harmless-warning and user-code answers reach people who address the bot, never a
passive channel (issue 11 item 5)."""

from __future__ import annotations

import pytest

from bot.ingest import report_from_text
from bot.model import Candidate, Diagnosis, Report, UserFrame, Why
from bot.render import slack_limits
from kb.schema import Entry
from tests.fakes import slack_payloads as p
from tests.fakes.engine import FakeEngine
from tests.fakes.kbfactory import entry_dict

WARNING_LOG = (
    "Loading checkpoint shards: 100%|██████████| 4/4 [00:05<00:00,  1.31s/it]\n"
    "[rank0]:/usr/lib/python3.10/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. "
    "It will be removed in the future and UntypedStorage will be the only storage class.\n"
    "[rank0]:  return self.fget.__get__(instance, owner)()\n"
)
USER_BUG_LOG = (
    "Traceback (most recent call last):\n"
    '  File "/home/ana/train.py", line 88, in main\n'
    '    y = batch["label"]\n'
    "KeyError: 'label'\n"
)
BENIGN_ENTRY = Entry.model_validate(
    entry_dict(
        "torch-typedstorage-deprecated",
        kind="benign",
        title="TypedStorage is deprecated (harmless warning)",
        when_it_matters=["After an upgrade that removes TypedStorage, when the calling library breaks."],
        fix=["Filter it: warnings.filterwarnings('ignore', message='TypedStorage is deprecated')."],
    )
)


class VerdictEngine(FakeEngine):
    """The fake engine, but with the two rule-decided verdicts the real engine gives these logs."""

    def diagnose(self, report: Report) -> Diagnosis:
        if "TypedStorage is deprecated" in report.text:
            self.completed += 1
            hit = Candidate(id=BENIGN_ENTRY.id, title=BENIGN_ENTRY.title, score=1.0, confidence=0.97, why=Why(), entry=BENIGN_ENTRY)
            return Diagnosis(verdict="benign", confidence=0.97, results=(hit,), kind=report.kind)
        if "KeyError: 'label'" in report.text:
            nearest = super().diagnose(report).results
            frame = UserFrame(file="/home/ana/train.py", line=88, function="main", exception="KeyError", message="'label'")
            return Diagnosis(verdict="user-code", confidence=0.1, results=nearest, kind=report.kind, user_frame=frame)
        return super().diagnose(report)


@pytest.fixture(scope="module")
def fake_engine() -> VerdictEngine:
    return VerdictEngine()


def test_passive_channel_stays_quiet_on_benign_and_user_code(make_app, fake_slack, fake_engine):
    app = make_app(passive_channels=[p.CHANNEL])
    from tests.fakes.slack_harness import dispatch

    before = fake_engine.completed
    assert report_from_text(WARNING_LOG).kind == report_from_text(USER_BUG_LOG).kind == "log"  # passive reads logs
    dispatch(app, p.event_body(p.message(WARNING_LOG)))
    dispatch(app, p.event_body(p.message(USER_BUG_LOG)))
    fake_slack.wait_for(lambda: fake_engine.completed >= before + 2, what="both logs diagnosed")
    assert not fake_slack.calls_to("chat.postMessage") and not fake_slack.calls_to("chat.update")


@pytest.mark.parametrize(
    ("log", "header", "fallback"),
    [
        (WARNING_LOG, "Harmless: TypedStorage is deprecated", "Harmless: TypedStorage"),
        (USER_BUG_LOG, "Looks like a bug in your code", "Looks like a bug in your code: train.py:88, KeyError: 'label'"),
    ],
)
def test_a_mention_gets_the_benign_or_user_code_answer(make_app, fake_slack, log, header, fallback):
    from tests.fakes.slack_harness import dispatch

    app = make_app(passive_channels=[p.CHANNEL])
    dispatch(app, p.event_body(p.mention(log)))
    update = fake_slack.wait_calls("chat.update")[0]
    blocks = update.args["blocks"]
    if isinstance(blocks, str):
        import json

        blocks = json.loads(blocks)
    assert blocks[0]["type"] == "header" and blocks[0]["text"]["text"].startswith(header)
    assert update.args["text"].startswith(fallback)
    action_ids = [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert "feedback_helpful" in action_ids  # the feedback buttons stay
    assert slack_limits.violations(blocks) == []
