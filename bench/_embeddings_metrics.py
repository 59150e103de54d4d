"""Scoring for bench/embeddings.py: passage hit@5 / MRR@5 by question kind, RRF, similarities."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from _pgdocs import KINDS, answer_hit, passage_hit

CUTOFF = 5
DEPTH = 20  # ranks fused by RRF, as HybridRetriever's fetch_k


def first_rank(
    chunks: Sequence[Any], order: Sequence[int], q: Any, answers: bool = False
) -> int | None:
    """1-based rank of the first chunk in ``order`` (top CUTOFF) holding q's gold passage
    (with ``answers``, or any passage judged to answer q: see _pgdocs.ANSWERS_PATH)."""
    found = answer_hit if answers else passage_hit
    for rank, i in enumerate(order[:CUTOFF], start=1):
        c = chunks[i]
        if found(c.page_content, q, c.metadata.get("source")):
            return rank
    return None


def dense_orders(docs: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Top DEPTH chunk indices per question by cosine (rows are unit vectors)."""
    sims = queries @ docs.T
    top = np.argpartition(-sims, DEPTH, axis=1)[:, :DEPTH]
    rows = np.arange(len(queries))[:, None]
    return np.take_along_axis(top, np.argsort(-sims[rows, top], axis=1, kind="stable"), axis=1)


def rrf(a: Sequence[int], b: Sequence[int], k: int = 60) -> list[int]:
    """Reciprocal rank fusion of two rankings of chunk indices (as retrievers/hybrid.py)."""
    score: dict[int, float] = {}
    for ranking in (a, b):
        for rank, i in enumerate(ranking, start=1):
            score[int(i)] = score.get(int(i), 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda i: -score[i])


def summarise(ranks: list[int | None], kinds: list[str]) -> dict[str, tuple[float, float]]:
    """(hit@5, MRR@5) per kind and overall."""
    out = {}
    for kind in (*KINDS, "all"):
        sel = [r for r, k in zip(ranks, kinds, strict=True) if kind in ("all", k)]
        if sel:
            hit = sum(r is not None for r in sel) / len(sel)
            mrr = sum(1 / r for r in sel if r is not None) / len(sel)
            out[kind] = (hit, mrr)
    return out


def gold_index(chunks: Sequence[Any], q: Any) -> list[int]:
    """Chunks that hold q's gold passage (on its gold page)."""
    return [
        i
        for i, c in enumerate(chunks)
        if c.metadata.get("source") == q.gold_page and passage_hit(c.page_content, q)
    ]


def percentiles(values: Sequence[float]) -> str:
    if not values:
        return "-"
    p = np.percentile(np.asarray(values), [10, 25, 50, 75, 90])
    return " / ".join(f"{v:.2f}" for v in p)


def similarity_rows(
    chunks: Sequence[Any],
    docs: np.ndarray,
    queries: np.ndarray,
    questions: Sequence[Any],
    seed: int,
) -> dict[str, list[float]]:
    """Cosine of question vs gold passage, vs a random other-page chunk, and question pairs."""
    rng = np.random.default_rng(seed)
    gold, rand = [], []
    for qi, q in enumerate(questions):
        g = gold_index(chunks, q)
        if g:
            gold.append(float(np.max(docs[g] @ queries[qi])))
        while True:
            j = int(rng.integers(len(chunks)))
            if chunks[j].metadata.get("source") != q.gold_page:
                break
        rand.append(float(docs[j] @ queries[qi]))
    # same target asked by name and by paraphrase (what the answer cache must match)
    by_target: dict[tuple[str, str], dict[str, int]] = {}
    for qi, q in enumerate(questions):
        if q.kind in ("named", "paraphrase") and q.name:
            by_target.setdefault((q.gold_page, q.name), {})[q.kind] = qi
    pairs = [(d["named"], d["paraphrase"]) for d in by_target.values() if len(d) == 2]
    same = [float(queries[a] @ queries[b]) for a, b in pairs]
    shifted = pairs[1:] + pairs[:1]  # each named question against another target's paraphrase
    other = [float(queries[a] @ queries[b]) for (a, _), (_, b) in zip(pairs, shifted, strict=True)]
    return {"q-gold": gold, "q-random": rand, "q-q same": same, "q-q other": other}


def separating_threshold(pos: Sequence[float], neg: Sequence[float]) -> float:
    """The cosine that best separates two samples (max balanced accuracy)."""
    if not pos or not neg:
        return float("nan")
    grid = np.linspace(-0.2, 1.0, 241)
    p, n = np.asarray(pos), np.asarray(neg)
    acc = [(np.mean(p >= t) + np.mean(n < t)) / 2 for t in grid]
    return float(grid[int(np.argmax(acc))])
