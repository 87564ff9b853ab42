"""`traindoc eval`: top-1/top-3/MRR, answered share and precision, latency, per retriever (DESIGN §4)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.diagnose import RETRIEVERS, Engine
from bot.ingest import report_from_text


class EvalCaseError(ValueError):
    """An eval case file that is not a mapping with text, kind and label."""


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    kind: str
    label: str
    also: tuple[str, ...] = ()

    @property
    def accepted(self) -> frozenset[str]:
        return frozenset((self.label, *self.also))


def load_cases(directory: Path) -> list[Case]:
    cases: list[Case] = []
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not {"text", "kind", "label"} <= data.keys():
            raise EvalCaseError(f"{path}: needs text, kind and label")
        cases.append(Case(path.stem, str(data["text"]), str(data["kind"]), str(data["label"]), tuple(data.get("also") or ())))
    return cases


@dataclass
class Outcome:
    ranked_ids: list[str]
    answered: bool
    ms: float


def metrics(cases: Sequence[Case], outcomes: Sequence[Outcome]) -> dict[str, float]:
    n = len(cases)
    top1 = top3 = rr = answered = answered_right = 0.0
    for case, out in zip(cases, outcomes):
        ranks = [i for i, eid in enumerate(out.ranked_ids) if eid in case.accepted]
        first = ranks[0] if ranks else None
        top1 += first == 0
        top3 += first is not None and first < 3
        rr += 1.0 / (first + 1) if first is not None else 0.0
        if out.answered:
            answered += 1
            answered_right += first == 0
    latencies = sorted(o.ms for o in outcomes)
    return {
        "top1": top1 / n if n else 0.0,
        "top3": top3 / n if n else 0.0,
        "mrr": rr / n if n else 0.0,
        "answered": answered / n if n else 0.0,
        "precision_answered": answered_right / answered if answered else 0.0,
        "p50_ms": statistics.median(latencies) if latencies else 0.0,
        "p95_ms": latencies[min(len(latencies) - 1, int(round(0.95 * (len(latencies) - 1))))] if latencies else 0.0,
    }


def run_case(engine: Engine, case: Case, retriever: str) -> Outcome:
    started = time.perf_counter()
    if retriever == "hybrid":
        report = report_from_text(case.text)
        diagnosis = engine.diagnose(report)
        return Outcome([c.id for c in diagnosis.results], diagnosis.verdict == "match", (time.perf_counter() - started) * 1000)
    report = report_from_text(case.text)
    kind = report.kind
    ranked = engine.rank(report.text, kind=kind, retriever=retriever)
    ids = [engine.entries()[int(i)].id for i in ranked.order[:5] if ranked.fused[int(i)] > 0]
    answered = bool(ids) and engine.confidence_of(ranked, int(ranked.order[0]), kind) >= engine.threshold(retriever)
    return Outcome(ids, answered, (time.perf_counter() - started) * 1000)


def evaluate(
    engine: Engine, cases: Sequence[Case], progress: Callable[[], None] | None = None
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
