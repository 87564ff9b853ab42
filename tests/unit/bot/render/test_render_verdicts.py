"""Rendering of the benign and user-code verdicts and of the folded harmless line: Block Kit within
Slack's limits, terminal, and JSON (DESIGN §4b)."""

from __future__ import annotations

from rich.console import Console

from bot.model import Candidate, Diagnosis, FingerprintHit, UserFrame, Why
from bot.render import blocks as render
from bot.render import slack_limits as lim
from bot.render.terminal import render as render_terminal
from kb.schema import Entry
from tests.fakes.kbfactory import entry_dict

BENIGN = Entry.model_validate(
    entry_dict(
        "torch-typedstorage-deprecated",
        kind="benign",
        title="TypedStorage is deprecated (harmless warning)",
        root_cause=["Some library still calls tensor.storage(). Nothing is wrong with the run."],
        fix=["Filter the warning with warnings.filterwarnings."],
        when_it_matters=["After an upgrade that removes TypedStorage."],
    )
)
FAILURE = Entry.model_validate(entry_dict("cuda-oom-activations-batch-too-large", category="memory", title="CUDA out of memory"))


def _candidate(entry: Entry, line_text: str = "UserWarning: TypedStorage is deprecated", *, hits: int = 1) -> Candidate:
    why = Why(fingerprints=tuple(FingerprintHit(pattern="TypedStorage is deprecated", line=n + 2, text=line_text) for n in range(hits)))
    return Candidate(id=entry.id, title=entry.title, score=1.0, confidence=0.96, why=why, entry=entry)


def _text(renderable) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_benign_block_kit_says_harmless_and_never_root_cause():
    d = Diagnosis(verdict="benign", confidence=0.96, results=(_candidate(BENIGN),))
    msg = render.render_diagnosis(d, ref="r1")
    assert msg.blocks[0]["text"]["text"] == "Harmless: TypedStorage is deprecated (harmless warning)"
    body = str(msg.blocks)
    assert "When it would matter" in body and "To silence it" in body
    assert "*Why:*" not in body and "*Fix:*" not in body and "Confirm" not in body
    assert {e["action_id"] for b in msg.blocks if b["type"] == "actions" for e in b["elements"]} == {"feedback_helpful", "feedback_wrong"}
    assert msg.text.startswith("Harmless: ") and lim.violations(msg.blocks) == []


def test_user_code_block_kit_points_at_the_frame():
    frame = UserFrame(file="/home/ana/proj/train.py", line=88, function="main", exception="KeyError", message="'label'")
    d = Diagnosis(verdict="user-code", confidence=0.1, results=(_candidate(FAILURE, "x"),), user_frame=frame)
    msg = render.render_diagnosis(d, ref="r2")
    assert msg.text == "Looks like a bug in your code: train.py:88, KeyError: 'label'"
    assert "`/home/ana/proj/train.py:88` in `main`" in str(msg.blocks)
    assert lim.violations(msg.blocks) == []
    assert "Looks like a bug in your code: train.py:88, KeyError: 'label'" in _text(render_terminal(d))


def test_a_refused_command_line_is_called_a_command_line_mistake_not_a_code_bug():
    frame = UserFrame(file="train.py", line=0, function="command-line arguments", exception="usage error", message="unrecognized arguments: --epoch 10", kind="usage")
    d = Diagnosis(verdict="user-code", confidence=0.0, results=(), user_frame=frame)
    msg = render.render_diagnosis(d, ref="r3")
    assert msg.text == "Looks like a mistake in the command line: train.py, usage error: unrecognized arguments: --epoch 10"
    assert "argument parser" in str(msg.blocks) and "innermost frame" not in str(msg.blocks)
    assert lim.violations(msg.blocks) == []
    terminal = _text(render_terminal(d))
    assert "Looks like a mistake in the command line: train.py, usage error" in terminal
    assert "train.py:0" not in terminal


def test_huge_verdicts_stay_within_limits():
    long = "x" * 5000
    big = Entry.model_validate(
        entry_dict("huge-benign", kind="benign", title="T" * 150, root_cause=[long], fix=[long] * 30, when_it_matters=[long] * 30)
    )
    d = Diagnosis(verdict="benign", confidence=0.9, results=tuple(_candidate(big, long, hits=40) for _ in range(5)))
    assert lim.violations(render.render_diagnosis(d, ref="r" * 3000).blocks) == []
    frame = UserFrame(file="/" + "d/" * 2000 + "a.py", line=1, function="f" * 500, exception="ValueError", message=long)
    d = Diagnosis(verdict="user-code", confidence=0.0, results=(), user_frame=frame, harmless=(_candidate(big),) * 5)
    assert lim.violations(render.render_diagnosis(d, ref="r").blocks) == []


def test_a_match_folds_harmless_lines_into_one_line_everywhere():
    d = Diagnosis(verdict="match", confidence=0.93, results=(_candidate(FAILURE, "CUDA out of memory"),), harmless=(_candidate(BENIGN),))
    msg = render.render_diagnosis(d, ref="r3")
    folded = [b for b in msg.blocks if "Also in this log (harmless)" in str(b)]
    assert len(folded) == 1 and "TypedStorage is deprecated" in str(folded[0])
    assert msg.blocks[0]["text"]["text"] == "CUDA out of memory"
    terminal = _text(render_terminal(d))
    assert "Also in this log (harmless): TypedStorage is deprecated" in terminal
    assert d.to_json()["harmless"] == [{"id": BENIGN.id, "title": BENIGN.title}]


def test_benign_terminal_and_json():
    d = Diagnosis(verdict="benign", confidence=0.96, results=(_candidate(BENIGN),))
    terminal = _text(render_terminal(d))
    assert "Harmless: TypedStorage is deprecated" in terminal and "When it would matter" in terminal
    out = d.to_json()
    assert out["verdict"] == "benign" and out["results"][0]["id"] == BENIGN.id and "user_frame" not in out


def test_slack_and_terminal_draw_one_view_of_the_runner_up():
    noise = _candidate(BENIGN).model_copy(update={"confidence": 0.01})
    d = Diagnosis(verdict="match", confidence=0.93, results=(_candidate(FAILURE, "CUDA out of memory"), noise))
    assert "runner-up" not in str(render.render_diagnosis(d, ref="r4").blocks)
    assert "runner-up" not in _text(render_terminal(d))
    shown = d.model_copy(update={"results": (d.results[0], noise.model_copy(update={"confidence": 0.4}))})
    assert "runner-up" in str(render.render_diagnosis(shown, ref="r5").blocks)
    assert "runner-up" in _text(render_terminal(shown))
