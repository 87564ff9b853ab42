"""Fit the confidence model and the abstention threshold on what production sees.

Every text goes through `Engine.diagnose` (triage, match, decide), exactly as `traindoc diagnose`
runs it; a KB sample or question is diagnosed with its own dense vector left out. Texts:

- positives: the samples and questions of every failure entry (right answer: that entry), and
  any eval directories given on the command line (development data, never bundled);
- negatives, where every failure answer is wrong: the samples and questions of benign entries,
  the composed negative set (index/negatives/*.yaml, `label: none`) and index/offtopic.yaml.

Texts that a rule decides before the threshold (harmless warnings, plain bugs in user code) give
no rows to the fit: the confidence never decides them. The figures reported are cross-validated:
cases are split into folds by group (an entry's texts, one negative file) and each fold is scored
by a model fitted without it, so the false-answer rate on negatives is not measured on the rows
that fitted it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from bot.diagnose import RETRIEVERS, Engine
from bot.evaluate import load_cases
from bot.ingest import normalize, report_from_text
from index.calibration import CALIBRATION_FILE, Calibration, fit
from index.dense import dense_texts

OFFTOPIC = CALIBRATION_FILE.with_name("offtopic.yaml")
NEGATIVES_DIR = CALIBRATION_FILE.with_name("negatives")
WRONG_ANSWER_COST = 3.0  # a confident wrong answer costs three times what an abstention does
FOLDS = 5
ROWS_PER_CASE = 2  # the top candidate (right or wrong) and the runner-up (usually wrong)


@dataclass(frozen=True)
class Text:
    """One input to diagnose, with what counts as a right answer."""

    group: str  # the fold key: texts of one entry or one negative file stay together
    text: str
    accepted: frozenset[str]  # empty for a negative
    leave_out: frozenset[int] = frozenset()
    question: bool = False

    @property
    def negative(self) -> bool:
        return not self.accepted


@dataclass(frozen=True)
class CaseResult:
    """What diagnose did with one text: rows for the fit, and what the verdict depends on."""

    source: Text
    verdict: str
    # (feature vector, right?) of the top candidates
    rows: tuple[tuple[tuple[float, ...], bool], ...]

    @property
    def preempted(self) -> bool:
        return self.verdict in ("benign", "user-code")


def texts(
    engine: Engine, directories: Sequence[Path] = (), negatives_dir: Path | None = NEGATIVES_DIR
) -> list[Text]:
    vector_of = {
        (t.entry, t.kind, t.ordinal): v for v, t in enumerate(dense_texts(engine.entries()))
    }
    out: list[Text] = []
    for index, entry in enumerate(engine.entries()):
        accepted = frozenset({entry.id}) if entry.kind == "failure" else frozenset()
        for k, sample in enumerate(entry.samples):
            out.append(
                Text(
                    entry.id,
                    normalize(sample),
                    accepted,
                    frozenset({vector_of[(index, "sample", k)]}),
                )
            )
        for k, question in enumerate(entry.questions):
            out.append(
                Text(
                    entry.id,
                    question,
                    accepted,
                    frozenset({vector_of[(index, "question", k)]}),
                    question=True,
                )
            )
    offtopic = yaml.safe_load(OFFTOPIC.read_text())
    for k, text in enumerate([*offtopic["questions"], *offtopic["logs"]]):
        out.append(Text(f"offtopic:{k}", text, frozenset()))
    if negatives_dir is not None and negatives_dir.is_dir():
        for case in load_cases(negatives_dir):
            out.append(Text(f"negative:{case.name}", case.text, case.accepted))
    for directory in directories:
        for case in load_cases(directory):
            out.append(Text(f"{directory.name}:{case.name}", case.text, case.accepted))
    return out


def run(
    engine: Engine,
    items: Sequence[Text],
    retrievers: Sequence[str] = RETRIEVERS,
    progress: Callable[[], None] | None = None,
) -> dict[str, list[CaseResult]]:
    """Diagnose every text on the production path with each retriever; keep the features of the
    top failure candidates. Text by text, so the hybrid and dense runs share one query embedding."""
    engine.ensure_index()
    results: dict[str, list[CaseResult]] = {r: [] for r in retrievers}
    for item in items:
        report = report_from_text(item.text)
        for retriever in retrievers:
            diagnosis = engine.diagnose(report, retriever=retriever, leave_out=item.leave_out)
            rows: tuple[tuple[tuple[float, ...], bool], ...] = ()
            if diagnosis.verdict in ("match", "abstain"):
                rows = tuple(
                    (c.features, c.id in item.accepted) for c in diagnosis.results[:ROWS_PER_CASE]
                )
            results[retriever].append(CaseResult(item, diagnosis.verdict, rows))
            if progress:
                progress()
    return results


def fold_of(group: str) -> int:
    return int(hashlib.sha1(group.encode()).hexdigest(), 16) % FOLDS


def _negative_weight(results: Sequence[CaseResult]) -> float:
    """Negatives weigh as much in total as the positives: they are fewer, and production sees many.
    The same weight serves the fit and the threshold, so both aim at one mix of inputs."""
    usable = [r for r in results if not r.preempted and r.rows]
    n_pos = sum(not r.source.negative for r in usable) or 1
    n_neg = sum(r.source.negative for r in usable) or 1
    return max(1.0, n_pos / n_neg)


def _fit(results: Sequence[CaseResult]) -> Calibration:
    neg_weight = _negative_weight(results)
    x, y, w = [], [], []
    for r in results:
        if r.preempted or not r.rows:
            continue
        for vector, right in r.rows:
            x.append(vector)
            y.append(right)
            w.append(neg_weight if r.source.negative else 1.0)
    model = fit(x, y, weights=w)
    conf, top_right, open_ = _top_confidences(model, results)
    case_weights = np.array([neg_weight if r.source.negative else 1.0 for r in results])
    threshold = choose_threshold(conf, top_right, open_, case_weights)
    return Calibration(model.coef, model.intercept, threshold, len(y))


def _top_confidences(
    model: Calibration, results: Sequence[CaseResult]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per case: the confidence of the top failure candidate, whether it is right, and whether a
    threshold can answer it at all (not pre-empted by a rule, some candidate ranked)."""
    conf, right, open_ = [], [], []
    for r in results:
        if r.preempted or not r.rows:
            conf.append(0.0)
            right.append(False)
            open_.append(False)
            continue
        vector, ok = r.rows[0]
        conf.append(model.confidence_vector(vector))
        right.append(ok)
        open_.append(True)
    return np.array(conf), np.array(right, dtype=bool), np.array(open_, dtype=bool)


