"""The calibration's numpy fit and scores: the optimum scikit-learn finds, a correct AUC, rows
read by name, and clear errors when there is too little to fit."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.calibration.fit import (
    best_chunks,
    fit_logistic,
    fit_rows,
    held_out,
    stop_level,
    stop_loss,
)
from ragloop.calibration.rows import META, SentenceRows, read_rows, write_rows
from ragloop.calibration.scores import auc
from ragloop.errors import ConfigError
from ragloop.nodes.sentences import FEATURES


def _synthetic(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)) * [1.0, 0.2, 3.0, 1.0]
    x[:, 3] = 0.5  # a constant column
    true = np.array([2.0, -4.0, 0.3, 0.0])
    y = rng.random(n) < 1 / (1 + np.exp(-(x @ true - 0.5)))
    return x, y.astype(int), true


def test_the_fit_recovers_the_weights_that_made_the_labels():
    x, y, true = _synthetic(20000)
    w, b = fit_logistic(x, y)
    assert np.allclose(w[:3], true[:3], atol=0.15) and w[3] == 0.0
    assert abs(b + 0.5) < 0.2


def test_the_fit_is_scikit_learns_optimum():
    sk = pytest.importorskip("sklearn.linear_model")
    x, y, _ = _synthetic()
    w, b = fit_logistic(x, y)
    mu, sd = x.mean(0), x.std(0)
    sd[sd == 0] = 1
    m = sk.LogisticRegression(C=1.0, tol=1e-10, max_iter=10000).fit((x - mu) / sd, y)
    assert np.allclose(w, m.coef_[0] / sd, atol=1e-4)
    assert b == pytest.approx(m.intercept_[0] - (m.coef_[0] * mu / sd).sum(), abs=1e-4)


def test_one_label_only_is_a_clear_error():
    with pytest.raises(ConfigError, match="same label"):
        fit_logistic(np.ones((5, 2)), np.zeros(5))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4)), min_size=2, max_size=30))
def test_auc_is_the_share_of_positive_negative_pairs_ordered_right(pairs):
    y = np.array([p for p, _ in pairs])
    s = np.array([float(v) for _, v in pairs])
    pos, neg = s[y], s[~y]
    if not len(pos) or not len(neg):
        assert np.isnan(auc(y, s))
        return
    wins = [1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(pos, neg)]
    assert auc(y, s) == pytest.approx(np.mean(wins))


def test_the_split_is_stable_and_holds_out_about_thirty_percent():
    ids = [f"q{i}" for i in range(2000)]
    held = [held_out(q) for q in ids]
    assert held == [held_out(q) for q in ids]
    assert 0.25 < np.mean(held) < 0.35
    assert held != [held_out(q, seed=1) for q in ids]


def _records(questions: int, rng: np.random.Generator) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for q in range(questions):
        for s in range(6):
            gold = s == 0
            feats = {f: float(rng.random()) for f in FEATURES}
            feats["cosine"] = 0.6 + 0.3 * rng.random() if gold else 0.5 * rng.random()
            out.append(
                {"corpus": "c", "qid": f"q{q}", "kind": "specific", "unanswerable": 0,
                 "label": int(gold), "flawed": 0, **feats}
            )  # fmt: skip
    return out


def test_fit_rows_learns_the_telling_feature_and_scores_held_out_questions():
    rows = SentenceRows.from_records(_records(120, np.random.default_rng(1)))
    held = np.array([held_out(q) for q in rows.qid])
    fit = fit_rows(rows, ~held, held=held, baselines={"flat": lambda x: np.zeros(len(x))})
    assert fit.coef["cosine"] > 5 * max(abs(v) for k, v in fit.coef.items() if k != "cosine")
    assert fit.scores["best_sentence_holds_gold"]["model"] > 0.9
    assert fit.scores["sentence_auc"]["flat"] == 0.5


def test_too_few_questions_is_a_clear_error():
    rows = SentenceRows.from_records(_records(10, np.random.default_rng(2)))
    with pytest.raises(ConfigError, match="generate more questions"):
        fit_rows(rows, np.ones(len(rows), dtype=bool))


def test_rows_round_trip_and_are_read_by_name(tmp_path):
    rows = SentenceRows.from_records(_records(5, np.random.default_rng(3)))
    sha = write_rows(rows, tmp_path / "r.csv.gz")
    back, sha2 = read_rows(tmp_path / "r.csv.gz")
    assert sha == sha2 and np.allclose(back.x, rows.x, atol=1e-4)
    assert (back.label == rows.label).all() and list(back.qid) == list(rows.qid)
    assert write_rows(rows, tmp_path / "again.csv.gz") == sha  # reproducible bytes
    # a file with a feature this ragloop does not know is read for the ones it knows
    extra = [{**r, "newer_feature": 1.0} for r in _records(2, np.random.default_rng(4))]
    assert SentenceRows.from_records(extra).features == FEATURES
    lacking = [{k: v for k, v in r.items() if k != FEATURES[0]} for r in extra]
    with pytest.raises(ConfigError, match=FEATURES[0]):
        SentenceRows.from_records(lacking)
    assert set(META) <= set(rows.to_csv().splitlines()[0].split(","))


def test_the_stop_level_is_the_lowest_evidence_level_that_loses_little_gold():
    rng = np.random.default_rng(5)
    records = []
    for q in range(200):  # the best chunk's evidence; it holds the gold more often when high
        e = float(rng.random())
        gold = bool(rng.random() < (0.95 if e >= 0.6 else 0.4))
        feats = dict.fromkeys(FEATURES, 0.0) | {"evidence": round(e, 4), "cosine": 0.5}
        for s in range(2):  # two sentences of the chunk; the first holds the gold
            records.append(
                {"corpus": "c", "qid": f"q{q}", "kind": "specific", "unanswerable": 0,
                 "label": int(gold and s == 0), "flawed": 0, **feats}
            )  # fmt: skip
    rows = SentenceRows.from_records(records)
    everything = np.ones(len(rows), dtype=bool)
    best = best_chunks(rows, everything)
    answerable = set(best)
    level, report = stop_level(rows, everything, everything, max_loss=0.02)
    assert level is not None and report["train"]["gold_lost"] <= 0.02
    # the lowest such level: one step lower loses more than the budget
    assert stop_loss(best, answerable, round(level - 0.01, 2)) > 0.02
    # a larger budget never asks for a higher level; none is fitted from too few questions
    assert stop_level(rows, everything, everything, max_loss=0.1)[0] <= level
    assert stop_level(rows, everything, everything, support=500)[0] is None
    no_evidence = replace(rows, features=tuple(f for f in rows.features if f != "evidence"))
    assert stop_level(no_evidence, everything, everything)[0] is None


def test_an_unanswerable_question_stopped_early_loses_no_gold():
    best = {"a": (0.9, False), "b": (0.9, True), "u": (0.95, False)}
    assert stop_loss(best, {"a", "b"}, 0.8) == 0.5  # "u" is not counted: it has no gold
    assert stop_loss(best, {"a", "b"}, 0.91) == 0.0
