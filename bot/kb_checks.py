"""The knowledge-base checks that need retrieval (a floor above kb/): every sample ranks its own
entry first, and no other entry claims (ties or beats it on) a sample. Dense retrieval leaves the
sample's own vector out, so the check measures generalization rather than recall. Each sample
goes through `Engine.diagnose`, the path users get."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.diagnose import Engine
from bot.ingest import normalize
from bot.model import LogFile, Report
from index.dense import dense_texts


@dataclass(frozen=True)
class RankProblem:
    entry: str
    sample: int
    winner: str
    detail: str

    def __str__(self) -> str:
        return f"{self.entry}: sample {self.sample + 1} {self.detail} (ranked first: {self.winner})"


def ranking_problems(
    engine: Engine, *, category: str | None = None, progress: Callable[[], None] | None = None
) -> list[RankProblem]:
    engine.ensure_index()
    vector_of = {
        (t.entry, t.kind, t.ordinal): v for v, t in enumerate(dense_texts(engine.entries()))
    }
    problems: list[RankProblem] = []
    for index, entry in enumerate(engine.entries()):
        if category and entry.category != category:
            continue
        for k, sample in enumerate(entry.samples):
            skip = frozenset({vector_of[(index, "sample", k)]})
            report = Report(
                files=(LogFile(name="<sample>", text=normalize(sample)),), kind="log", origin="lint"
            )
            diagnosis = engine.diagnose(report, leave_out=skip)
            # A failure's sample competes among failures only: benign entries never take the
            # answer, they fold into "also in this log (harmless)"; a benign sample is answered
            # by benign entries, or listed among the harmless lines of a failure.
            explained = entry.kind == "failure" or diagnosis.verdict == "benign"
            ranked = diagnosis.results if explained else diagnosis.harmless
            if not ranked or ranked[0].id != entry.id:
                winner = ranked[0].id if ranked else "-"
                problems.append(
                    RankProblem(entry.id, k, winner, "does not rank its own entry first")
                )
                continue
            if len(ranked) > 1 and ranked[1].score >= ranked[0].score - 1e-6:
                problems.append(
                    RankProblem(entry.id, k, ranked[1].id, "is claimed by another entry (tie)")
                )
        if progress:
            progress()
    return problems
