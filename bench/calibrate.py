"""Refit the extractive answer's sentence scorer and its "not found" level from labelled rows.

Input: the labelled sentence rows that ``bench/answer_quality.py --features`` writes (committed
as ``bench/data/answer_rows.csv.gz``: one row per sentence of the first twelve passages the
loop kept (``who`` = loop) and of hybrid's top k (``who`` = naive), with the passage's place
(``rank``) and judge grade, its ``sentences.FEATURES``, whether it holds the gold passage,
whether it may be quoted, and whether its question is unanswerable). Output:
``src/ragloop/data/answer_model.json`` with the coefficients (in the features' own units), the
training data's sha256, the split, the seed and the held-out scores, the judge's stop level,
and the abstention trade-off curves the levels were chosen from.

Sentence model: a logistic regression (L2, C = 1, features standardised; fitted by
``ragloop.calibration.fit``, the same code ``ragloop calibrate`` fits a user's corpus with) on
the sentences the loop's answer reads (its first k passages). It is small, its coefficients
read as "what a feature is worth", and a ranking of sentences is what the answer needs; it is
compared, on the same held-out questions, with the hand-set weights.
Abstention model: a logistic regression (the same fit) of "the question is answerable" on
``question.QUESTION_FEATURES`` of the read sentences, fitted twice: ``judged`` on the loop's
read passages (with the judge's evidence), ``unjudged`` on hybrid's top k (without); its
level is the highest whose answerable not-found rate on the training questions is at most
``MAX_ANSWERABLE_NOT_FOUND``.
Split: questions by a hash of (seed, question id), 30% held out; plus leave-one-corpus-out.
Usage: ``python bench/calibrate.py [--embeddings minilm|wordllama] [--rows PATH] [--out PATH]
[--without FEATURE ...]`` (with ``--embeddings wordllama``:
``bench/data/answer_rows.wordllama.csv.gz`` in, ``src/ragloop/data/answer_model.wordllama.json``
out). The shipped files are reproduced by ``python bench/calibrate.py`` and ``python
bench/calibrate.py --embeddings wordllama --without evidence_gap`` (WordLlama's fit with that
feature lost on PostgreSQL, so its model reads it as 0; the provenance records the features
left out).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import shlex
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from _labelled_rows import DEFAULT_EMBEDDINGS, HERE, ROWS, left_out, named, read_labelled

from ragloop.calibration.corpus import handset_model
from ragloop.calibration.fit import (
    HELD,
    MAX_ANSWERABLE_NOT_FOUND,
    SEED,
    SHARES,
    fit_logistic,
    fit_rows,
    sigmoid,
)
from ragloop.calibration.rows import SentenceRows, held_mask
from ragloop.calibration.scores import per_question, quoted_hit, top1, tradeoff
from ragloop.nodes.answer_model import Abstention, AnswerModel
from ragloop.nodes.question import QUESTION_FEATURES, question_features
from ragloop.nodes.sentences import FEATURES
from ragloop.safety import atomic_write_text

OUT = HERE.parent / "src" / "ragloop" / "data" / "answer_model.json"
#: the embedding model the rows' cosines come from (the bench's default, MiniLM int8)
EMBEDDINGS_MODEL = "sentence-transformers/all-MiniLM-L6-v2:onnx-int8-dynamic:8199be6f"


def embeddings_model(spec: str) -> str:
    """The id of the embedding model ``spec`` names (what an index records and the answer
    model is matched by)."""
    if spec == "minilm":
        return EMBEDDINGS_MODEL
    from ragloop.embeddings import model_id
    from ragloop.providers import get_embeddings

    return model_id(get_embeddings(spec))


#: the passages the answer reads (the bench's k)
READ = 5


def load(path: Path) -> tuple[list[dict[str, str]], np.ndarray]:
    """The rows (older files without ``who``/``rank``/``grade`` read as the loop's first k)
    and their (rows x ``FEATURES``) matrix."""
    with gzip.open(path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r.setdefault("who", "loop")
        r.setdefault("rank", "1")
        r.setdefault("grade", "1")
        r.setdefault("unknown_names", "0")  # rows collected before that column existed
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
        f = question_features(
            score[ok], x[ok, cos], evidence.values(), float(rows[ix[0]]["unknown_names"])
        )
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
    held = held_mask(qids)
    w, b = fit_logistic(q[~held], y[~held])
    p = 1 / (1 + np.exp(-(b + q @ w)))
    level = highest_level(p[~held], y[~held])
    loco = {}
    for corpus in sorted(set(corpora)):
        inside = np.array([c == corpus for c in corpora])
        wc, bc = fit_logistic(q[~inside], y[~inside])
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


def refit_command(args: argparse.Namespace) -> str:
    """The command line that writes this fit again (run from the repository's root)."""
    words = ["python", "bench/calibrate.py"]
    if args.embeddings != DEFAULT_EMBEDDINGS:
        words += ["--embeddings", args.embeddings]
    if args.rows != named(ROWS, args.embeddings):
        words += ["--rows", os.path.relpath(args.rows, HERE.parent)]
    for name in sorted(args.without):
        words += ["--without", name]
    return " ".join(shlex.quote(w) for w in words)


def main() -> int:
    args, every, sha = read_labelled(OUT)
    all_rows, all_x = load(args.rows)
    left_out(all_x, FEATURES, args.without)
    # the sentence model and its scores: the sentences the loop's answer reads
    rows = every.select(read_by(all_rows, "loop"))
    held = held_mask(rows.qid)
    hand_model = handset_model()
    hand = hand_model.probability(rows.x)
    fit = fit_rows(rows, ~held, baselines={"handset": hand_model.probability}, held=held)
    print(f"{len(rows)} sentence rows read by the loop, {rows.questions} questions; "
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
    # the question-level abstention fits, on every row's score under the chosen scorer
    all_score = fit.probability(all_x, FEATURES) if fitted else hand_model.probability(all_x)
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
    model = AnswerModel(
        coef=fit.coef if fitted else hand_model.coef,
        intercept=fit.intercept if fitted else 0.0,
        link="logistic" if fitted else "identity",
        not_found_below=float(level),
        floor_share=floor_share,
        abstain=abstain,
        stop_level=fit.stop_level,
        provenance={
            "training_data": os.path.relpath(args.rows, HERE.parent),
            "sha256": sha,
            "rows": len(all_rows),
            "split": f"questions by sha1(seed/qid), {HELD:.0%} held out; sentence model on the"
            f" quotable sentences of answerable questions in the loop's first {READ} passages",
            "seed": SEED,
            # features whose columns were read as 0 (``--without``): not part of this fit
            **({"features_left_out": sorted(args.without)} if args.without else {}),
            "command": refit_command(args),
            # the cosines' scale is the embedding model's: the model serves that one only
            "embeddings_model": embeddings_model(args.embeddings),
            "model": "logistic regression, L2 (C=1), standardised features, Newton (numpy)"
            if fitted
            else "hand-set AnswerWeights (the fit lost on corpora it never saw)",
            "fitted_coef": fit.coef,
            "fitted_intercept": fit.intercept,
            "not_found_rule": "highest level with answerable not-found <= "
            f"{MAX_ANSWERABLE_NOT_FOUND} on the training questions",
            "held_out": scores,
            "tradeoff_train": [[t, round(a, 3), round(u, 3)] for t, a, u in curve],
            "abstention": abstain_report,
        },
    )
    atomic_write_text(args.out, json.dumps(model.to_dict(), indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
