"""Refit the extractive answer's sentence scorer and its "not found" level from labelled rows.

Input: the labelled sentence rows that ``bench/answer_quality.py --features`` writes (committed
as ``bench/data/answer_rows.csv.gz``: one row per sentence the loop's answer step read, with
its ``sentences.FEATURES``, whether it holds the gold passage, whether it may be quoted, and
whether its question is unanswerable). Output: ``src/ragloop/data/answer_model.json`` with the
coefficients (in the features' own units), the training data's sha256, the split, the seed and
the held-out scores, and the abstention trade-off curve it chose the level from.

Model: a logistic regression (L2, C = 1, features standardised; fitted by
``ragloop.calibration.fit``, the same code ``ragloop calibrate`` fits a user's corpus with).
It is small, its coefficients read as "what a feature is worth", and a ranking of sentences is
what the answer needs; it is compared, on the same held-out questions, with the hand-set
weights. Split: questions by a hash of (seed, question id), 30% held out; plus
leave-one-corpus-out.
Usage: ``python bench/calibrate.py [--rows bench/data/answer_rows.csv.gz] [--out PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from ragloop.calibration.corpus import handset_model
from ragloop.calibration.fit import (
    HELD,
    MAX_ANSWERABLE_NOT_FOUND,
    SEED,
    SHARES,
    fit_logistic,
    fit_rows,
    held_out,
    per_question,
    quoted_hit,
    sigmoid,
    top1,
    tradeoff,
)
from ragloop.calibration.rows import SentenceRows, read_rows
from ragloop.nodes.answer_model import AnswerModel
from ragloop.safety import atomic_write_text

HERE = Path(__file__).resolve().parent
ROWS = HERE / "data" / "answer_rows.csv.gz"
OUT = HERE.parent / "src" / "ragloop" / "data" / "answer_model.json"
#: the embedding model the rows' cosines come from (the bench's default, MiniLM int8)
EMBEDDINGS_MODEL = "sentence-transformers/all-MiniLM-L6-v2:onnx-int8-dynamic:8199be6f"


def loco(rows: SentenceRows, hand: np.ndarray) -> dict[str, dict[str, float]]:
    """Per corpus: best sentence holds the gold, fitted without that corpus vs hand-set."""
    quotable = ~rows.flawed & ~rows.unanswerable
    out = {}
    for corpus in sorted(set(rows.corpus.tolist())):
        inside = rows.corpus == corpus
        w, b = fit_logistic(rows.x[~inside & quotable], rows.label[~inside & quotable])
        out[corpus] = {
            "model": round(top1(per_question(rows, sigmoid(b + rows.x @ w), inside)), 3),
            "handset": round(top1(per_question(rows, hand, inside)), 3),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, default=ROWS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows, sha = read_rows(args.rows)
    held = np.array([held_out(str(q)) for q in rows.qid], dtype=bool)
    hand_model = handset_model()
    hand = hand_model.probability(rows.x)
    fit = fit_rows(rows, ~held, baselines={"handset": hand_model.probability}, held=held)
    print(f"{len(rows)} sentence rows, {rows.questions} questions; "
          f"train {fit.train_rows} rows, held-out {fit.held_rows} rows")  # fmt: skip
    scores = {k: fit.scores[k] for k in ("sentence_auc", "best_sentence_holds_gold")}
    scores["leave_one_corpus_out_best_sentence_holds_gold"] = by_corpus = loco(rows, hand)
    # the scorer shipped: the fitted one only when it also wins on corpora it never saw
    mean = {k: float(np.mean([v[k] for v in by_corpus.values()])) for k in ("model", "handset")}
    fitted = mean["model"] >= mean["handset"]
    scores["chosen"] = "logistic (fitted)" if fitted else "hand-set weights (identity link)"
    if fitted:
        floor_share, level, curve = fit.floor_share, fit.not_found_below, fit.curve
        scores["quoted_sentences_hold_gold"] = {
            **fit.scores["quoted_sentences_hold_gold"],
            "held_out_at_0.7": round(quoted_hit(rows, fit.probability(rows.x, rows.features),
                                                held, 0.7), 3),
        }  # fmt: skip
        scores["not_found_held_out"] = fit.scores["not_found_held_out"]
    else:  # the hand-set scores: the same choices, on their scale
        hit = {f: quoted_hit(rows, hand, ~held, f) for f in SHARES}
        floor_share = max(f for f in SHARES if hit[f] >= max(hit.values()) - 0.005)
        scores["quoted_sentences_hold_gold"] = {
            "floor_share": floor_share,
            "train": {str(f): round(v, 3) for f, v in hit.items()},
            "held_out": round(quoted_hit(rows, hand, held, floor_share), 3),
        }
        curve = tradeoff(per_question(rows, hand, ~held), np.round(np.arange(0, 1.0, 0.02), 3))
        level = max((t for t, a, _ in curve if a <= MAX_ANSWERABLE_NOT_FOUND), default=0.0)
        _, a, u = tradeoff(per_question(rows, hand, held), np.array([level]))[0]
        scores["not_found_held_out"] = {"answerable": round(a, 3), "unanswerable": round(u, 3)}
    scores["judge_stop_level"] = fit.scores["judge_stop_level"]
    print(json.dumps(scores, indent=1))
    print("trade-off (training questions): level  answerable-not-found  unanswerable-not-found")
    for t, a, u in curve:
        print(f"  {t:6.3f} {a:8.3f} {u:8.3f}{'  <- chosen' if t == level else ''}")
    model = AnswerModel(
        coef=fit.coef if fitted else hand_model.coef,
        intercept=fit.intercept if fitted else 0.0,
        link="logistic" if fitted else "identity",
        not_found_below=float(level),
        floor_share=floor_share,
        stop_level=fit.stop_level,
        provenance={
            "training_data": os.path.relpath(args.rows, HERE.parent),
            "sha256": sha,
            "rows": len(rows),
            "split": f"questions by sha1(seed/qid), {HELD:.0%} held out; quotable answerable rows",
            "seed": SEED,
            # the cosines' scale is the embedding model's: the model serves that one only
            "embeddings_model": EMBEDDINGS_MODEL,
            "model": "logistic regression, L2 (C=1), standardised features, Newton (numpy)"
            if fitted
            else "hand-set AnswerWeights (the fit lost on corpora it never saw)",
            "fitted_coef": fit.coef,
            "fitted_intercept": fit.intercept,
            "not_found_rule": "highest level with answerable not-found <= "
            f"{MAX_ANSWERABLE_NOT_FOUND} on the training questions",
            "held_out": scores,
            "tradeoff_train": [[t, round(a, 3), round(u, 3)] for t, a, u in curve],
        },
    )
    atomic_write_text(args.out, json.dumps(model.to_dict(), indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
