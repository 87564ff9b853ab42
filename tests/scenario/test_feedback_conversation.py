"""A scripted Slack conversation turned into knowledge: three answers, 👍 on one, 👎 with a pick on
another, 👎 with "None of these" on the third; then `traindoc feedback export` writes exactly the
expected cases and `traindoc stats` counts them (the app and the CLI share one SQLite file)."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from bot.cli import app as cli
from bot.render import blocks as render
from bot.slack.app import create_app
from bot.slack.metrics import Metrics
from bot.store.base import NONE_OF_THESE
from bot.store.sql import SqlStore
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.slack_harness import dispatch, test_settings


def _buttons(blocks):
    return {e["action_id"]: e for b in blocks for e in b.get("elements", []) if "action_id" in e}


def _submit(app, fake_slack, button, values):
    opened = len(fake_slack.calls_to("views.open"))
    dispatch(app, p.block_action(render.ACTION_WRONG, button["value"], response_url=fake_slack.response_url()), form=True)
    view = fake_slack.wait_calls("views.open", opened + 1)[-1].args["view"]  # the listener runs after the ack
    dispatch(app, p.view_submission(render.FEEDBACK_MODAL, values, view["private_metadata"]), form=True)
    return view


def test_conversation_to_cases_and_stats(fake_slack, fake_engine, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'traindoc.db'}"
    store = SqlStore(url)
    app = create_app(test_settings(fake_slack), store=store, engine=fake_engine, metrics=Metrics())
    answers = []
    for k, text in enumerate((logs.SHM_BUS_ERROR, logs.HOST_OOM, logs.SHM_BUS_ERROR.replace("Bus error", "Bus error (again)"))):
        dispatch(app, p.event_body(p.mention(text, ts=f"1700000000.00000{k}")))
        answers.append(_buttons(fake_slack.wait_calls("chat.update", k + 1)[k].args["blocks"]))

    # 👍 on the first answer
    dispatch(app, p.block_action(render.ACTION_HELPFUL, answers[0][render.ACTION_HELPFUL]["value"], response_url=fake_slack.response_url()), form=True)
    # 👎 on the second, picking another candidate from the modal
    view = _submit(app, fake_slack, answers[1][render.ACTION_WRONG], {})
    candidates = view["blocks"][1]["element"]["options"]
    picked = next(o for o in candidates if o["value"] not in (NONE_OF_THESE, logs.OOM_ENTRY, logs.SHM_ENTRY))
    _submit(app, fake_slack, answers[1][render.ACTION_WRONG], {render.BLOCK_PICK: {"value": {"type": "static_select", "selected_option": picked}}})
    # 👎 on the third: none of these, with what it really was
    _submit(
        app,
        fake_slack,
        answers[2][render.ACTION_WRONG],
        {
            render.BLOCK_PICK: {"value": {"type": "static_select", "selected_option": {"value": NONE_OF_THESE}}},
            render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": "our NFS mount was full"}},
        },
    )
    fake_slack.wait_for(lambda: len(store.feedback_since(0)) == 3, what="three feedback rows")
    store.close()

    monkeypatch.setenv("TRAINDOC_DATABASE_URL", url)
    monkeypatch.setattr("bot.cli.common.kb", lambda: _FakeKB(fake_engine))
    out = tmp_path / "cases"
    runner = CliRunner()
    exported = runner.invoke(cli, ["feedback", "export", str(out), "--helpful"])
    assert exported.exit_code == 0, exported.output
    cases = {path.name: yaml.safe_load(path.read_text()) for path in out.glob("*.yaml")}
    assert len(cases) == 3
    labels = sorted(c["label"] for c in cases.values())
    assert labels == sorted([logs.SHM_ENTRY, picked["value"], "none"])
    none_case = next(c for c in cases.values() if c["label"] == "none")
    assert none_case["note"] == "our NFS mount was full" and "Bus error (again)" in none_case["text"]
    picked_case = next(c for c in cases.values() if c["label"] == picked["value"])
    assert picked_case["answered"] == logs.OOM_ENTRY and picked_case["kind"] == "log"

    stats = runner.invoke(cli, ["stats", "--json"])
    figures = json.loads(stats.stdout)
    assert figures["diagnoses"] == 3
    assert figures["entries"][logs.SHM_ENTRY]["helpful"] == 1
    assert {row["entry"] for row in figures["most_corrected"]} == {logs.OOM_ENTRY, logs.SHM_ENTRY}


class _FakeKB:
    """The fake engine's entries as the CLI's knowledge base."""

    def __init__(self, engine):
        self.entries = engine.entries()

    def ids(self):
        return [e.id for e in self.entries]
