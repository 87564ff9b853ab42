"""Answers and feedback read back: `feedback export` writes eval cases, `stats` counts them, and
`rematch` lists exactly the answers a knowledge-base change altered, posting once per thread."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import yaml
from typer.testing import CliRunner

from bot.cli import app
from bot.ingest import report_from_text
from bot.slack.records import record_answer
from bot.store.base import NONE_OF_THESE, Feedback
from bot.store.sql import SqlStore
from tests.fakes.slack_api import BOT_TOKEN, FakeSlackAPI
from tests.fakes.kbfactory import FIXTURE_ENTRIES, entry_dict, write_kb

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB\n"
WATCHDOG = (
    "[rank3]:[E1202 12:13:11.123456 4321 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=8812, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
)
LEASE = 'Traceback (most recent call last):\n  File "/opt/acme/launch/leases.py", line 88, in acquire\n' "acme.launch.LeaseError: lease server refused lease 0x7f3a11c2 for pool h100 after 30 s\n"


@pytest.fixture()
def world(fixture_engine, tmp_path, monkeypatch):
    """Three answered messages in two channels, then 👍, 👎 with a pick, 👎 with "none of these"."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    monkeypatch.setenv("TRAINDOC_DATABASE_URL", url)
    monkeypatch.setenv("TRAINDOC_INDEX_DIR", str(tmp_path / "index"))
    store = SqlStore(url)
    deps = SimpleNamespace(store=store)
    records = []
    for channel, ts, text in (("C1", "100.1", OOM), ("C1", "100.2", WATCHDOG), ("C2", "200.1", LEASE)):
        report = report_from_text(text)
        records.append(
            record_answer(deps, fixture_engine.diagnose(report), team_id="T1", channel=channel, user="U1", origin="mention", message_ts=ts, query=report.text)
        )
    oom, watchdog, lease = records
    store.add_feedback(Feedback(diagnosis_id=oom.id, helpful=True, predicted_id=oom.entry_id))
    store.add_feedback(Feedback(diagnosis_id=watchdog.id, helpful=False, predicted_id=watchdog.entry_id, correct_id="cuda-oom-activations-batch-too-large"))
    store.add_feedback(Feedback(diagnosis_id=lease.id, helpful=False, predicted_id=lease.entry_id, correct_id=NONE_OF_THESE, note="our lease server"))
    store.close()
    return SimpleNamespace(oom=oom, watchdog=watchdog, lease=lease, tmp=tmp_path)


def _cli(*args):
    return CliRunner().invoke(app, list(args))


def test_export_writes_one_case_per_corrected_diagnosis_and_is_idempotent(world, fixture_kb_dir, monkeypatch):
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(fixture_kb_dir))
    out = world.tmp / "cases"
    result = _cli("feedback", "export", str(out))
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in out.glob("*.yaml"))
    assert files == sorted([f"feedback-{world.watchdog.id}.yaml", f"feedback-{world.lease.id}.yaml"])
    watchdog = yaml.safe_load((out / f"feedback-{world.watchdog.id}.yaml").read_text())
    assert watchdog["label"] == "cuda-oom-activations-batch-too-large" and "Watchdog caught" in watchdog["text"]
    lease = yaml.safe_load((out / f"feedback-{world.lease.id}.yaml").read_text())
    assert lease["label"] == "none" and lease["note"] == "our lease server" and lease["kind"] == "log"
    again = _cli("feedback", "export", str(out))
    assert "0 new or changed" in again.stdout
    with_helpful = _cli("feedback", "export", str(out), "--helpful")
    assert (out / f"feedback-{world.oom.id}.yaml").exists() and "1 new or changed" in with_helpful.stdout
    from bot.evaluate import load_cases

    assert {c.label for c in load_cases(out)} == {"none", "cuda-oom-activations-batch-too-large"}


def test_stats_count_answers_feedback_and_corrections(world, fixture_kb_dir, monkeypatch):
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(fixture_kb_dir))
    result = _cli("stats", "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["diagnoses"] == 3
    assert figures["entries"]["cuda-oom-activations-batch-too-large"]["helpful"] == 1
    assert figures["most_corrected"][0] == {"entry": "nccl-watchdog-timeout", "wrong": 1, "corrected_to": {"cuda-oom-activations-batch-too-large": 1}}
    table = _cli("stats")
    assert table.exit_code == 0 and "Most often corrected" in table.stdout


def test_rematch_lists_exactly_the_changed_answers_and_posts_once_per_thread(world, tmp_path, monkeypatch):
    changed_kb = write_kb(
        tmp_path / "kb2",
        [
            *FIXTURE_ENTRIES,
            entry_dict(
                "acme-lease-refused",
                category="launch-and-elastic",
                title="Acme lease server refused the GPU lease",
                fingerprints=[{"pattern": r"LeaseError: lease server refused lease", "strength": "strong"}],
                samples=[LEASE, LEASE.replace("h100", "a100")],
                questions=["why was my GPU lease refused?"],
            ),
        ],
    )
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(changed_kb))
    result = _cli("rematch", "--json")
    assert result.exit_code == 0, result.output
    changes = json.loads(result.stdout)["changed"]
    assert [(c["diagnosis"], c["now"]) for c in changes] == [(world.lease.id, "acme-lease-refused")]
    with FakeSlackAPI() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("TRAINDOC_SLACK_API_URL", slack.base_url)
        first = _cli("rematch", "--post", "--json")
        assert json.loads(first.stdout)["posted"] == 1
        posts = slack.calls_to("chat.postMessage")
        assert len(posts) == 1 and posts[0].args["channel"] == "C2" and posts[0].args["thread_ts"] == "200.1"
        assert "Acme lease server refused" in posts[0].args["text"]
        second = _cli("rematch", "--post", "--json")
        assert json.loads(second.stdout)["posted"] == 0 and len(slack.calls_to("chat.postMessage")) == 1


def test_since_is_validated(world):
    result = _cli("stats", "--since", "soon")
    assert result.exit_code == 2 and "7d" in result.stderr
