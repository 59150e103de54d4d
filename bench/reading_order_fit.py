"""Fit the order in which the offline answer reads the loop's kept passages.

The answer reads the first k kept passages. Ranked by the judge's grade and evidence alone, the
passages the later rounds found can push the first retrieval's out of the first k; with
WordLlama's coarse cosines on the PostgreSQL corpus the loop read the gold less often (kept@5
0.62) than naive hybrid did (0.69). The fitted order fuses two ranks, reciprocal-rank style::

    score = 1 / (k0 + place by grade and evidence) + found_weight / (k0 + place found)

(places from 0; "found" is the order the loop kept them in: the first round first, each round
in its retriever's order). ``found_weight`` 0 is the judge's order alone.

Data: the committed rows of ``bench/_reading_rows.py`` (``bench/data/reading_rows.csv.gz``,
MiniLM, and ``reading_rows.wordllama.csv.gz``): each kept passage of each answerable question
with its place found, its place in the judge's order (grade, evidence and, for a question that
names nothing, the subject bonus: ``nodes.reading.judge_order``) and whether it holds the
gold. Objective: the gold among the first 5 read, the mean over the eight (embedding model,
corpus) cells. A grid point is
used only when, chosen with each corpus left out (both models), it also beats the judge's
order on the corpus left out; otherwise ``found_weight`` is written as 0. Output:
``src/ragloop/data/reading_order.json`` with the provenance (rows' sha256, grid, scores).
Usage: ``python bench/reading_order_fit.py [--out PATH]``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROWS = {
    "minilm": HERE / "data" / "reading_rows.csv.gz",
    "wordllama": HERE / "data" / "reading_rows.wordllama.csv.gz",
}
OUT = HERE.parent / "src" / "ragloop" / "data" / "reading_order.json"
K0 = (1, 2, 5, 10, 60)
WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
READ = 5

Passage = tuple[int, int, int]  # place found, place in the judge's order, holds the gold


def load(path: Path) -> dict[str, dict[str, list[Passage]]]:
    """corpus -> question id -> its kept passages in the order found."""
    out: dict[str, dict[str, list[Passage]]] = defaultdict(dict)
    with gzip.open(path, "rt", newline="") as fh:
        for r in csv.DictReader(fh):
            out[r["corpus"]].setdefault(r["qid"], []).append(
                (int(r["found"]), int(r["place"]), int(r["gold"]))
            )
    return out


def order(passages: list[Passage], k0: float, weight: float) -> list[Passage]:
    """The passages in reading order (see the module docstring); the same rule as
    ``ragloop.nodes.answer.rank_contexts``."""
    if weight == 0:
        return sorted(passages, key=lambda p: p[1])
    return sorted(passages, key=lambda p: -(1 / (k0 + p[1]) + weight / (k0 + p[0])))


def read_gold(questions: dict[str, list[Passage]], k0: float, weight: float) -> float:
    """Share of the questions whose first ``READ`` passages in this order hold the gold."""
    hits = [any(p[2] for p in order(ps, k0, weight)[:READ]) for ps in questions.values()]
    return sum(hits) / len(hits) if hits else 0.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    data = {emb: load(path) for emb, path in ROWS.items()}
    shas = {emb: hashlib.sha256(path.read_bytes()).hexdigest() for emb, path in ROWS.items()}
    cells = [(emb, c) for emb in data for c in sorted(data[emb])]
    grid = [(k0, w) for k0 in K0 for w in WEIGHTS if w > 0] + [(1, 0.0)]

    def mean(point: tuple[int, float], only: list[tuple[str, str]]) -> float:
        return sum(read_gold(data[e][c], *point) for e, c in only) / len(only)

    judge_only = (1, 0.0)
    best = max(grid, key=lambda p: (round(mean(p, cells), 6), -p[1]))
    print("gold among the first 5 read (mean over embedding model x corpus):")
    for p in grid:
        print(f"  k0={p[0]:<3} found_weight={p[1]:<5} {mean(p, cells):.4f}")
    left_out: dict[str, dict[str, float]] = {}
    for corpus in sorted({c for _, c in cells}):
        train = [cell for cell in cells if cell[1] != corpus]
        test = [cell for cell in cells if cell[1] == corpus]
        chosen = max(grid, key=lambda p: (round(mean(p, train), 6), -p[1]))
        left_out[corpus] = {
            "chosen": list(chosen),
            "fitted": round(mean(chosen, test), 4),
            "judge_order": round(mean(judge_only, test), 4),
        }
    wins = sum(v["fitted"] for v in left_out.values()) > sum(
        v["judge_order"] for v in left_out.values()
    )
    use = best if wins else judge_only
    per_cell = {
        f"{e}/{c}": {
            "fitted": round(read_gold(data[e][c], *best), 4),
            "judge_order": round(read_gold(data[e][c], *judge_only), 4),
        }
        for e, c in cells
    }
    report = {
        "k0": use[0],
        "found_weight": use[1],
        "provenance": {
            "fitted_by": "bench/reading_order_fit.py",
            "training_data": {emb: str(p.relative_to(HERE.parent)) for emb, p in ROWS.items()},
            "sha256": shas,
            "objective": f"gold among the first {READ} passages read, mean over (model, corpus)",
            "grid": {"k0": list(K0), "found_weight": list(WEIGHTS)},
            "in_sample": {"fitted": round(mean(best, cells), 4),
                          "judge_order": round(mean(judge_only, cells), 4)},
            "per_cell": per_cell,
            "leave_one_corpus_out": left_out,
            "used": "fitted" if wins else "judge order (the fit lost on corpora left out)",
        },
    }  # fmt: skip
    print(json.dumps(report, indent=1))
    text = json.dumps(report, indent=1) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
