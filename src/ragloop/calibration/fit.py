"""Fit the extractive answer's sentence model on labelled rows, and score it on held-out ones.

One fitting path serves ``bench/calibrate.py`` (the shipped model, fitted on the development
corpora) and ``ragloop calibrate`` (a model fitted on one index's own corpus).

The model is a logistic regression with an L2 penalty (C = 1) on standardised features,
fitted by Newton's method in numpy: the problem is convex with a dozen parameters, so a few
Newton steps reach the same optimum scikit-learn's solvers do, and the command needs no
scientific stack beyond numpy (``tests/test_calibrate_fit.py`` compares the two when
scikit-learn is installed). Coefficients are returned in the features' own units.

Besides the coefficients the fit chooses, on the training questions only:

- ``floor_share``: how close to the best sentence a further one must score to be quoted
  (the largest share whose quoted-hit rate is within 0.005 of the best share's);
- ``not_found_below``: the highest level of the best sentence's probability that keeps the
  answerable questions' "not found" rate at or under ``max_answerable_not_found``;
- ``stop_level``: the judge's "sufficient" level (its grade 2), from the chunk evidence the
  rows carry: the lowest level at which stopping loses the gold (the best chunk lacks it) for
  at most ``STOP_MAX_LOSS`` of the answerable questions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# the held-out split is the rows' (``rows.held_mask``); these names stay importable from here
from ragloop.calibration.rows import HELD as HELD
from ragloop.calibration.rows import SEED as SEED
from ragloop.calibration.rows import SentenceRows
from ragloop.calibration.rows import held_out as held_out
from ragloop.calibration.scores import auc, per_question, quoted_hit, top1, tradeoff
from ragloop.errors import ConfigError

Scorer = Callable[[np.ndarray], np.ndarray]
#: the "not found" level keeps answerable questions' not-found rate at or under this
MAX_ANSWERABLE_NOT_FOUND = 0.08
#: further sentences are quoted when they reach one of these shares of the best one
SHARES = (0.7, 0.5, 0.3, 0.2, 0.1)
#: the fewest training questions whose read sentences hold the reference
MIN_QUESTIONS = 20
#: the judge stops "sufficient" at the lowest evidence level at which a stop there would lose
#: the gold (the best chunk lacks it) for at most this share of the answerable training
#: questions: the loop may keep the gold at most 0.02 less often than the best single
#: retriever finds it (the answer-quality target), and a stop is where it can lose it. A rule
#: on the stops' own precision (0.85) gave 0.82 and 0.64 on two collections of the bench's
#: rows; this one 0.85 and 0.79 (docs/answer-quality.md)
STOP_MAX_LOSS = 0.02
#: no stop level is fitted from fewer answerable training questions than this
STOP_SUPPORT = 30


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    c: float = 1.0,
    tol: float = 1e-10,
    max_iter: int = 100,
    prior: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression (penalty ``|w - prior|^2 / 2`` on standardised
    columns, ``c`` times the summed log loss, intercept not penalised); (weights, intercept)
    in raw units. ``prior`` (raw units, default 0) is what the weights shrink towards.

    A constant column gets the prior's weight. Both classes must be present.
    """
    y = np.asarray(y, dtype=float)
    if x.ndim != 2 or len(x) != len(y) or len(y) == 0:
        raise ConfigError("calibration: no rows to fit")
    if y.min() == y.max():
        raise ConfigError(
            "calibration: every training row has the same label (no sentence holds the "
            "reference, or every one does): generate more questions"
        )
    mu, sd = x.mean(0), x.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    centre = np.zeros(z.shape[1])
    if prior is not None:
        centre[:-1] = np.asarray(prior, dtype=float) * sd  # the prior in standardised units
    theta = centre.copy()
    ridge = np.ones(z.shape[1])
    ridge[-1] = 0.0  # the intercept is not penalised
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ theta, -35, 35)))
        grad = c * z.T @ (p - y) + ridge * (theta - centre)
        hess = c * (z.T * (p * (1 - p))) @ z + np.diag(ridge) + 1e-12 * np.eye(len(theta))
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.max(np.abs(step))) < tol:
            break
    w = theta[:-1] / sd
    return w, float(theta[-1] - (theta[:-1] * mu / sd).sum())


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


