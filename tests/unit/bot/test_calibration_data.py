"""Calibration runs Engine.diagnose (the production path) and fits on negatives too."""

from __future__ import annotations

import json

import pytest

from bot.calibration_data import FOLDS, CaseResult, Text, cross_validate, fit_calibration, fold_of, run, texts
from tests.fakes.kbfactory import FIXTURE_ENTRIES, write_kb
from tests.fakes.kbfactory import BENIGN, USER_BUG


@pytest.fixture(scope="module")
def engine(tmp_path_factory, embedder):
    from bot.diagnose import Engine
    from kb.load import load_kb

    root = write_kb(tmp_path_factory.mktemp("kb"), [*FIXTURE_ENTRIES, BENIGN])
    return Engine(load_kb(root), embedder=embedder, index_dir=tmp_path_factory.mktemp("idx") / "index")


@pytest.fixture(scope="module")
def negatives(tmp_path_factory):
    folder = tmp_path_factory.mktemp("neg")
    cases = {
        "neg-user": (USER_BUG, "log", "user-code"),
        "neg-healthy": ("node01:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nnode01:1:1 [0] NCCL INFO Using network Socket\n", "log", "healthy"),
        "neg-offtopic": ("how do I center a div in CSS?", "question", "offtopic"),
    }
    for name, (text, kind, negative) in cases.items():
        (folder / f"{name}.yaml").write_text(json.dumps({"text": text, "kind": kind, "label": "none", "source": "composed", "negative": negative}))
    return folder


def test_texts_cover_positives_benign_samples_offtopic_and_negatives(engine, negatives):
    items = texts(engine, (), negatives)
    by_group = {t.group for t in items}
    assert {"cuda-oom-activations-batch-too-large", BENIGN["id"], "negative:neg-user", "offtopic:0"} <= by_group
    benign = [t for t in items if t.group == BENIGN["id"]]
    assert benign and all(t.negative for t in benign)  # a failure answer on a harmless warning is wrong
    assert all(len(t.leave_out) == 1 for t in items if t.group in {e["id"] for e in FIXTURE_ENTRIES})


def test_rule_decided_texts_give_no_rows(engine, negatives):
    items = [t for t in texts(engine, (), negatives) if t.group in (BENIGN["id"], "negative:neg-user", "cuda-oom-activations-batch-too-large")]
    results = run(engine, items, ("hybrid",))["hybrid"]
    verdicts = {r.source.group: r.verdict for r in results}
    assert verdicts[BENIGN["id"]] == "benign" and verdicts["negative:neg-user"] == "user-code"
    assert all(not r.rows for r in results if r.preempted)
    oom = [r for r in results if r.source.group == "cuda-oom-activations-batch-too-large" and r.source.text.startswith("torch.")]
    assert oom[0].rows[0][1] is True  # its own entry ranks first on its own sample


def test_cross_validation_scores_each_fold_with_a_model_that_did_not_see_it():
    vector_right, vector_wrong = (1.0, 1.0, 1.0, 0.3, 0.8, 1.0, 0.0, 1.0), (0.0, 0.0, 0.0, 0.1, 0.3, 1.0, 0.0, 0.0)
    results = []
    for k in range(40):
        results.append(CaseResult(Text(f"entry-{k}", "t", frozenset({"x"})), "match", ((vector_right, True), (vector_wrong, False))))
        results.append(CaseResult(Text(f"negative:{k}", "t", frozenset()), "abstain", ((vector_wrong, False),)))
    assert len({fold_of(r.source.group) for r in results}) == FOLDS
    figures = cross_validate(results)
    assert figures.positives == figures.negatives == 40
    assert figures.coverage == 1.0 and figures.false_answer_rate == 0.0 and figures.precision == 1.0


def test_fit_calibration_reports_held_out_figures(engine, negatives):
    fitted, report = fit_calibration(engine, (), negatives_dir=negatives, retrievers=("hybrid", "fingerprint"))
    assert set(fitted) == {"hybrid", "fingerprint"}
    assert "5-fold held-out" in report and "false answers on negatives" in report
    assert 0.2 <= fitted["hybrid"].threshold <= 0.95 and fitted["hybrid"].fitted_on > 10


def test_threshold_weighs_negatives_like_the_fit():
    import numpy as np

    from bot.calibration_data import choose_threshold

    # four right positives at 0.3, one at 0.6; one negative (always wrong) at 0.35
    conf = np.array([0.3, 0.3, 0.3, 0.3, 0.6, 0.35])
    right = np.array([True, True, True, True, True, False])
    assert choose_threshold(conf, right) <= 0.3  # unweighted: four right answers outweigh one wrong (4+1-3 > 1)
    weighted = choose_threshold(conf, right, None, np.array([1.0] * 5 + [10.0]))
    assert 0.35 < weighted <= 0.6  # a negative that counts ten times is not worth answering the 0.3 positives
