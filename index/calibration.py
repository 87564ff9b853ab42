"""Confidence: a logistic model over candidate features, fitted on labelled cases.

Parameters live in calibration.json beside this module (bundled, no pickle) and are refitted with
`traindoc calibrate` whenever the KB or the fusion changes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from index.fusion import Features

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Calibration:
    coef: tuple[float, ...]
    intercept: float
    threshold: float = DEFAULT_THRESHOLD
    fitted_on: int = 0

    def confidence(self, features: Features) -> float:
        return self.confidence_vector(features.vector())

    def confidence_vector(self, vector: Sequence[float]) -> float:
        z = self.intercept + sum(c * x for c, x in zip(self.coef, vector, strict=False))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_json(self) -> dict:
        return {
            "coef": [round(c, 6) for c in self.coef],
            "intercept": round(self.intercept, 6),
            "threshold": round(self.threshold, 4),
            "fitted_on": self.fitted_on,
        }

    @classmethod
    def from_json(cls, data: dict) -> Calibration:
        return cls(
            tuple(data["coef"]),
            data["intercept"],
            data.get("threshold", DEFAULT_THRESHOLD),
            data.get("fitted_on", 0),
        )


def save_all(calibrations: dict[str, Calibration], path: Path = CALIBRATION_FILE) -> None:
    """One model per retriever: each alone sees different features, so each gets its own fit."""
    payload = {
        "features": list(Features.NAMES),
        "retrievers": {k: c.to_json() for k, c in calibrations.items()},
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")


def load_all(path: Path = CALIBRATION_FILE) -> dict[str, Calibration]:
    """The fitted model of each retriever; the prior where none was fitted or the file was written
    for other features (the prior is safer than a misaligned model)."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    if tuple(data.get("features", ())) != Features.NAMES:
        return {}
    return {name: Calibration.from_json(c) for name, c in data.get("retrievers", {}).items()}


# Before any fit: confidence grows with the margin and a strong fingerprint.
FIT_L2 = 0.5  # the fit's L2 penalty
FIT_STEPS = 3000  # gradient descent steps
PRIOR = Calibration(coef=(4.0, 0.0, 2.5, 1.0, 3.0, 0.0, 0.0, 1.0), intercept=-4.0)


def fit(
    features: Sequence[Features] | Sequence[Sequence[float]],
    correct: Sequence[bool],
    *,
    weights: Sequence[float] | None = None,
) -> Calibration:
    """L2-regularized, optionally weighted logistic regression by gradient descent (a few thousand
    rows, 8 features). Rows are Features or their vectors."""
    x = np.array(
        [f.vector() if isinstance(f, Features) else list(f) for f in features], dtype=np.float64
    )
    y = np.array(correct, dtype=np.float64)
    sw = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    sw = sw * len(y) / sw.sum()
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    xs = (x - mean) / std
    w = np.zeros(x.shape[1])
    b = 0.0
    lr = 0.1
    for _ in range(FIT_STEPS):
        p = 1.0 / (1.0 + np.exp(-(xs @ w + b)))
        grad_w = xs.T @ (sw * (p - y)) / len(y) + FIT_L2 * w / len(y)
        grad_b = float(np.mean(sw * (p - y)))
        w -= lr * grad_w
        b -= lr * grad_b
    coef = w / std
    intercept = b - float(np.sum(w * mean / std))
    return Calibration(tuple(float(c) for c in coef), float(intercept), DEFAULT_THRESHOLD, len(y))