@dataclass
class Fit:
    """A fitted sentence model, the levels chosen with it and how it scored."""

    coef: dict[str, float]
    intercept: float
    floor_share: float
    not_found_below: float
    scores: dict[str, Any] = field(default_factory=dict)
    curve: list[tuple[float, float, float]] = field(default_factory=list)
    train_rows: int = 0
    held_rows: int = 0
    #: the judge's fitted "sufficient" level (``stop_level``); None: too few questions
    stop_level: float | None = None

    def probability(self, x: np.ndarray, features: tuple[str, ...]) -> np.ndarray:
        w = np.array([self.coef.get(f, 0.0) for f in features])
        return sigmoid(self.intercept + x @ w)


def fit_rows(
    rows: SentenceRows,
    train: np.ndarray,
    *,
    baselines: dict[str, Scorer] | None = None,
    held: np.ndarray | None = None,
    max_answerable_not_found: float = MAX_ANSWERABLE_NOT_FOUND,
    min_questions: int = MIN_QUESTIONS,
) -> Fit:
    """Fit on the quotable answerable rows under ``train``; choose ``floor_share`` and
    ``not_found_below`` on the ``train`` questions; score on ``held`` (default: the rest)
    against each of ``baselines`` (name -> scorer of a feature matrix)."""
    held = ~train if held is None else held
    fit_mask = train & ~rows.flawed & ~rows.unanswerable
    usable = {
        str(q) for q, lab in zip(rows.qid[fit_mask], rows.label[fit_mask], strict=True) if lab
    }
    if len(usable) < min_questions:
        raise ConfigError(
            f"calibration: only {len(usable)} training question(s) read a sentence that holds "
            f"their reference (at least {min_questions} are needed): generate more questions "
            "(--size), or the corpus is too small to calibrate on"
        )
    w, b = fit_logistic(rows.x[fit_mask], rows.label[fit_mask])
    coef = {f: round(float(v), 5) for f, v in zip(rows.features, w, strict=True)}
    prob = sigmoid(b + rows.x @ w)
    test = held & ~rows.flawed & ~rows.unanswerable
    scorers: dict[str, np.ndarray] = {"model": prob}
    scorers.update({name: fn(rows.x) for name, fn in (baselines or {}).items()})
    scores: dict[str, Any] = {
        "sentence_auc": {k: _r(auc(rows.label[test], s[test])) for k, s in scorers.items()},
        "best_sentence_holds_gold": {
            k: _r(top1(per_question(rows, s, held))) for k, s in scorers.items()
        },
    }
    hit = {f: quoted_hit(rows, prob, train, f) for f in SHARES}
    best = max(v for v in hit.values() if v == v) if any(v == v for v in hit.values()) else 0.0
    floor_share = max((f for f in SHARES if hit[f] >= best - 0.005), default=0.7)
    scores["quoted_sentences_hold_gold"] = {
        "floor_share": floor_share,
        "train": {str(f): _r(v) for f, v in hit.items()},
        "held_out": _r(quoted_hit(rows, prob, held, floor_share)),
    }
    levels = np.round(np.arange(0.0, 0.3, 0.005), 3)
    curve = tradeoff(per_question(rows, prob, train), levels)
    level = max((t for t, a, _ in curve if a <= max_answerable_not_found), default=0.0)
    _, ans_nf, un_nf = tradeoff(per_question(rows, prob, held), np.array([level]))[0]
    scores["not_found_held_out"] = {"answerable": _r(ans_nf), "unanswerable": _r(un_nf)}
    stop, scores["judge_stop_level"] = stop_level(rows, train, held)
    return Fit(
        coef=coef,
        intercept=round(b, 5),
        floor_share=floor_share,
        not_found_below=float(level),
        scores=scores,
        curve=curve,
        train_rows=int(fit_mask.sum()),
        held_rows=int(test.sum()),
        stop_level=stop,
    )


