"""Aggregations shared by metrics: temperature softmax, average precision, cosine."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ragloop.errors import ConfigError

#: the five verdict levels of the intent (eval_lib-style) answer relevancy
VERDICT_SCORES: dict[str, float] = {
    "fully": 1.0,
    "mostly": 0.9,
    "partial": 0.7,
    "minor": 0.3,
    "none": 0.0,
}


def check_temperature(temperature: float) -> float:
    """Reject a temperature outside [0, 1] with a message saying what is allowed."""
    if not (isinstance(temperature, int | float) and 0.0 <= float(temperature) <= 1.0):
        raise ConfigError(
            "temperature must be within [0, 1] (0.1 strict, 0.5 mean, 1.0 lenient); "
            f"got {temperature!r}"
        )
    return float(temperature)


#: T of the answer-relevancy softmax when nobody says: the plain mean (``Settings.temperature``)
DEFAULT_TEMPERATURE = 0.5


def temperature_softmax(scores: Sequence[float], temperature: float = DEFAULT_TEMPERATURE) -> float:
    """Softmax-weighted mean: sum(s*e^(b*s)) / sum(e^(b*s)) with b = 20*(T-0.5).

    T=0.5 gives exactly the arithmetic mean; lower T weights low scores (strict), higher T
    weights high scores (lenient). The result never decreases as T rises.
    """
    t = check_temperature(temperature)
    if len(scores) == 0:
        return math.nan
    s = np.asarray(scores, dtype=float)
    beta = 20.0 * (t - 0.5)
    if beta == 0.0:
        return float(s.mean())
    z = beta * s
    w = np.exp(z - z.max())  # shift for numerical stability; the ratio is unchanged
    return float((s * w).sum() / w.sum())


def average_precision(verdicts: Sequence[int | bool]) -> float:
    """RAGAS context precision: mean of precision@k over the ranks k holding a useful item.

    ``verdicts`` are 1/0 in rank order. With no useful item the score is 0.
    """
    v = [1 if x else 0 for x in verdicts]
    hits = sum(v)
    if hits == 0:
        return 0.0
    total, seen = 0.0, 0
    for k, useful in enumerate(v, start=1):
        seen += useful
        if useful:
            total += seen / k
    return total / hits


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is zero (not clamped, range [-1, 1])."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    if nx == 0 or ny == 0:
        return 0.0
    return float(np.clip(x @ y / (nx * ny), -1.0, 1.0))
