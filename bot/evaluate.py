"""`traindoc eval`: run every case through `Engine.diagnose` (the production path) and score it
(docs/eval.md): per retriever top-1/top-3/MRR, answered share and precision on the positives, the
false-answer rate on negatives (`label: none`), latency, and a precision/coverage table."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.diagnose import RETRIEVERS, Engine
from bot.ingest import report_from_text
from kb.errors import EvalCaseError

NONE = "none"  # the label of a negative: right when no failure entry is answered
TABLE_THRESHOLDS = (0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    kind: str
    label: str
    also: tuple[str, ...] = ()
    negative: str = ""  # for label none: benign-warning | healthy | user-code | offtopic

    @property
    def accepted(self) -> frozenset[str]:
        return frozenset() if self.is_negative else frozenset((self.label, *self.also))

    @property
    def is_negative(self) -> bool:
        return self.label == NONE


def load_cases(directory: Path) -> list[Case]:
    cases: list[Case] = []
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not {"text", "kind", "label"} <= data.keys():
            raise EvalCaseError(f"{path}: needs text, kind and label")
        cases.append(
            Case(
                path.stem,
                str(data["text"]),
                str(data["kind"]),
                str(data["label"]),
                tuple(data.get("also") or ()),
                str(data.get("negative") or ""),
            )
        )
    return cases


@dataclass
class Outcome:
    ranked_ids: list[str]
    answered: bool  # verdict "match": a failure entry was named
    ms: float
    verdict: str = "abstain"
    confidence: float = 0.0  # the best failure entry's confidence (0 when a rule decided first)

    @property
    def preempted(self) -> bool:
        """Decided by a rule (harmless warning, plain user bug) before the confidence threshold."""
        return self.verdict in ("benign", "user-code")

    def answered_at(self, threshold: float) -> bool:
        return bool(self.ranked_ids) and not self.preempted and self.confidence >= threshold


def _right(case: Case, out: Outcome) -> bool:
    return bool(out.ranked_ids) and out.ranked_ids[0] in case.accepted


def metrics(cases: Sequence[Case], outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Ranking figures and answered/precision on the positives; false answers on the negatives;
    precision over everything answered (a named entry on a negative is a wrong answer)."""
    pos = [(c, o) for c, o in zip(cases, outcomes, strict=False) if not c.is_negative]
    neg = [(c, o) for c, o in zip(cases, outcomes, strict=False) if c.is_negative]
    n = len(pos)
    top1 = top3 = rr = answered = answered_right = 0.0
    for case, out in pos:
        ranks = [i for i, eid in enumerate(out.ranked_ids) if eid in case.accepted]
        first = ranks[0] if ranks else None
        top1 += first == 0
        top3 += first is not None and first < 3
        rr += 1.0 / (first + 1) if first is not None else 0.0
        if out.answered:
            answered += 1
            answered_right += first == 0
    false_answers = sum(o.answered for _, o in neg)
    latencies = sorted(o.ms for o in outcomes)
    return {
        "top1": top1 / n if n else 0.0,
        "top3": top3 / n if n else 0.0,
        "mrr": rr / n if n else 0.0,
        "answered": answered / n if n else 0.0,
        "precision_answered": answered_right / answered if answered else 0.0,
        "p50_ms": statistics.median(latencies) if latencies else 0.0,
        "p95_ms": latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
        if latencies
        else 0.0,
        "positives": n,
        "negatives": len(neg),
        "false_answer_rate": false_answers / len(neg) if neg else 0.0,
        "precision_answered_all": answered_right / (answered + false_answers)
        if answered + false_answers
        else 0.0,
    }


def negative_breakdown(
    cases: Sequence[Case], outcomes: Sequence[Outcome]
) -> dict[str, dict[str, int]]:
    """Per kind of negative (or "unlabelled"): how many, and the verdicts they got."""
    out: dict[str, Counter] = {}
    for case, outcome in zip(cases, outcomes, strict=False):
        if case.is_negative:
            out.setdefault(case.negative or "unlabelled", Counter())[outcome.verdict] += 1
    return {kind: {"cases": sum(c.values()), **dict(c)} for kind, c in sorted(out.items())}


def threshold_table(
    cases: Sequence[Case],
    outcomes: Sequence[Outcome],
    thresholds: Sequence[float] = TABLE_THRESHOLDS,
) -> list[dict[str, float]]:
    """What answering above each threshold would give: coverage of the positives, precision of
    everything answered, and the false-answer rate on negatives."""
    pos = [(c, o) for c, o in zip(cases, outcomes, strict=False) if not c.is_negative]
    neg = [o for c, o in zip(cases, outcomes, strict=False) if c.is_negative]
    rows = []
    for t in thresholds:
        answered = [(c, o) for c, o in pos if o.answered_at(t)]
        right = sum(_right(c, o) for c, o in answered)
        false = sum(o.answered_at(t) for o in neg)
        rows.append(
            {
                "threshold": round(float(t), 4),
                "coverage": len(answered) / len(pos) if pos else 0.0,
                "precision": right / (len(answered) + false) if answered or false else 0.0,
                "false_answer_rate": false / len(neg) if neg else 0.0,
            }
        )
    return rows


def run_case(engine: Engine, case: Case, retriever: str) -> Outcome:
    started = time.perf_counter()
    diagnosis = engine.diagnose(report_from_text(case.text), retriever=retriever)
    ms = (time.perf_counter() - started) * 1000
    confidence = diagnosis.confidence if diagnosis.verdict in ("match", "abstain") else 0.0
    return Outcome(
        [c.id for c in diagnosis.results],
        diagnosis.verdict == "match",
        ms,
        diagnosis.verdict,
        confidence,
    )


def evaluate(
    engine: Engine, cases: Sequence[Case], progress: Callable[[], object] | None = None
) -> tuple[dict[str, dict[str, float]], dict[str, list[Outcome]]]:
    engine.ensure_index()
    engine.embedder.embed(["warm up"])  # latency is per warm case, not model loading
    outcomes: dict[str, list[Outcome]] = {r: [] for r in RETRIEVERS}
    for case in cases:
        for retriever in RETRIEVERS:
            outcomes[retriever].append(run_case(engine, case, retriever))
        if progress:
            progress()
    return {r: metrics(cases, outcomes[r]) for r in RETRIEVERS}, outcomes
