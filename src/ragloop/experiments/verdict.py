"""Winners only when they win: a paired test against the best, then the cheapest within the noise.

The configuration with the best mean is compared with every other feasible one on the same
questions (paired bootstrap of the mean per-question difference). Those whose 95% interval
of the difference holds 0 are "within the noise" of the best; among them the cheapest
(fewest LLM calls per question, then lowest median latency) is chosen, and the verdict says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ragloop.experiments.objective import Objective, choose
from ragloop.experiments.stats import fmt

METHOD = "paired bootstrap of the mean per-question difference"


def paired_bootstrap(
    best: list[float], other: list[float], resamples: int, seed: int
) -> tuple[float, float, float, int]:
    """Mean of ``best - other`` over the questions both measured, its 95% interval, and their n.

    Questions are resampled with replacement (the same indices for both), so what the two
    configurations share per question cancels out; NaN on either side drops the question.
    """
    a, b = np.asarray(best, dtype=float), np.asarray(other, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    diff = a[keep] - b[keep]
    if diff.size == 0:
        return math.nan, math.nan, math.nan, 0
    if diff.size == 1:
        return float(diff[0]), float(diff[0]), float(diff[0]), 1
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(resamples, diff.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(diff.mean()), float(lo), float(hi), int(diff.size)


def _cost(rec: dict[str, Any], order: int) -> tuple[float, ...]:
    def num(key: str) -> float:
        value = rec.get(key)
        return math.inf if value is None or math.isnan(value) else float(value)

    return (num("llm_calls_per_question"), num("latency_p50_ms"), num("tokens_per_question"), order)


def _per_question(rows: list[dict[str, Any]], metric: str) -> list[float]:
    """The objective's value per question, in question order (NaN where unmeasured)."""
    by_index = sorted(rows, key=lambda r: r["index"])
    values = []
    for r in by_index:
        value = r["metrics"].get(metric) if metric in r["metrics"] else r.get(metric)
        values.append(math.nan if value is None else float(value))
    return values


def decide(
    records: list[dict[str, Any]],
    rows_by_config: dict[str, list[dict[str, Any]]],
    objective: Objective,
    metrics: list[str],
    resamples: int,
    seed: int,
) -> tuple[str | None, str]:
    """Mark ``best``, ``within_noise``, the paired difference and ``chosen``; return the pick.

    Returns the chosen id (None when nothing is feasible) and one sentence for the report.
    A cost objective (not a metric) is not tested: the best value is chosen as it is.
    """
    best_id = choose(records, objective)
    for rec in records:
        rec["best"] = rec["config"] == best_id
        rec.update(vs_best=math.nan, vs_best_lo=math.nan, vs_best_hi=math.nan, within_noise=False)
    if best_id is None:
        return None, ""
    if objective.metric not in metrics:
        return (
            best_id,
            f"{best_id} has the best {objective.metric}; cost objectives are not tested.",
        )
    sign = 1.0 if objective.maximize else -1.0
    best_values = [sign * v for v in _per_question(rows_by_config[best_id], objective.metric)]
    best_rec = next(r for r in records if r["config"] == best_id)
    best_rec["within_noise"] = True
    tied: list[dict[str, Any]] = []
    beaten: list[dict[str, Any]] = []
    for rec in records:
        if rec["config"] == best_id or not rec["feasible"]:
            continue
        other = [sign * v for v in _per_question(rows_by_config[rec["config"]], objective.metric)]
        mean, lo, hi, n = paired_bootstrap(best_values, other, resamples, seed)
        ends = sorted((-sign * lo, -sign * hi))  # other - best, in the metric's own units
        rec.update(vs_best=_r(-sign * mean), vs_best_lo=_r(ends[0]), vs_best_hi=_r(ends[1]))
        rec["within_noise"] = n > 0 and lo <= 0.0
        (tied if rec["within_noise"] else beaten).append(rec)
    how = f"{METHOD}, {resamples} resamples, 95% interval"
    if not tied:
        text = (
            f"{best_id} is significantly better on {objective.metric} than every other "
            f"feasible configuration ({how})."
            if beaten
            else f"{best_id} is the only feasible configuration: nothing to compare it with."
        )
        _mark(records, best_id)
        return best_id, text
    group = [best_rec, *tied]
    order = {r["config"]: i for i, r in enumerate(records)}
    cheapest = min(group, key=lambda r: _cost(r, order[r["config"]]))
    _mark(records, cheapest["config"])
    names = ", ".join(r["config"] for r in tied)
    closest = min(tied, key=lambda r: abs(r["vs_best"]))
    text = (
        f"{best_id} has the best mean {objective.metric} but is not significantly better than "
        f"{names} ({how}; e.g. {closest['config']} differs by {fmt(closest['vs_best'])} "
        f"[{fmt(closest['vs_best_lo'])}, {fmt(closest['vs_best_hi'])}])."
    )
    if cheapest["config"] == best_id:
        text += f" {best_id} is also the cheapest of these, so it is chosen."
    else:
        text += (
            f" Of the {len(group)} configurations within the noise, {cheapest['config']} is "
            f"chosen as the cheapest ({fmt(cheapest['llm_calls_per_question'])} LLM calls per "
            f"question, median latency {fmt(cheapest['latency_p50_ms'])} ms)."
        )
    return cheapest["config"], text


def _mark(records: list[dict[str, Any]], chosen: str) -> None:
    for rec in records:
        rec["chosen"] = rec["config"] == chosen


def _r(value: float) -> float:
    return value if math.isnan(value) else round(float(value), 4) + 0.0  # no "-0.0000"
