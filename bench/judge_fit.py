"""Fit the offline judge's evidence weights on labelled chunk rows (``_judge_rows.py``).

The judge's evidence (``ragloop.nodes.offline_judge.score``) is a weighted blend of the
question-chunk cosine (mapped to 0..1 between ``cos_low`` and ``cos_high``), the best
sentence's and the heading's coverage of the question's terms, and, when the question names
something, how surely the heading (or, at ``name_in_text`` of the worth, the text) names it.
The loop reads the kept chunks in evidence order, so what the weights must do is put a chunk
that holds the answer among the first k: the objective is the share of questions whose gold
chunk (when a retriever found one) is among the k = 5 most evident, averaged over the corpora
(each corpus counts the same), ties broken by "the most evident chunk holds it".

Fit: an exhaustive search over ``GRID`` (the weights blend, so two of the three base weights
carry the information). Each corpus is also left out in turn (chosen on the other three,
scored on it); the fit is used only when that leave-one-corpus-out score is at least the
current weights' — otherwise the file keeps the current weights and says why. The drop level
``grade1`` stays the current one: the level that drops at most ``DROP_GOLD`` of these gold
chunks is reported (``drop_rule_level``), but these rows hold only the first round's
candidates, and in the full bench that level dropped gold chunks the later rounds find (kept
fell, answers did not move; docs/answer-quality.md). The "sufficient" level is not set here:
it comes from the answer model's fit (``calibrate.py``) on rows collected with these weights.

Writes the embedding model's entry of ``src/ragloop/data/judge_calibration.json`` with its
provenance (rows sha256, grid, objective, scores). Usage::

    python bench/judge_fit.py [--embeddings minilm|wordllama] [--rows PATH]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import itertools
import json
import sys
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np
from _labelled_rows import named

from ragloop.nodes.offline_judge import CALIBRATION_FILE, CALIBRATIONS, JudgeCalibration
from ragloop.safety import atomic_write_text

HERE = Path(__file__).resolve().parent
ROWS = HERE / "data" / "judge_rows.csv.gz"
OUT = HERE.parent / "src" / "ragloop" / "data" / CALIBRATION_FILE
K = 5
#: at most this share of the training questions' gold chunks may fall below the drop level
DROP_GOLD = 0.02
GRID = {
    "cos_low": (0.0, 0.1, 0.2, 0.3),
    "cos_high": (0.5, 0.6, 0.7, 0.8),
    "w_semantic": (0.2, 0.3, 0.5, 0.7),
    "w_sentence": (0.1, 0.25, 0.4),
    "w_heading": (0.0, 0.15, 0.3),
    "w_name": (0.0, 0.3, 0.5, 0.7),
    "name_in_text": (0.3, 0.6, 1.0),
}


class Table:
    """The rows as padded (questions x chunks) arrays, one question a line."""

    def __init__(self, rows: list[dict[str, str]]):
        by: dict[tuple[str, str], list[dict[str, str]]] = {}
        for r in rows:
            by.setdefault((r["corpus"], r["qid"]), []).append(r)
        # questions a retriever found the gold chunk for: the others cannot tell weights apart
        groups = [g for g in by.values() if any(r["label"] == "1" for r in g)]
        width = max(len(g) for g in groups)
        shape = (len(groups), width)
        self.corpus = np.array([g[0]["corpus"] for g in groups])
        self.valid = np.zeros(shape, bool)
        self.label = np.zeros(shape, bool)
        self.cos, self.sentence, self.heading = (np.zeros(shape) for _ in range(3))
        self.has_names = np.zeros(shape, bool)
        for i, g in enumerate(groups):
            for j, r in enumerate(g):
                self.valid[i, j] = True
                self.label[i, j] = r["label"] == "1"
                self.cos[i, j] = float(r["cos"])
                self.sentence[i, j] = float(r["sentence"])
                self.heading[i, j] = float(r["heading"])
                self.has_names[i, j] = int(r["names"]) > 0 and bool(r["names_heading"])
        self.groups, self.shape = groups, shape
        #: the names' part of the evidence for each ``name_in_text`` asked for
        self.name_part: dict[float, np.ndarray] = {}

    @staticmethod
    def _names(groups: list[list[dict[str, str]]], shape: tuple[int, int], nit: float):
        out = np.zeros(shape)
        for i, g in enumerate(groups):
            for j, r in enumerate(g):
                if r["names_heading"]:
                    h = [float(v) for v in r["names_heading"].split(";")]
                    t = [float(v) for v in r["names_text"].split(";")]
                    out[i, j] = sum(max(a, nit * b) for a, b in zip(h, t, strict=True)) / len(h)
        return out

    def evidence(self, cal: JudgeCalibration) -> np.ndarray:
        """``offline_judge.score`` over the whole table (padding at -1)."""
        span = max(cal.cos_high - cal.cos_low, 1e-6)
        semantic = np.clip((self.cos - cal.cos_low) / span, 0, 1)
        total = max(cal.w_semantic + cal.w_sentence + cal.w_heading, 1e-6)
        base = (
            cal.w_semantic * semantic
            + cal.w_sentence * self.sentence
            + cal.w_heading * self.heading
        ) / total
        names = self._name_part(cal.name_in_text)
        base = np.where(self.has_names, (1 - cal.w_name) * base + cal.w_name * names, base)
        return np.where(self.valid, np.clip(base, 0, 1), -1.0)

    def _name_part(self, nit: float) -> np.ndarray:
        if nit not in self.name_part:
            self.name_part[nit] = self._names(self.groups, self.shape, nit)
        return self.name_part[nit]

    def scores(self, ev: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
        """(gold among the k most evident, the most evident holds it), mean over corpora."""
        order = np.argsort(-ev[mask], axis=1, kind="stable")
        lab = np.take_along_axis(self.label[mask], order, axis=1)
        at_k, top = lab[:, :K].any(1), lab[:, 0]
        corp = self.corpus[mask]
        names = sorted(set(corp.tolist()))
        return (
            float(np.mean([at_k[corp == c].mean() for c in names])),
            float(np.mean([top[corp == c].mean() for c in names])),
        )


def search(table: Table, mask: np.ndarray) -> tuple[JudgeCalibration, tuple[float, float]]:
    """The grid point with the best (at k, top) on the questions under ``mask``."""
    best: tuple[tuple[float, float], JudgeCalibration] | None = None
    keys = list(GRID)
    for values in itertools.product(*(GRID[k] for k in keys)):
        cal = JudgeCalibration(**dict(zip(keys, values, strict=True)))
        if cal.cos_high <= cal.cos_low:
            continue
        s = table.scores(table.evidence(cal), mask)
        if best is None or s > best[0]:
            best = (s, cal)
    assert best is not None
    return best[1], best[0]


def drop_level(table: Table, ev: np.ndarray) -> float:
    """The highest level (two decimals) below which at most ``DROP_GOLD`` of gold chunks fall."""
    gold = ev[table.label]
    return float(np.floor(np.quantile(gold, DROP_GOLD) * 100) / 100)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embeddings", default="minilm", choices=("minilm", "wordllama"))
    ap.add_argument("--rows", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    path = args.rows or named(ROWS, args.embeddings)
    data = path.read_bytes()
    with gzip.open(path, "rt", newline="") as fh:
        table = Table(list(csv.DictReader(fh)))
    every = np.ones(len(table.corpus), bool)
    current = CALIBRATIONS.get(args.embeddings, JudgeCalibration())
    now = table.scores(table.evidence(current), every)
    loco_fit, loco_now = {}, {}
    for c in sorted(set(table.corpus.tolist())):
        cal, _ = search(table, table.corpus != c)
        on = table.corpus == c
        loco_fit[c] = table.scores(table.evidence(cal), on)
        loco_now[c] = table.scores(table.evidence(current), on)
        print(f"left out {c}: fitted {loco_fit[c]}  current {loco_now[c]}", file=sys.stderr)
    fitted, fit_scores = search(table, every)
    mean_fit = tuple(float(np.mean([v[i] for v in loco_fit.values()])) for i in (0, 1))
    mean_now = tuple(float(np.mean([v[i] for v in loco_now.values()])) for i in (0, 1))
    use = mean_fit >= mean_now
    chosen = (fitted if use else current).with_values(grade1=current.grade1)
    tunable = {f.name for f in fields(JudgeCalibration)} - {"grade2"}
    entry = {k: v for k, v in asdict(chosen).items() if k in tunable}
    entry["provenance"] = {
        "training_data": str(path.relative_to(HERE.parent)) if path.is_absolute() else str(path),
        "sha256": hashlib.sha256(data).hexdigest(),
        "questions": int(len(table.corpus)),
        "objective": f"gold chunk among the {K} most evident (then: the most evident holds it),"
        " mean over corpora; questions whose gold chunk no retriever found left out",
        "grid": {k: list(v) for k, v in GRID.items()},
        "grade1": "the current drop level; the highest level with at most "
        f"{DROP_GOLD:.0%} of these gold chunks below it is drop_rule_level",
        "drop_rule_level": drop_level(table, table.evidence(chosen)),
        "chosen": "fitted" if use else "previous weights (the fit lost on corpora it never saw)",
        "in_sample": {"fitted": _r(fit_scores), "previous": _r(now)},
        "leave_one_corpus_out": {
            c: {"fitted": _r(loco_fit[c]), "previous": _r(loco_now[c])} for c in loco_fit
        },
        "leave_one_corpus_out_mean": {"fitted": _r(mean_fit), "previous": _r(mean_now)},
        "previous": {k: v for k, v in asdict(current).items() if k in tunable},
    }
    old = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    old[args.embeddings] = entry
    atomic_write_text(args.out, json.dumps(old, indent=1, sort_keys=True) + "\n")
    print(json.dumps(entry, indent=1))
    print(f"wrote the {args.embeddings} entry of {args.out}")
    return 0


def _r(pair: tuple[float, float]) -> dict[str, float]:
    return {f"gold_in_top_{K}": round(pair[0], 4), "top_holds_gold": round(pair[1], 4)}


if __name__ == "__main__":
    sys.exit(main())
