"""No secret of the corpus reaches Slack posts, "Why this match", stored rows, logs or --json.

The real app runs against the fake Slack Web API with a SQLite store on disk; the fake engine quotes
every fingerprint line it matched (as the real one does in "Why this match"), and each corpus line
sits on such a line, so anything the redaction missed would travel all the way out.
"""

from __future__ import annotations

import json
import logging
import sqlite3

from typer.testing import CliRunner

from bot.render import blocks as render
from bot.slack.app import create_app
from bot.slack.metrics import Metrics
from bot.store.sql import SqlStore
from tests.fakes import slack_payloads as p
from tests.fakes.slack_harness import dispatch, test_settings
from tests.fakes.secret_corpus import ALL_SECRETS, CORPUS, ONE_LINE_KEY, PEM_CUT, PEM_FULL

FINGERPRINT_LINE = "RuntimeError: DataLoader worker (pid {n}) is killed by signal: Killed. "


def _paste() -> str:
    # an indented form is a line of its own (a .netrc or YAML line), the others follow the matched text
    lines = [
        FINGERPRINT_LINE.format(n=9000 + i) + ("\n" if form[:1].isspace() else "") + form
        for i, (form, _) in enumerate(CORPUS)
    ]
    return "Traceback (most recent call last):\n" + "\n".join(lines) + "\n" + PEM_CUT + PEM_FULL + ONE_LINE_KEY


def _leaks(text: str) -> list[str]:
    return [s for s in ALL_SECRETS if s in text]


def test_no_secret_reaches_slack_the_store_or_the_logs(fake_slack, fake_engine, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "traindoc.db"
    store = SqlStore(f"sqlite:///{db}")
    app = create_app(test_settings(fake_slack), store=store, engine=fake_engine, metrics=Metrics())
    paste = _paste()
    assert len(_leaks(paste)) == len(ALL_SECRETS)  # the input really carries every secret

    # pasted in a mention, and attached as a file
    dispatch(app, p.event_body(p.mention(paste)))
    url = fake_slack.add_file("run.log", paste.encode())
    dispatch(app, p.event_body(p.mention("", files=[p.slack_file("run.log", url)])))
    updates = fake_slack.wait_calls("chat.update", 2)
    blocks = updates[0].args["blocks"]
    assert "killed by signal" in str(blocks)  # the answer quotes the matched lines

    # "Why this match" rebuilt from the stored row
    why = next(
        e
        for b in blocks
        for e in b.get("elements", [])
        if isinstance(e, dict) and e.get("action_id") == render.ACTION_WHY
    )
    dispatch(app, p.block_action(render.ACTION_WHY, why["value"], response_url=fake_slack.response_url()), form=True)
    why_post = fake_slack.wait_calls("response_url")[0]
    assert "killed by signal" in str(why_post.args)

    assert _leaks(json.dumps([c.args for c in fake_slack.calls if c.method != "file"])) == []
    rows = sqlite3.connect(db).execute("SELECT * FROM sqlite_master").fetchall()
    dump = "\n".join(sqlite3.connect(db).iterdump())
    assert rows and "killed by signal" in dump and _leaks(dump) == []
    assert _leaks(caplog.text) == []


def test_no_secret_in_cli_json(tmp_path, fake_engine, monkeypatch):
    from bot import cli

    log = tmp_path / "run.log"
    log.write_text(_paste())
    monkeypatch.setattr("bot.cli.common.engine", lambda *a, **k: fake_engine)
    result = CliRunner().invoke(cli.app, ["diagnose", str(log), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert "killed by signal" in json.dumps(out) and _leaks(result.stdout) == []
