"""How a sentence scorer fares on labelled rows, question by question: the area under the
ROC curve, whether each question's best sentence (or its quoted ones) holds the reference,
and the "not found" trade-off over a level. Used to fit and to check (``fit``, ``gate``,
``bench/calibrate.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragloop.calibration.rows import SentenceRows


def auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve (ties count half): the chance a positive outscores a negative."""
    y = np.asarray(y, dtype=bool)
    pos, neg = int(y.sum()), int((~y).sum())
    if not pos or not neg:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    s = np.asarray(score)[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[y].sum() - pos * (pos + 1) / 2) / (pos * neg))


@dataclass
class Question:
    """One question's read sentences, summarised under a scorer."""

    corpus: str
    unanswerable: bool
    support: float = -1e9  # the best quotable sentence's score
    best_holds: bool = False  # that sentence holds the reference
    any_holds: bool = False  # some read sentence does


def per_question(rows: SentenceRows, score: np.ndarray, mask: np.ndarray) -> dict[str, Question]:
    """qid -> its summary, over the quotable rows under ``mask``."""
    out: dict[str, Question] = {}
    for i in np.flatnonzero(mask & ~rows.flawed):
        q = out.setdefault(
            str(rows.qid[i]), Question(str(rows.corpus[i]), bool(rows.unanswerable[i]))
        )
        q.any_holds = q.any_holds or bool(rows.label[i])
        if score[i] > q.support:
            q.support, q.best_holds = float(score[i]), bool(rows.label[i])
    return out


def top1(qs: dict[str, Question]) -> float:
    """Among answerable questions whose read sentences hold the reference: the best sentence
    does."""
    xs = [q.best_holds for q in qs.values() if not q.unanswerable and q.any_holds]
    return float(np.mean(xs)) if xs else float("nan")


def tradeoff(qs: dict[str, Question], levels: np.ndarray) -> list[tuple[float, float, float]]:
    """(level, answerable not-found rate, unanswerable not-found rate) at each level."""
    ans = np.array([q.support for q in qs.values() if not q.unanswerable])
    un = np.array([q.support for q in qs.values() if q.unanswerable])
    return [
        (
            float(t),
            float((ans < t).mean()) if len(ans) else 0.0,
            float((un < t).mean()) if len(un) else float("nan"),
        )
        for t in levels
    ]


def quoted_hit(rows: SentenceRows, score: np.ndarray, mask: np.ndarray, share: float) -> float:
    """Answerable questions whose quoted sentences (the best, then up to two more scoring
    ``share`` of it) hold the reference; one source a sentence is not modelled here."""
    by: dict[str, list[int]] = {}
    for i in np.flatnonzero(mask & ~rows.unanswerable & ~rows.flawed):
        by.setdefault(str(rows.qid[i]), []).append(int(i))
    hits = []
    for ix in by.values():
        ix.sort(key=lambda i: -score[i])
        picked = [i for i in ix if score[i] >= share * score[ix[0]]][:3]
        hits.append(any(rows.label[i] for i in picked))
    return float(np.mean(hits)) if hits else float("nan")
