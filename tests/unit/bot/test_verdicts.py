"""The four verdicts on the production path (Engine.diagnose) over a small composed KB: benign
warnings, a failure winning over them, plain bugs in user code, and the JSON contract."""

from __future__ import annotations

import json

import pytest

from bot.ingest import report_from_text
from index.fusion import Features
from tests.fakes.kbfactory import BENIGN, FIXTURE_ENTRIES, OOM, TYPED_STORAGE, USER_BUG, write_kb


@pytest.fixture(scope="module")
def engine(tmp_path_factory, embedder):
    from bot.diagnose import Engine
    from kb.load import load_kb

    root = write_kb(tmp_path_factory.mktemp("kb"), [*FIXTURE_ENTRIES, BENIGN])
    return Engine(load_kb(root), embedder=embedder, index_dir=tmp_path_factory.mktemp("idx") / "index")


def test_a_log_of_only_a_harmless_warning_is_benign(engine):
    log = "Loading checkpoint shards: 100%|██████████| 4/4 [00:05<00:00,  1.31s/it]\n" + TYPED_STORAGE + "\n  return self.fget.__get__(instance, owner)()\n"
    d = engine.diagnose(report_from_text(log))
    assert d.verdict == "benign"
    assert [c.id for c in d.results] == ["torch-typedstorage-deprecated"]
    assert d.results[0].why.fingerprints[0].line == 2
    assert all(c.entry.kind == "benign" for c in d.results)


def test_every_sample_of_the_benign_entry_answers_benign(engine):
    for sample in BENIGN["samples"]:
        assert engine.diagnose(report_from_text(sample)).verdict == "benign"


def test_a_failure_with_strong_evidence_wins_and_the_warning_is_folded(engine):
    d = engine.diagnose(report_from_text(TYPED_STORAGE + "\nstep 10 loss 2.31\n" + OOM + "\n"))
    assert d.verdict == "match"
    assert d.results[0].id == "cuda-oom-activations-batch-too-large"
    assert "torch-typedstorage-deprecated" not in [c.id for c in d.results]  # never a root cause
    assert [c.id for c in d.harmless] == ["torch-typedstorage-deprecated"]
    assert d.to_json()["harmless"] == [{"id": "torch-typedstorage-deprecated", "title": BENIGN["title"]}]


def test_an_unexplained_exception_beside_a_warning_is_not_benign(engine):
    d = engine.diagnose(report_from_text(TYPED_STORAGE + "\n" + USER_BUG))
    assert d.verdict == "user-code"
    assert d.user_frame is not None and d.user_frame.headline() == "train.py:88, KeyError: 'label'"
    assert [c.id for c in d.harmless] == ["torch-typedstorage-deprecated"]


def test_a_plain_bug_in_user_code_is_user_code(engine):
    d = engine.diagnose(report_from_text("epoch 1 step 40\n" + USER_BUG))
    assert d.verdict == "user-code"
    out = d.to_json()
    assert out["verdict"] == "user-code"
    assert out["user_frame"] == {"file": "/home/ana/proj/train.py", "line": 88, "function": "main", "exception": "KeyError", "message": "'label'", "kind": "traceback"}
    assert all(r["id"] != "torch-typedstorage-deprecated" for r in out["results"])
    json.dumps(out)


def test_a_strong_failure_fingerprint_beats_a_user_frame(engine):
    log = 'Traceback (most recent call last):\n  File "/home/ana/proj/train.py", line 90, in main\n    loss.backward()\n' + OOM + "\n"
    d = engine.diagnose(report_from_text(log))
    assert d.verdict == "match" and d.results[0].id == "cuda-oom-activations-batch-too-large"
    assert d.user_frame is None


def test_a_question_quoting_the_warning_is_benign(engine):
    d = engine.diagnose(report_from_text("can I ignore this? UserWarning: TypedStorage is deprecated"))
    assert d.kind == "question" and d.verdict == "benign"
    assert d.to_json()["verdict"] == "benign"


def test_retriever_and_leave_out_run_the_same_path(engine):
    for retriever in ("hybrid", "fingerprint", "lexical", "dense"):
        d = engine.diagnose(report_from_text(TYPED_STORAGE), retriever=retriever, leave_out=frozenset({0}))
        assert d.verdict == "benign", retriever
    d = engine.diagnose(report_from_text(OOM), retriever="fingerprint")
    assert d.results[0].id == "cuda-oom-activations-batch-too-large" and len(d.results[0].features) == len(Features.NAMES)


DCP_WARNING = (
    "/opt/venv/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_saver.py:41: "
    "UserWarning: torch.distributed is disabled, unavailable or uninitialized, assuming the intent "
    "is to save in a single process.\n"
    "  dcp.save(state_dict, checkpoint_id=path)\n"
)


def test_a_log_of_only_warnings_abstains_however_close_an_entry_looks(engine):
    from bot.decide import WARNINGS_ONLY

    d = engine.diagnose(report_from_text(DCP_WARNING))
    assert d.kind == "log"
    assert d.verdict == "abstain"
    assert d.abstain_reason == WARNINGS_ONLY
    assert d.results and d.results[0].id == "roce-qp-timeout-during-checkpoint-save"  # still shown


def test_a_strong_error_line_beside_warnings_is_answered(engine):
    error = "node-2:881:902 [5] NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out\n"
    d = engine.diagnose(report_from_text(DCP_WARNING + error))
    assert d.verdict == "match"
    assert d.results[0].id == "roce-qp-timeout-during-checkpoint-save"


def test_a_log_that_says_nothing_went_wrong_abstains(engine):
    from bot.decide import NO_TROUBLE

    log = (
        "I1203 04:10:22.118000 5521 torch/distributed/checkpoint/state_dict_saver.py:140] dcp.save "
        "of step 4000 started\n"
        "I1203 04:10:58.904000 5521 torch/distributed/checkpoint/state_dict_saver.py:152] dcp.save "
        "of step 4000 finished in 36.8 s\n"
        "step 4010 loss 1.884\n"
    )
    d = engine.diagnose(report_from_text(log))
    assert d.kind == "log" and d.verdict == "abstain"
    assert d.abstain_reason == NO_TROUBLE


def test_a_script_refusing_its_command_line_is_user_code_not_a_failure(engine):
    log = "usage: finetune.py [-h] --output_dir OUTPUT_DIR\nfinetune.py: error: the following arguments are required: --output_dir\n"
    d = engine.diagnose(report_from_text(log))
    assert d.kind == "log"
    assert d.verdict == "user-code"
    assert d.user_frame is not None and d.user_frame.kind == "usage"
    assert d.to_json()["user_frame"]["message"] == "the following arguments are required: --output_dir"
