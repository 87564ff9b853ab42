"""Block Kit rendering stays inside Slack's limits and reads in §5b order."""

from __future__ import annotations

import json

import pytest

from bot.ingest import report_from_text
from bot.model import Candidate, Diagnosis, FingerprintHit, Triage, Why
from bot.render import blocks as render
from bot.render import slack_limits as lim
from tests.fakes import logs
from tests.fakes.engine import FakeEngine


@pytest.fixture(scope="module")
def engine() -> FakeEngine:
    return FakeEngine()


@pytest.fixture(scope="module")
def titles(engine) -> dict[str, str]:
    return {e.id: e.title for e in engine.entries()}


def _diagnose(engine, text):
    return engine.diagnose(report_from_text(text, slack=True))


def test_match_reads_verdict_evidence_fix_in_order(engine, titles):
    diagnosis = _diagnose(engine, logs.SHM_BUS_ERROR)
    message = render.render_diagnosis(diagnosis, ref="r1", titles=titles)
    assert lim.violations(message.blocks) == []
    kinds = [b["type"] for b in message.blocks]
    assert kinds[0] == "header" and kinds[1] == "context"
    text = json.dumps(message.blocks)
    assert text.index("confidence") < text.index("*Why:*") < text.index("*Fix:*") < text.index("*Confirm:*")
    assert "1. " in text and "Evidence" in text and "Why it matched" in text
    assert message.text.startswith(diagnosis.best.title)
    actions = {e["action_id"] for b in message.blocks for e in b.get("elements", []) if "action_id" in e}
    assert {render.ACTION_HELPFUL, render.ACTION_WRONG, render.ACTION_WHY} <= actions
    value = json.loads(
        next(
            e["value"]
            for b in message.blocks
            for e in b.get("elements", [])
            if e.get("action_id") == render.ACTION_WRONG
        )
    )
    assert value["ref"] == "r1" and value["top"][0] == diagnosis.best.id


def test_abstention_has_nearest_three_and_what_to_paste(engine):
    diagnosis = _diagnose(engine, logs.NO_MATCH)
    assert diagnosis.verdict == "abstain"
    message = render.render_diagnosis(diagnosis, ref="r2")
    assert lim.violations(message.blocks) == []
    assert message.blocks[0]["text"]["text"] == "No confident match"
    nearest = next(b for b in message.blocks if "Nearest entries" in b.get("text", {}).get("text", ""))
    assert nearest["text"]["text"].count("• ") == 3
    assert "Paste next" in json.dumps(message.blocks)
    assert message.text.startswith("No confident match")


def test_initiating_rank_is_shown_when_triage_found_one(engine):
    diagnosis = _diagnose(engine, logs.HOST_OOM)
    triaged = diagnosis.model_copy(
        update={"triage": Triage(summary="rank 17 on node02 ran out of host memory first; 63 ranks timed out")}
    )
    text = json.dumps(render.render_diagnosis(triaged, ref="r").blocks)
    assert "*Initiating:* rank 17 on node02" in text


def test_huge_inputs_are_clipped_within_limits(engine, titles):
    entry = engine.entry(logs.SHM_ENTRY)
    long_line = "x" * 10_000 + "```"
    hits = tuple(FingerprintHit(pattern="p" * 500, line=i, text=long_line) for i in range(1, 200))
    candidate = Candidate(
        id=entry.id, title=entry.title, score=9, confidence=0.9, why=Why(fingerprints=hits), entry=entry
    )
    big_entry = entry.model_copy(update={"title": "T" * 150, "fix": tuple("step " * 200 for _ in range(40))})
    big = candidate.model_copy(update={"entry": big_entry})
    diagnosis = Diagnosis(verdict="match", confidence=0.9, results=(big,) * 5)
    message = render.render_diagnosis(diagnosis, ref="r" * 300, titles=titles)
    assert lim.violations(message.blocks) == []
    why = render.render_why(diagnosis.to_json(), entry.id)
    assert lim.violations(why.blocks) == []


def test_entry_home_siblings_modal_within_limits(engine, titles):
    entry = engine.entry(logs.SHM_ENTRY)
    assert lim.violations(render.render_entry(entry, titles=titles).blocks) == []
    siblings = [e for e in engine.entries() if e.id != entry.id][:7]
    assert lim.violations(render.render_siblings(entry, siblings).blocks) == []
    recent = [render.RecentDiagnosis("2026-12-02 10:00", "t" * 500, "match", 0.9, "C1")] * 200
    home = render.render_home(engine.entries(), recent)
    assert lim.violations(home["blocks"], limit=lim.MAX_BLOCKS_HOME) == []
    modal = render.render_feedback_modal([(e.id, e.title) for e in engine.entries()][:9], "m" * 5000)
    assert len(modal["private_metadata"]) <= lim.MAX_PRIVATE_METADATA
    options = modal["blocks"][1]["element"]["options"]
    assert len(options) == 6 and options[-1]["text"]["text"] == "None of these"  # five runner-ups at most
    assert lim.violations(modal["blocks"]) == []
    many = render.render_entry_options(engine.entries(), "")
    assert len(many) <= lim.MAX_OPTIONS and all(len(o["text"]["text"]) <= lim.MAX_OPTION_TEXT for o in many)


def test_share_button_and_strip():
    message = render.with_share_button(render.Message(text="t", blocks=[render.section("x")]), {"ref": "abc"})
    assert message.blocks[-1]["elements"][0]["action_id"] == render.ACTION_SHARE
    assert render.strip_interactive(message).blocks == [render.section("x")]


def test_why_without_stored_record_says_so():
    assert "no longer stored" in render.render_why({}, "x").text


def test_limits_helpers():
    assert lim.clip("abcdef", 4) == "abc…" and lim.clip("abc", 4) == "abc"
    clipped = lim.clip_lines(["aaa", "bbb", "ccc"], 9)
    assert clipped == "aaa\nbbb\n…" and len(clipped) <= 9
    block = lim.code_block(["```", "ok"])
    assert block.count("```") == 2
    blocks = [render.section(str(i)) for i in range(60)] + [render.context("why")]
    fitted = lim.fit_blocks(blocks)
    assert len(fitted) == lim.MAX_BLOCKS_MESSAGE and fitted[-1]["type"] == "context"
    assert lim.violations([{"type": "header", "text": {"type": "plain_text", "text": "x" * 151}}])
    assert render.escape("a<b>&c") == "a&lt;b&gt;&amp;c"
