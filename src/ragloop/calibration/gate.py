"""A frozen-bench gate: the answer model's figures on frozen labelled rows, per corpus, checked
against the bootstrap intervals committed with them.

The rows are the development corpora's labelled sentence rows (what the answer read for
each bench question, labelled by its gold passage), frozen with the model that was shipped
then. Per corpus the figures are:

- ``best_holds_gold``: among answerable questions whose read sentences hold the gold, the share
  whose best quotable sentence does (the sentence the answer leads with);
- ``not_found_answerable``: answerable questions the model would answer "not found";
- ``not_found_unanswerable``: unanswerable questions it would answer "not found".

"Not found" is decided as the loop's answer decides it: by the model's abstention fit for
judged passages (its question features from the question's read sentences and the rows'
``unknown_names``), or, for a model without one, by the best sentence's probability against
``not_found_below``.

A model fails the gate when a corpus's figure leaves its committed interval on the bad side
(below it; above it for ``not_found_answerable``). Improvements never fail it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragloop.calibration.rows import SentenceRows
from ragloop.calibration.scores import per_question
from ragloop.nodes.answer_model import AnswerModel
from ragloop.nodes.question import question_features

#: figure -> the side on which leaving the interval is a regression
FIGURES = {
    "best_holds_gold": "low",
    "not_found_answerable": "high",
    "not_found_unanswerable": "low",
}


def question_values(rows: SentenceRows, model: AnswerModel) -> dict[str, dict[str, list[float]]]:
    """corpus -> figure -> one value (0/1) per question that counts for it."""
    score = model.probability(rows.x)
    qs = per_question(rows, score, np.ones(len(rows), dtype=bool))
    said_of = abstained(rows, model, score)
    out: dict[str, dict[str, list[float]]] = {}
    for qid, q in qs.items():
        v = out.setdefault(q.corpus, {f: [] for f in FIGURES})
        said = said_of.get(qid, float(q.support < model.not_found_below))
        if q.unanswerable:
            v["not_found_unanswerable"].append(said)
        else:
            v["not_found_answerable"].append(said)
            if q.any_holds:
                v["best_holds_gold"].append(float(q.best_holds))
    return out


def abstained(rows: SentenceRows, model: AnswerModel, score: np.ndarray) -> dict[str, float]:
    """qid -> 1.0 when the model's judged abstention fit says "not found" (empty without one)."""
    fit = model.abstention(judged=True)
    if fit is None:
        return {}
    by: dict[str, list[int]] = {}
    for i in range(len(rows)):
        by.setdefault(str(rows.qid[i]), []).append(i)
    cos = rows.features.index("cosine")
    evidence = rows.features.index("evidence")
    out = {}
    for qid, ix in by.items():
        ok = [i for i in ix if not rows.flawed[i]] or ix
        f = question_features(
            score[ok], rows.x[ok, cos], rows.x[ix, evidence].tolist(), float(rows.unknown[ix[0]])
        )
        out[qid] = float(fit.probability(f) < fit.level)
    return out


def interval(values: list[float], z: float = 1.96) -> tuple[float, float]:
    """Wilson score 95% interval of a share of yes/no values.

    Every figure is a share, and a corpus has a few dozen questions: a bootstrap of 0 of 32
    would give [0, 0], so one "not found" more would fail the gate; Wilson's interval stays
    honest at 0 and 1 ([0, 0.11] for 0 of 32)."""
    n = len(values)
    if not n:
        return float("nan"), float("nan")
    p = float(np.mean(values))
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def figures(rows: SentenceRows, model: AnswerModel) -> dict[str, dict[str, dict[str, float]]]:
    """corpus -> figure -> {value, low, high, n}."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for corpus, figs in sorted(question_values(rows, model).items()):
        out[corpus] = {}
        for name, values in figs.items():
            if not values:
                continue
            low, high = interval(values)
            out[corpus][name] = {
                "value": round(float(np.mean(values)), 4),
                "low": round(low, 4),
                "high": round(high, 4),
                "n": len(values),
            }
    return out


def check(rows: SentenceRows, model: AnswerModel, bounds: dict[str, Any]) -> list[str]:
    """Why ``model`` fails the gate on ``rows`` (empty: it passes)."""
    now = figures(rows, model)
    failures = []
    for corpus, figs in bounds["corpora"].items():
        for name, b in figs.items():
            got = now.get(corpus, {}).get(name)
            if got is None:
                failures.append(f"{corpus} {name}: no questions to measure")
            elif FIGURES[name] == "low" and got["value"] < b["low"]:
                failures.append(
                    f"{corpus} {name}: {got['value']:.3f} is below its interval "
                    f"[{b['low']:.3f}, {b['high']:.3f}]"
                )
            elif FIGURES[name] == "high" and got["value"] > b["high"]:
                failures.append(
                    f"{corpus} {name}: {got['value']:.3f} is above its interval "
                    f"[{b['low']:.3f}, {b['high']:.3f}]"
                )
    return failures
