"""Eval scoring: negatives (label: none) are right when no failure entry is answered."""

from __future__ import annotations

import json

import pytest

from bot.evaluate import Case, Outcome, load_cases, metrics, negative_breakdown, threshold_table


def _cases():
    return [
        Case("p1", "log", "log", "a-entry"),
        Case("p2", "log", "log", "b-entry", also=("c-entry",)),
        Case("n1", "warn", "log", "none", negative="benign-warning"),
        Case("n2", "healthy", "log", "none", negative="healthy"),
        Case("n3", "bug", "log", "none", negative="user-code"),
        Case("n4", "css?", "question", "none", negative="offtopic"),
    ]


def _outcomes():
    return [
        Outcome(["a-entry", "x"], True, 10.0, "match", 0.95),  # right, answered
        Outcome(["x", "c-entry"], False, 20.0, "abstain", 0.40),  # top-3 only, abstained
        Outcome(["benign-1"], False, 5.0, "benign", 0.0),  # right: harmless
        Outcome(["y"], True, 5.0, "match", 0.85),  # false answer on a healthy log
        Outcome(["z"], False, 5.0, "user-code", 0.0),  # right: user code
        Outcome(["w"], False, 5.0, "abstain", 0.30),  # right: abstained
    ]


def test_negatives_are_scored_apart_from_positives():
    m = metrics(_cases(), _outcomes())
    assert m["positives"] == 2 and m["negatives"] == 4
    assert m["top1"] == 0.5 and m["top3"] == 1.0 and m["mrr"] == pytest.approx(0.75)
    assert m["answered"] == 0.5 and m["precision_answered"] == 1.0
    assert m["false_answer_rate"] == 0.25
    assert m["precision_answered_all"] == 0.5  # one right answer, one false answer on a negative


def test_threshold_table_trades_coverage_for_precision():
    rows = {r["threshold"]: r for r in threshold_table(_cases(), _outcomes(), (0.3, 0.9))}
    assert rows[0.3] == {"threshold": 0.3, "coverage": 1.0, "precision": pytest.approx(1 / 4), "false_answer_rate": 0.5}
    assert rows[0.9] == {"threshold": 0.9, "coverage": 0.5, "precision": 1.0, "false_answer_rate": 0.0}


def test_breakdown_by_kind_of_negative():
    b = negative_breakdown(_cases(), _outcomes())
    assert b["healthy"] == {"cases": 1, "match": 1} and b["benign-warning"] == {"cases": 1, "benign": 1}


def test_load_cases_reads_the_negative_kind(tmp_path):
    (tmp_path / "n.yaml").write_text(json.dumps({"text": "t", "kind": "log", "label": "none", "source": "composed", "negative": "healthy"}))
    (case,) = load_cases(tmp_path)
    assert case.is_negative and case.negative == "healthy" and case.accepted == frozenset()
