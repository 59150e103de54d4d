"""Refit the extractive answer's sentence scorer and its "not found" level from labelled rows.

Input: the labelled sentence rows that ``bench/answer_quality.py --features`` writes (committed
as ``bench/data/answer_rows.csv.gz``: one row per sentence of the first twelve passages the
loop kept (``who`` = loop) and of hybrid's top k (``who`` = naive), with the passage's place
(``rank``) and judge grade, its ``sentences.FEATURES``, whether it holds the gold passage,
whether it may be quoted, and whether its question is unanswerable). Output:
``src/ragloop/data/answer_model.json`` with the coefficients (in the features' own units), the
training data's sha256, the split, the seed and the held-out scores, and the abstention
trade-off curves the levels were chosen from.

Sentence model: a logistic regression (scikit-learn, L2, C = 1, features standardised) on the
sentences the loop's answer reads (its first k passages). It is small, its coefficients read
as "what a feature is worth", and a ranking of sentences is what the answer needs; it is
compared, on the same held-out questions, with the hand-set weights.
Abstention model: a logistic regression of "the question is answerable" on
``sentences.QUESTION_FEATURES`` of the read sentences, fitted twice: ``judged`` on the loop's
read passages (with the judge's evidence), ``unjudged`` on hybrid's top k (without); its
level is the highest whose answerable not-found rate on the training questions is at most
``MAX_ANSWERABLE_NOT_FOUND``.
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

from ragloop.nodes.answer_model import Abstention, AnswerModel
from ragloop.nodes.extractive import AnswerWeights
from ragloop.nodes.sentences import FEATURES, QUESTION_FEATURES, question_features

HERE = Path(__file__).resolve().parent
ROWS = HERE / "data" / "answer_rows.csv.gz"
OUT = HERE.parent / "src" / "ragloop" / "data" / "answer_model.json"
SEED, HELD = 0, 0.3
#: the passages the answer reads (the bench's k)
READ = 5
#: the embedding model the rows' cosines come from (the bench's default, MiniLM int8)
EMBEDDINGS_MODEL = "sentence-transformers/all-MiniLM-L6-v2:onnx-int8-dynamic:8199be6f"
#: the "not found" level keeps answerable questions' not-found rate at or under this
MAX_ANSWERABLE_NOT_FOUND = 0.08


def load(path: Path) -> tuple[list[dict[str, str]], np.ndarray]:
    """The rows (older files without ``who``/``rank``/``grade`` read as the loop's first k)
    and their (rows x ``FEATURES``) matrix."""
    with gzip.open(path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r.setdefault("who", "loop")
        r.setdefault("rank", "1")
        r.setdefault("grade", "1")
    x = np.array([[float(r[f]) for f in FEATURES] for r in rows], dtype=float)
    return rows, x


def read_by(rows: list[dict[str, str]], who: str, depth: int = READ) -> np.ndarray:
    """Mask of the rows ``who``'s answer reads: its first ``depth`` passages."""
    return np.array([r["who"] == who and int(r["rank"]) <= depth for r in rows])


def question_table(
    rows: list[dict[str, str]], x: np.ndarray, score: np.ndarray, mask: np.ndarray
) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """(qids, corpora, answerable 0/1, QUESTION_FEATURES matrix) of the questions with rows in
    ``mask``, from their quotable sentences' scores and cosines and their passages' evidence."""
    by: dict[str, list[int]] = defaultdict(list)
    for i in np.flatnonzero(mask):
        by[rows[i]["qid"]].append(int(i))
    cos = FEATURES.index("cosine")
    qids, corpora, ys, feats = [], [], [], []
    for qid, ix in by.items():
        ok = [i for i in ix if rows[i]["flawed"] == "0"] or ix
        evidence = {rows[i]["rank"]: float(rows[i]["evidence"]) for i in ix}
        f = question_features(score[ok], x[ok, cos], evidence.values())
        qids.append(qid)
        corpora.append(rows[ix[0]]["corpus"])
        ys.append(int(rows[ix[0]]["unanswerable"] == "0"))
        feats.append([f[k] for k in QUESTION_FEATURES])
    return qids, corpora, np.array(ys), np.array(feats, dtype=float)


def not_found_rates(p: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float]:
    """(answerable, unanswerable) not-found rates when "not found" is said below ``level``."""
    a, u = p[y == 1], p[y == 0]
    return (
        float((a < level).mean()) if len(a) else 0.0,
        float((u < level).mean()) if len(u) else 0.0,
    )


def highest_level(p: np.ndarray, y: np.ndarray) -> float:
    """The highest level whose answerable not-found rate is at most the allowed one."""
    levels = np.unique(np.round(p, 4))
    ok = [float(t) for t in levels if not_found_rates(p, y, t)[0] <= MAX_ANSWERABLE_NOT_FOUND]
    return max(ok, default=0.0)


def fit_abstention(
    rows: list[dict[str, str]], x: np.ndarray, score: np.ndarray, who: str
) -> tuple[Abstention, dict]:
    """The abstention fit for ``who``'s read passages, its held-out and leave-one-corpus-out
    not-found rates and its trade-off curves (training and held-out questions)."""
    qids, corpora, y, q = question_table(rows, x, score, read_by(rows, who))
    held = np.array([held_out(qid) for qid in qids])
    w, b = fit(q[~held], y[~held])
    p = 1 / (1 + np.exp(-(b + q @ w)))
    level = highest_level(p[~held], y[~held])
    loco = {}
    for corpus in sorted(set(corpora)):
        inside = np.array([c == corpus for c in corpora])
        wc, bc = fit(q[~inside], y[~inside])
        pc = 1 / (1 + np.exp(-(bc + q @ wc)))
        a, u = not_found_rates(pc[inside], y[inside], highest_level(pc[~inside], y[~inside]))
        loco[corpus] = {"answerable": round(a, 3), "unanswerable": round(u, 3)}
    held_a, held_u = not_found_rates(p[held], y[held], level)
    best = QUESTION_FEATURES.index("best")
    only_best = highest_level(q[~held, best], y[~held])
    base_a, base_u = not_found_rates(q[held, best], y[held], only_best)
    levels = np.round(np.arange(0.0, 1.0001, 0.05), 2)
    report = {
        "questions": {"train": int((~held).sum()), "held_out": int(held.sum())},
        "level": round(level, 4),
        "held_out": {"answerable": round(held_a, 3), "unanswerable": round(held_u, 3)},
        "held_out_best_sentence_only": {
            "answerable": round(base_a, 3),
            "unanswerable": round(base_u, 3),
        },
        "leave_one_corpus_out": loco,
        "tradeoff_train": [
            [float(t), *(round(v, 3) for v in not_found_rates(p[~held], y[~held], t))]
            for t in levels
        ],
        "tradeoff_held_out": [
            [float(t), *(round(v, 3) for v in not_found_rates(p[held], y[held], t))] for t in levels
        ],
    }
    coef = {f: round(float(v), 5) for f, v in zip(QUESTION_FEATURES, w, strict=True)}
    return Abstention(coef, round(b, 5), round(level, 4)), report


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
    all_rows, all_x = load(args.rows)
    # the sentence model and its scores: the sentences the loop's answer reads
    loop_read = read_by(all_rows, "loop")
    rows, x = [r for r, m in zip(all_rows, loop_read, strict=True) if m], all_x[loop_read]
    y = np.array([r["label"] == "1" for r in rows], dtype=int)
    quotable = np.array([r["flawed"] == "0" for r in rows])
    held = np.array([held_out(r["qid"]) for r in rows])
    answerable = np.array([r["unanswerable"] == "0" for r in rows])
    train = ~held & quotable & answerable
    w, b = fit(x[train], y[train])
    prob = 1 / (1 + np.exp(-(b + x @ w)))
    hand = handset(x)
    test = held & quotable & answerable
    print(f"{len(rows)} sentence rows read by the loop, {len({r['qid'] for r in rows})} questions; "
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
    print("trade-off, best sentence only (training questions): level  answerable  unanswerable")
    for t, a, u in curve:
        print(f"  {t:6.3f} {a:8.3f} {u:8.3f}{'  <- chosen' if t == level else ''}")
    # the question-level abstention fits, on every row's score under the chosen scorer
    all_score = 1 / (1 + np.exp(-(b + all_x @ w))) if fitted else handset(all_x)
    abstain, abstain_report = {}, {}
    for variant, who in (("judged", "loop"), ("unjudged", "naive")):
        if not read_by(all_rows, who).any():
            continue
        abstain[variant], abstain_report[variant] = fit_abstention(all_rows, all_x, all_score, who)
        rep = abstain_report[variant]
        print(f"abstention ({variant}, {who}'s read passages): " + json.dumps(
            {k: v for k, v in rep.items() if not k.startswith("tradeoff")}
        ))  # fmt: skip
        print("  trade-off: level  answerable-not-found (train, held-out)  "
              "unanswerable-not-found (train, held-out)")  # fmt: skip
        for (t, a, u), (_, ha, hu) in zip(
            rep["tradeoff_train"], rep["tradeoff_held_out"], strict=True
        ):
            print(f"  {t:5.2f}   {a:6.3f} {ha:6.3f}   {u:6.3f} {hu:6.3f}")
    data = args.rows.read_bytes()
    model = AnswerModel(
        coef={f: round(float(v), 5) for f, v in zip(FEATURES, w, strict=True)}
        if fitted
        else handset_coef(),
        intercept=round(b, 5) if fitted else 0.0,
        link="logistic" if fitted else "identity",
        not_found_below=float(level),
        floor_share=floor_share,
        abstain=abstain,
        provenance={
            "training_data": os.path.relpath(args.rows, HERE.parent),
            "sha256": hashlib.sha256(data).hexdigest(),
            "rows": len(all_rows),
            "split": f"questions by sha1(seed/qid), {HELD:.0%} held out; sentence model on the"
            f" quotable sentences of answerable questions in the loop's first {READ} passages",
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
            "abstention": abstain_report,
        },
    )
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(model.to_dict(), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