def choose_threshold(
    confidences: np.ndarray,
    correct: np.ndarray,
    answerable: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> float:
    """The threshold that maximizes (weighted) right answers minus WRONG_ANSWER_COST times wrong
    ones."""
    if answerable is None:
        answerable = np.ones(len(confidences), dtype=bool)
    if weights is None:
        weights = np.ones(len(confidences))
    best, best_utility = 0.5, -np.inf
    for threshold in np.linspace(0.2, 0.95, 76):
        answered = (confidences >= threshold) & answerable
        utility = float(
            np.sum(weights * (correct & answered))
            - WRONG_ANSWER_COST * np.sum(weights * (~correct & answered))
        )
        if utility > best_utility:
            best, best_utility = float(threshold), utility
    return best


@dataclass(frozen=True)
class Figures:
    positives: int
    negatives: int
    coverage: float  # positives answered
    precision: float  # right among everything answered (negatives answered are wrong)
    false_answer_rate: float  # negatives answered with a failure entry
    top1: float  # positives whose top failure candidate is right (answered or not)

    def line(self) -> str:
        return (
            f"{self.positives} positives, {self.negatives} negatives: top-1 {self.top1:.3f}, "
            f"answered {self.coverage:.3f}, precision {self.precision:.3f}, false answers on "
            f"negatives {self.false_answer_rate:.3f}"
        )


def figures(model: Calibration, results: Sequence[CaseResult]) -> Figures:
    """The figures of one model on the given cases (in-sample when it was fitted on them)."""
    return _pooled([(model, r) for r in results])


def cross_validate(results: Sequence[CaseResult]) -> Figures:
    """Score each fold with a model fitted on the other folds, then pool the held-out verdicts."""
    held_out: list[tuple[Calibration, CaseResult]] = []
    for k in range(FOLDS):
        train = [r for r in results if fold_of(r.source.group) != k]
        test = [r for r in results if fold_of(r.source.group) == k]
        model = _fit(train)
        held_out += [(model, r) for r in test]
    return _pooled(held_out)


def _pooled(scored: Sequence[tuple[Calibration, CaseResult]]) -> Figures:
    """Each case's answer under its own model, pooled."""
    held_out = scored
    pos = [r for _, r in held_out if not r.source.negative]
    neg = [r for _, r in held_out if r.source.negative]
    answered_right = answered_wrong = answered_neg = answered_pos = top1 = 0
    for model, r in held_out:
        if not r.source.negative and r.rows and r.rows[0][1] and r.verdict != "benign":
            top1 += 1
        if r.preempted or not r.rows:
            continue
        vector, ok = r.rows[0]
        if model.confidence_vector(vector) >= model.threshold:
            answered_right += ok
            answered_wrong += not ok
            answered_neg += r.source.negative
            answered_pos += not r.source.negative
    answered = answered_right + answered_wrong
    return Figures(
        positives=len(pos),
        negatives=len(neg),
        coverage=answered_pos / len(pos) if pos else 0.0,
        precision=answered_right / answered if answered else 0.0,
        false_answer_rate=answered_neg / len(neg) if neg else 0.0,
        top1=top1 / len(pos) if pos else 0.0,
    )


def fit_retriever(results: Sequence[CaseResult], retriever: str) -> tuple[Calibration, str]:
    model = _fit(results)
    lines = [
        f"{retriever:12} fitted on {model.fitted_on} rows ({len(results)} texts), "
        f"threshold {model.threshold:.2f}",
        f"{'':12} in-sample:       {figures(model, results).line()}",
    ]
    if retriever == "hybrid":
        lines.append(f"{'':12} {FOLDS}-fold held-out: {cross_validate(results).line()}")
    return model, "\n".join(lines)


def fit_calibration(
    engine: Engine,
    directories: Sequence[Path] = (),
    *,
    negatives_dir: Path | None = NEGATIVES_DIR,
    retrievers: Sequence[str] = RETRIEVERS,
    progress: Callable[[], None] | None = None,
) -> tuple[dict[str, Calibration], str]:
    items = texts(engine, directories, negatives_dir)
    fitted: dict[str, Calibration] = {}
    lines: list[str] = []
    for retriever, results in run(engine, items, retrievers, progress).items():
        fitted[retriever], report = fit_retriever(results, retriever)
        lines.append(report)
    return fitted, "\n".join(lines)
