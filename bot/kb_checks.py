"""The knowledge-base checks that need retrieval (a floor above kb/): every sample ranks its own
entry first, and no other entry claims (ties or beats it on) a sample. Dense retrieval leaves the
sample's own vector out, so the check measures generalization rather than recall."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.diagnose import Engine
from bot.ingest import normalize
from index.dense import dense_texts


@dataclass(frozen=True)
class RankProblem:
    entry: str
    sample: int
    winner: str
    detail: str

    def __str__(self) -> str:
        return f"{self.entry}: sample {self.sample + 1} {self.detail} (ranked first: {self.winner})"


def ranking_problems(engine: Engine, *, category: str | None = None, progress: Callable[[], None] | None = None) -> list[RankProblem]:
    engine.ensure_index()
    vector_of = {(t.entry, t.kind, t.ordinal): v for v, t in enumerate(dense_texts(engine.entries()))}
    problems: list[RankProblem] = []
    for index, entry in enumerate(engine.entries()):
        if category and entry.category != category:
            continue
        for k, sample in enumerate(entry.samples):
            skip = frozenset({vector_of[(index, "sample", k)]})
            ranked = engine.rank(normalize(sample), kind="log", skip_vectors=skip)
            # A failure's sample competes among failures only, as in `decide`: benign entries never
            # take the answer, they fold into "also in this log (harmless)".
            order = [int(i) for i in ranked.order if entry.kind == "benign" or engine.entries()[int(i)].kind == "failure"]
            first = order[0]
            if first != index:
                problems.append(RankProblem(entry.id, k, engine.entries()[first].id, "does not rank its own entry first"))
                continue
            runner = order[1] if len(order) > 1 else None
            if runner is not None and ranked.fused[runner] >= ranked.fused[index] - 1e-6:
                problems.append(RankProblem(entry.id, k, engine.entries()[runner].id, "is claimed by another entry (tie)"))
        if progress:
            progress()
    return problems
