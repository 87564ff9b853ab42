"""Fuse the three retrievers' per-entry scores into one ranking, and describe the top of it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Strong fingerprints dominate (1.0+), text similarity orders the rest and breaks ties.
LEXICAL_WEIGHT = 0.35
DENSE_WEIGHT = 1.0
LEXICAL_HALF = 10.0  # the BM25 score that counts as half-way to a sure lexical match
# A strong fingerprint "decides" (dense retrieval is skipped) when no other entry's fingerprint
# evidence comes within this margin of the best one.
DECISIVE_MARGIN = 0.3


@dataclass(frozen=True)
class Scores:
    fingerprint: np.ndarray
    lexical: np.ndarray  # raw BM25
    dense: np.ndarray  # best cosine per entry; zeros when dense was skipped

    @property
    def lexical_normalized(self) -> np.ndarray:
        top = float(self.lexical.max()) if self.lexical.size else 0.0
        return self.lexical / top if top > 0 else np.zeros_like(self.lexical)

    def fused(self) -> np.ndarray:
        return (
            self.fingerprint + LEXICAL_WEIGHT * self.lexical_normalized + DENSE_WEIGHT * self.dense
        )


def decisive_fingerprint(fingerprint: np.ndarray, strong: np.ndarray) -> int | None:
    """The entry a strong fingerprint decides alone, or None when others come close."""
    if not fingerprint.size or not strong.any():
        return None
    order = np.argsort(-fingerprint, kind="stable")
    best = int(order[0])
    if not strong[best]:
        return None
    runner_up = float(fingerprint[order[1]]) if fingerprint.size > 1 else 0.0
    return best if fingerprint[best] - runner_up >= DECISIVE_MARGIN else None


def ranking(values: np.ndarray) -> np.ndarray:
    """Entry indexes best first (stable: ties keep KB order)."""
    return np.argsort(-values, kind="stable")


@dataclass(frozen=True)
class Features:
    """What the calibrator sees of one candidate. The normalized BM25 score and the raw fused score
    are left out on purpose: in labelled data the right answer nearly always tops BM25, so a fit
    leans on "lexical == 1" and collapses the confidence of a clear fingerprint match whose BM25
    rank is second. The margin carries that information."""

    margin: float  # to the best other candidate (negative for runners-up)
    fingerprint: float
    strong: float
    lexical_abs: float  # raw BM25 squashed to [0, 1): low for accidental word overlap
    dense: float
    dense_used: float
    question: float
    # Does the input say anything went wrong at all? Healthy start-up logs resemble failure samples
    # line for line (the same NCCL INFO lines precede most NCCL failures); only the error is new.
    error_signal: float = 1.0

    NAMES = (
        "margin",
        "fingerprint",
        "strong",
        "lexical_abs",
        "dense",
        "dense_used",
        "question",
        "error_signal",
    )

    def vector(self) -> list[float]:
        return [getattr(self, name) for name in self.NAMES]


def candidate_features(
    scores: Scores,
    strong: np.ndarray,
    fused: np.ndarray,
    entry: int,
    *,
    dense_used: bool,
    question: bool,
    signal: float = 1.0,
) -> Features:
    others = np.delete(fused, entry)
    best_other = float(others.max()) if others.size else 0.0
    return Features(
        margin=float(fused[entry]) - best_other,
        fingerprint=float(scores.fingerprint[entry]),
        strong=float(strong[entry]),
        lexical_abs=float(scores.lexical[entry] / (scores.lexical[entry] + LEXICAL_HALF)),
        dense=float(scores.dense[entry]),
        dense_used=float(dense_used),
        question=float(question),
        error_signal=float(signal),
    )