def best_chunks(rows: SentenceRows, mask: np.ndarray) -> dict[str, tuple[float, bool]]:
    """qid -> (the judge's best chunk evidence, that chunk holds the gold), over ``mask``.

    A row carries its chunk's evidence, not the chunk's id: the sentences of one question with
    the same evidence are taken as one chunk (two chunks with equal evidence to four decimals
    count as one). An unanswerable question's best chunk never holds the gold."""
    if "evidence" not in rows.features:
        return {}
    ev = rows.x[:, rows.features.index("evidence")]
    chunks: dict[tuple[str, float], bool] = {}
    for i in np.flatnonzero(mask):
        k = (str(rows.qid[i]), round(float(ev[i]), 4))
        chunks[k] = chunks.get(k, False) or bool(rows.label[i])
    best: dict[str, tuple[float, bool]] = {}
    for (qid, e), gold in chunks.items():
        if qid not in best or e > best[qid][0]:
            best[qid] = (e, gold)
    return best


def stop_precision(best: dict[str, tuple[float, bool]], level: float) -> tuple[float, int]:
    """(share of questions whose best chunk holds the gold, how many) with best >= level."""
    hits = [gold for e, gold in best.values() if e >= level]
    return (float(np.mean(hits)) if hits else float("nan")), len(hits)


def stop_loss(best: dict[str, tuple[float, bool]], answerable: set[str], level: float) -> float:
    """Share of the ``answerable`` questions a stop at ``level`` would lose the gold for: the
    best chunk reaches the level and does not hold it (an upper bound: another kept chunk
    may)."""
    asked = [q for q in best if q in answerable]
    lost = sum(1 for q in asked if best[q][0] >= level and not best[q][1])
    return lost / len(asked) if asked else 1.0


def stop_level(
    rows: SentenceRows,
    train: np.ndarray,
    held: np.ndarray,
    max_loss: float = STOP_MAX_LOSS,
    support: int = STOP_SUPPORT,
) -> tuple[float | None, dict[str, Any]]:
    """The judge's "sufficient" level (its grade 2): the lowest evidence level (step 0.01) at
    which stopping loses the gold for at most ``max_loss`` of the answerable training
    questions (``stop_loss``); None when fewer than ``support`` of them, or no level,
    qualify. With how the held-out questions fare at it."""
    train_best, held_best = best_chunks(rows, train), best_chunks(rows, held)
    answerable = {str(q) for q, u in zip(rows.qid, rows.unanswerable, strict=True) if not u}
    levels = [float(t) for t in np.round(np.arange(0.3, 1.0001, 0.01), 2)]
    curve = [
        (t, *stop_precision(train_best, t), stop_loss(train_best, answerable, t)) for t in levels
    ]
    level = None
    if sum(q in answerable for q in train_best) >= support:
        level = next((t for t, _, _, lost in curve if lost <= max_loss), None)
    report: dict[str, Any] = {
        "rule": "lowest evidence level at which a stop loses the gold (the best chunk lacks "
        f"it) for at most {max_loss} of the answerable training questions",
        "chunks": "a question's sentences with equal judge evidence",
        "level": level,
    }
    if level is not None:
        for name, best in (("train", train_best), ("held_out", held_best)):
            p, n = stop_precision(best, level)
            report[name] = {"precision": _r(p), "questions_stopped": n, "of": len(best),
                            "gold_lost": _r(stop_loss(best, answerable, level))}  # fmt: skip
    report["curve_train"] = [[t, _r(p), n, _r(lost)] for t, p, n, lost in curve[::5]]
    return level, report


def _r(v: float) -> float | None:
    return None if v != v else round(float(v), 3)  # NaN (nothing to score) -> null in JSON
