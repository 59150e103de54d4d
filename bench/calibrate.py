"""Refit the extractive answer's sentence scorer and its "not found" level from labelled rows.

Input: the labelled sentence rows that ``bench/answer_quality.py --features`` writes (committed
as ``bench/data/answer_rows.csv.gz``: one row per sentence the loop's answer step read, with
its ``sentences.FEATURES``, whether it holds the gold passage, whether it may be quoted, and
whether its question is unanswerable). Output: ``src/ragloop/data/answer_model.json`` with the
coefficients (in the features' own units), the training data's sha256, the split, the seed and
the held-out scores, and the abstention trade-off curve it chose the level from.

Model: a logistic regression (scikit-learn, L2, C = 1, features standardised). It is small,
its coefficients read as "what a feature is worth", and a ranking of sentences is what the
answer needs; it is compared, on the same held-out questions, with the hand-set weights.
Split: questions by a hash of (seed, question id), 30% held out; plus leave-one-corpus-out.
Usage: ``python bench/calibrate.py [--rows bench/data/answer_rows.csv.gz] [--out PATH]``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from ragloop.nodes.answer_model import AnswerModel
from ragloop.nodes.extractive import AnswerWeights
from ragloop.nodes.sentences import FEATURES

HERE = Path(__file__).resolve().parent
ROWS = HERE / "data" / "answer_rows.csv.gz"
OUT = HERE.parent / "src" / "ragloop" / "data" / "answer_model.json"
SEED, HELD = 0, 0.3
#: the embedding model the rows' cosines come from (the bench's default, MiniLM int8)
EMBEDDINGS_MODEL = "sentence-transformers/all-MiniLM-L6-v2:onnx-int8-dynamic:8199be6f"
#: the "not found" level keeps answerable questions' not-found rate at or under this
MAX_ANSWERABLE_NOT_FOUND = 0.08


def load(path: Path) -> tuple[list[dict[str, str]], np.ndarray]:
    with gzip.open(path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    x = np.array([[float(r[f]) for f in FEATURES] for r in rows], dtype=float)
    return rows, x


def held_out(qid: str, seed: int = SEED) -> bool:
    return hashlib.sha1(f"{seed}/{qid}".encode()).digest()[0] < 256 * HELD


def handset_coef() -> dict[str, float]:
    """The hand-set ``AnswerWeights`` as coefficients of the same features."""
    w = AnswerWeights()
    return {
        "cosine": 1.0,
        "name_sentence": w.name_sentence,
        "name_heading": w.name_heading,
        "heading_cosine": w.heading_cosine,
        "name_entry": w.name_entry,
        "subject_entry": w.subject_entry,
        "evidence": w.evidence,
    }


def handset(x: np.ndarray) -> np.ndarray:
    coef = handset_coef()
    return x @ np.array([coef.get(f, 0.0) for f in FEATURES])


def per_question(rows: list[dict[str, str]], score: np.ndarray, mask: np.ndarray) -> dict:
    """qid -> (corpus, unanswerable, support = best quotable score, best holds gold, any gold)."""
    best: dict[str, list] = {}
    for i in np.flatnonzero(mask):
        r = rows[i]
        if r["flawed"] == "1":
            continue
        b = best.setdefault(r["qid"], [r["corpus"], r["unanswerable"] == "1", -1e9, False, False])
        b[4] = b[4] or r["label"] == "1"
        if score[i] > b[2]:
            b[2], b[3] = float(score[i]), r["label"] == "1"
    return best


def top1(q: dict) -> float:
    """Among answerable questions whose read sentences hold the gold: best sentence is gold."""
    xs = [b[3] for b in q.values() if not b[1] and b[4]]
    return sum(xs) / len(xs) if xs else float("nan")


def tradeoff(q: dict, levels: np.ndarray) -> list[tuple[float, float, float]]:
    """(level, answerable not-found rate, unanswerable not-found rate) at each level."""
    ans = np.array([b[2] for b in q.values() if not b[1]])
    un = np.array([b[2] for b in q.values() if b[1]])
    return [
        (float(t), float((ans < t).mean()) if len(ans) else 0.0, float((un < t).mean()))
        for t in levels
    ]


def quoted_hit(
    rows: list[dict[str, str]], score: np.ndarray, mask: np.ndarray, share: float
) -> float:
    """Answerable questions whose quoted sentences (the best, then up to two more scoring
    ``share`` of it) hold the gold; one source a sentence is not modelled here."""
    by: dict[str, list[int]] = defaultdict(list)
    for i in np.flatnonzero(mask):
        if rows[i]["unanswerable"] == "0" and rows[i]["flawed"] == "0":
            by[rows[i]["qid"]].append(int(i))
    hits = []
    for ix in by.values():
        ix.sort(key=lambda i: -score[i])
        picked = [i for i in ix if score[i] >= share * score[ix[0]]][:3]
        hits.append(any(rows[i]["label"] == "1" for i in picked))
    return float(np.mean(hits)) if hits else float("nan")


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Logistic regression on standardised features; coefficients back in raw units."""
    mu, sd = x.mean(0), x.std(0)
    sd[sd == 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=2000).fit((x - mu) / sd, y)
    w = model.coef_[0] / sd
    return w, float(model.intercept_[0] - (model.coef_[0] * mu / sd).sum())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=Path, default=ROWS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows, x = load(args.rows)
    y = np.array([r["label"] == "1" for r in rows], dtype=int)
    quotable = np.array([r["flawed"] == "0" for r in rows])
    held = np.array([held_out(r["qid"]) for r in rows])
    answerable = np.array([r["unanswerable"] == "0" for r in rows])
    train = ~held & quotable & answerable
    w, b = fit(x[train], y[train])
    prob = 1 / (1 + np.exp(-(b + x @ w)))
    hand = handset(x)
    test = held & quotable & answerable
    print(f"{len(rows)} sentence rows, {len({r['qid'] for r in rows})} questions; "
          f"train {train.sum()} rows, held-out {test.sum()} rows")  # fmt: skip
    auc = {
        "model": roc_auc_score(y[test], prob[test]),
        "handset": roc_auc_score(y[test], hand[test]),
    }
    q_model, q_hand = per_question(rows, prob, held), per_question(rows, hand, held)
    scores = {
        "sentence_auc": {k: round(v, 3) for k, v in auc.items()},
        "best_sentence_holds_gold": {
            "model": round(top1(q_model), 3),
            "handset": round(top1(q_hand), 3),
        },
    }
    loco = {}
    for corpus in sorted({r["corpus"] for r in rows}):
        inside = np.array([r["corpus"] == corpus for r in rows])
        wc, bc = fit(x[~inside & quotable & answerable], y[~inside & quotable & answerable])
        pc = 1 / (1 + np.exp(-(bc + x @ wc)))
        loco[corpus] = {
            "model": round(top1(per_question(rows, pc, inside)), 3),
            "handset": round(top1(per_question(rows, hand, inside)), 3),
        }
    scores["leave_one_corpus_out_best_sentence_holds_gold"] = loco
    # the scorer shipped: the fitted one only when it also wins on corpora it never saw
    mean = {k: float(np.mean([v[k] for v in loco.values()])) for k in ("model", "handset")}
    fitted = mean["model"] >= mean["handset"]
    scores["chosen"] = "logistic (fitted)" if fitted else "hand-set weights (identity link)"
    score = prob if fitted else hand
    # how close to the best a further sentence must score to be quoted: the largest share
    # whose training questions' quoted-hit rate is within 0.005 of the best share's
    shares = (0.7, 0.5, 0.3, 0.2, 0.1)
    hit = {f: quoted_hit(rows, score, ~held, f) for f in shares}
    floor_share = max(f for f in shares if hit[f] >= max(hit.values()) - 0.005)
    scores["quoted_sentences_hold_gold"] = {
        "floor_share": floor_share,
        "train": {str(f): round(v, 3) for f, v in hit.items()},
        "held_out": round(quoted_hit(rows, score, held, floor_share), 3),
        "held_out_at_0.7": round(quoted_hit(rows, score, held, 0.7), 3),
    }
    # the "not found" level: on the training questions, the highest level that keeps the
    # answerable questions' not-found rate at or under MAX_ANSWERABLE_NOT_FOUND
    q_train = per_question(rows, score, ~held)
    levels = np.round(np.arange(0.0, 0.3 if fitted else 1.0, 0.005 if fitted else 0.02), 3)
    curve = tradeoff(q_train, levels)
    level = max((t for t, a, _ in curve if a <= MAX_ANSWERABLE_NOT_FOUND), default=0.0)
    held_curve = tradeoff(per_question(rows, score, held), np.array([level]))[0]
    scores["not_found_held_out"] = {
        "answerable": round(held_curve[1], 3),
        "unanswerable": round(held_curve[2], 3),
    }
    print(json.dumps(scores, indent=1))
    print("trade-off (training questions): level  answerable-not-found  unanswerable-not-found")
    for t, a, u in curve:
        print(f"  {t:6.3f} {a:8.3f} {u:8.3f}{'  <- chosen' if t == level else ''}")
    data = args.rows.read_bytes()
    model = AnswerModel(
        coef={f: round(float(v), 5) for f, v in zip(FEATURES, w, strict=True)}
        if fitted
        else handset_coef(),
        intercept=round(b, 5) if fitted else 0.0,
        link="logistic" if fitted else "identity",
        not_found_below=float(level),
        floor_share=floor_share,
        provenance={
            "training_data": os.path.relpath(args.rows, HERE.parent),
            "sha256": hashlib.sha256(data).hexdigest(),
            "rows": len(rows),
            "split": f"questions by sha1(seed/qid), {HELD:.0%} held out; quotable answerable rows",
            "seed": SEED,
            # the cosines' scale is the embedding model's: the model serves that one only
            "embeddings_model": EMBEDDINGS_MODEL,
            "model": "sklearn LogisticRegression(C=1.0), standardised features"
            if fitted
            else "hand-set AnswerWeights (the fit lost on corpora it never saw)",
            "fitted_coef": {f: round(float(v), 5) for f, v in zip(FEATURES, w, strict=True)},
            "fitted_intercept": round(b, 5),
            "not_found_rule": "highest level with answerable not-found <= "
            f"{MAX_ANSWERABLE_NOT_FOUND} on the training questions",
            "held_out": scores,
            "tradeoff_train": [[t, round(a, 3), round(u, 3)] for t, a, u in curve],
        },
    )
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(model.to_dict(), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
