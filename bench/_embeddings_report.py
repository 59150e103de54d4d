"""Sections 3-5 of bench/embeddings.py: calibration, the vector cache, the targets."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _embeddings_metrics import percentiles, separating_threshold, similarity_rows

from ragloop.embeddings import EmbedPlan, VectorCache, embed_texts, load_local, model_id
from ragloop.retrievers.dense import embedding_text
from ragloop.retrievers.index import build_index

N_CACHED = 10_000


def say(line: str = "") -> None:
    print(line, flush=True)


def calibration(chunks: list[Any], questions: list[Any], vectors: dict[str, Any]) -> None:
    say("\n3. calibration: cosine percentiles p10 / p25 / p50 / p75 / p90 (offline thresholds)")
    say("   q-gold: question vs its gold passage chunk; q-random: vs a chunk of another page;")
    say("   q-q same: the named and the paraphrased question of one target; q-q other: two targets")
    for name in ("minilm", "wordllama"):
        if name not in vectors:
            continue
        docs, queries, _ = vectors[name]
        sims = similarity_rows(chunks, docs, queries, questions, seed=0)
        for label, values in sims.items():
            say(f"  {name:9s} {label:10s} n={len(values):3d}  {percentiles(values)}")
        split_g = separating_threshold(sims["q-gold"], sims["q-random"])
        split_q = separating_threshold(sims["q-q same"], sims["q-q other"])
        say(f"  {name:9s} best split q-gold/q-random {split_g:.2f}; q-q same/other {split_q:.2f}")
    answer_cache_split()
    offline_metric_checks()


def answer_cache_split() -> None:
    """The demo answer cache: general questions vs their cached twin, other questions' best."""
    import json

    from ragloop.data import ANSWER_CACHE_PATH, QA_PATH
    from ragloop.nodes.answer_cache import AnswerCache, threshold_for

    rows = [json.loads(x) for x in QA_PATH.read_text(encoding="utf-8").splitlines() if x]
    say("   answer cache (demo QA): cosine of a question to its nearest cached question")
    for name in ("minilm", "wordllama"):
        emb = load_local(name)
        cache = AnswerCache.from_jsonl(ANSWER_CACHE_PATH, emb, 1.0)
        qs = np.asarray(emb.embed_documents([r["user_input"] for r in rows]), dtype=np.float32)
        best = (qs @ cache._matrix.T).max(axis=1)
        general = [float(b) for b, r in zip(best, rows, strict=True) if r["kind"] == "general"]
        other = [float(b) for b, r in zip(best, rows, strict=True) if r["kind"] != "general"]
        say(
            f"  {name:9s} general (n={len(general)}) min {min(general):.2f}; kb/web/unanswerable "
            f"(n={len(other)}) max {max(other):.2f}; threshold {threshold_for(emb):.2f}"
        )


def offline_metric_checks() -> None:
    """The offline metrics' hand-made calibration cases, per model (tests have them too)."""
    import asyncio

    from ragloop.eval.metrics.offline import (
        OfflineAnswerRelevancy,
        OfflineContextRecall,
        OfflineContextRelevance,
    )

    question = "When was the first Super Bowl played?"
    contexts = [
        "The first Super Bowl was played on January 15, 1967, in Los Angeles.",
        "The Super Bowl is the annual championship game of the National Football League.",
        "Photosynthesis converts light energy into chemical energy.",
    ]
    claims = ["The first Super Bowl took place in January 1967.", "Mount Everest is the highest."]
    say("   offline metrics at their thresholds (relevant / partial / unrelated context grades;")
    say("   relevancy of a direct and an off-topic answer; recall of a true and a false claim)")
    for name in ("minilm", "wordllama"):
        emb = load_local(name)
        grades = asyncio.run(OfflineContextRelevance(embeddings=emb).agrade(question, contexts))
        rel = OfflineAnswerRelevancy(embeddings=emb)
        direct = "The first Super Bowl was on January 15, 1967."
        good = rel.score({"user_input": question, "response": direct})
        bad = rel.score({"user_input": question, "response": "Bananas are yellow."})
        recall = asyncio.run(OfflineContextRecall(embeddings=emb).aattribute(claims, contexts[:1]))
        say(
            f"  {name:9s} grades {grades} (want [2, 1, 0]); relevancy {good.value:.2f} vs "
            f"{bad.value:.2f}; recall {recall} (want [True, False])"
        )


class _Refuse:
    """The default model's identity, but embedding anything fails the measurement."""

    def __init__(self, inner: Any):
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError(f"{len(texts)} texts were not cached")


def cache_figures(corpus: Path, chunks: list[Any], vectors: dict[str, Any]) -> float:
    """Re-index of the real corpus with a warm cache, and a 10^4-chunk cache fetch."""
    say("\n4. vector cache: re-indexing unchanged chunks (default model)")
    emb = load_local("minilm")
    with tempfile.TemporaryDirectory() as tmp:
        cache = VectorCache(Path(tmp) / "vectors.sqlite")
        if "minilm" in vectors:  # the vectors this model made for these chunks, as `index` stores
            cache.put_many(model_id(emb), [embedding_text(c) for c in chunks], vectors["minilm"][0])
            plans: list[EmbedPlan] = []
            t0 = time.perf_counter()
            idx = build_index(corpus, emb, "minilm", cache=cache, on_plan=plans.append)
            took = time.perf_counter() - t0
            say(
                f"  real corpus, {len(idx.chunks):,} chunks ({plans[0].cached:,} cached, "
                f"{plans[0].todo} embedded): build_index {took:.1f} s (parse, chunk, bm25, faiss)"
            )
        synth = [embedding_text(c) for c in chunks]
        synth += [f"{t}\n(copy {i})" for i, t in enumerate(synth * (N_CACHED // len(synth) + 1))]
        synth = synth[:N_CACHED]
        vecs = np.random.default_rng(0).standard_normal((len(synth), emb.dimension))
        cache.put_many(model_id(emb), synth, vecs.astype(np.float32))
        t0 = time.perf_counter()
        got = embed_texts(_Refuse(emb), synth, cache=cache)  # type: ignore[arg-type]
        lookup = time.perf_counter() - t0
    say(f"  {N_CACHED:,} chunks, all cached: {lookup:.2f} s to fetch {got.shape[0]:,} vectors")
    return lookup


def report_default(
    corpus: Path,
    chunks: list[Any],
    questions: list[Any],
    quality: dict[str, Any],
    speed: dict[str, Any],
    base: dict[str, Any] | None,
    vectors: dict[str, Any],
) -> int:
    """Calibration figures, the vector cache and the targets for the default model."""
    calibration(chunks, questions, vectors)
    lookup = cache_figures(corpus, chunks, vectors)
    say("\n5. targets")
    verdicts = [(f"re-index of 10^4 cached chunks {lookup:.1f} s <= 10 s", lookup <= 10)]
    natural = quality.get("minilm", {}).get("natural", (float("nan"),))[0]
    verdicts.append((f"minilm dense natural hit@5 {natural:.2f} >= 0.75", natural >= 0.75))
    two = speed.get("minilm", {}).get(2, {})
    p50 = two.get("query_p50_ms", float("inf"))
    verdicts.append((f"minilm query p50 {p50:.1f} ms <= 30 ms", p50 <= 30))
    if base:
        ratio = two.get("chunks_per_s", 0) / base["chunks_per_s"]
        verdicts.append(
            (f"minilm {ratio:.1f}x the chunks/s of the per-text loop >= 2x", ratio >= 2)
        )
    for text, ok in verdicts:
        say(f"  {'PASS' if ok else 'FAIL'}  {text}")
    return 0
