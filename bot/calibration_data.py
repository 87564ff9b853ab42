"""Collect labelled (features, correct) rows and fit the confidence model and abstention threshold.

Rows come from the KB's own samples and questions, each ranked with its own dense vector left out,
from composed off-topic texts (index/offtopic.yaml: every answer to them is wrong),
and from eval case directories given on the command line (development data; never bundled).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import yaml

from bot.diagnose import RETRIEVERS, Engine
from bot.evaluate import load_cases
from bot.ingest import normalize, report_from_text
from index.calibrate import CALIBRATION_FILE, Calibration, fit
from index.dense import dense_texts
from index.fuse import Features, candidate_features

OFFTOPIC = CALIBRATION_FILE.with_name("offtopic.yaml")
WRONG_ANSWER_COST = 2.0  # a confident wrong answer costs twice what an abstention does


def _rows_for(
    engine: Engine, retriever: str, text: str, kind: str, accepted: frozenset[str], skip: frozenset[int] = frozenset()
):
    ranked = engine.rank(text, kind=kind, skip_vectors=skip, retriever=retriever)
    rows: list[tuple[Features, bool, bool]] = []  # (features, correct, is_top)
    for position in range(min(2, len(ranked.order))):
        index = int(ranked.order[position])
        features = candidate_features(
            ranked.scores, ranked.strong, ranked.fused, index, dense_used=ranked.dense_used, question=kind == "question"
        )
        rows.append((features, engine.entries()[index].id in accepted, position == 0))
    return rows


def collect(engine: Engine, directories: Sequence[Path], retriever: str = "hybrid") -> list[tuple[Features, bool, bool]]:
    engine.ensure_index()
    vector_of = {(t.entry, t.kind, t.ordinal): v for v, t in enumerate(dense_texts(engine.entries()))}
    rows: list[tuple[Features, bool, bool]] = []
    for index, entry in enumerate(engine.entries()):
        own = frozenset({entry.id})
        for k, sample in enumerate(entry.samples):
            rows += _rows_for(engine, retriever, normalize(sample), "log", own, frozenset({vector_of[(index, "sample", k)]}))
        for k, question in enumerate(entry.questions):
            rows += _rows_for(engine, retriever, question, "question", own, frozenset({vector_of[(index, "question", k)]}))
    offtopic = yaml.safe_load(OFFTOPIC.read_text())
    for question in offtopic["questions"]:
        rows += _rows_for(engine, retriever, question, "question", frozenset())
    for log in offtopic["logs"]:
        report = report_from_text(log)
        rows += _rows_for(engine, retriever, report.text, report.kind, frozenset())
    for directory in directories:
        for case in load_cases(directory):
            report = report_from_text(case.text)
            rows += _rows_for(engine, retriever, report.text, report.kind, case.accepted)
    return rows


def choose_threshold(confidences: np.ndarray, correct: np.ndarray) -> float:
    best, best_utility = 0.5, -np.inf
    for threshold in np.linspace(0.2, 0.9, 71):
        answered = confidences >= threshold
        utility = float(np.sum(correct & answered) - WRONG_ANSWER_COST * np.sum(~correct & answered))
        if utility > best_utility:
            best, best_utility = float(threshold), utility
    return best


def fit_retriever(engine: Engine, directories: Sequence[Path], retriever: str) -> tuple[Calibration, str]:
    rows = collect(engine, directories, retriever)
    calibration = fit([r[0] for r in rows], [r[1] for r in rows])
    top = [(calibration.confidence(f), ok) for f, ok, is_top in rows if is_top]
    conf = np.array([c for c, _ in top])
    correct = np.array([ok for _, ok in top], dtype=bool)
    threshold = choose_threshold(conf, correct)
    calibration = Calibration(calibration.coef, calibration.intercept, threshold, len(rows))
    answered = conf >= threshold
    report = (
        f"{retriever:12} fitted on {len(rows)} rows ({len(top)} cases); top-1 right {correct.mean():.3f}; "
        f"threshold {threshold:.2f}: answered {answered.mean():.3f}, "
        f"precision {correct[answered].mean() if answered.any() else 0:.3f}"
    )
    return calibration, report


def fit_calibration(engine: Engine, directories: Sequence[Path]) -> tuple[dict[str, Calibration], str]:
    fitted: dict[str, Calibration] = {}
    lines: list[str] = []
    for retriever in RETRIEVERS:
        fitted[retriever], line = fit_retriever(engine, directories, retriever)
        lines.append(line)
    return fitted, "\n".join(lines)
