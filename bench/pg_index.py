"""Index build and query latency: Postgres (vectors + full-text search) against FAISS + bm25s.

Synthetic chunks (N of them, ~60 words from a 5,000-word vocabulary) with random unit
vectors (dim 384, the MiniLM width): the comparison is about storing and searching, not about
embedding, so no model runs. Postgres is a throwaway local cluster (fsync off); its dense
search is pgvector when the extension exists, else bytea loaded into an exact FAISS index
(this machine: no pgvector). Queries leave out the 50 most frequent words (stop words).

    python bench/pg_index.py [--sizes 10000,100000] [--queries 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from langchain_core.documents import Document  # noqa: E402

from ragloop.serve.cluster import local_cluster  # noqa: E402
from ragloop.serve.pgindex import PgIndexStore  # noqa: E402

DIM = 384


def corpus(n: int, rng: np.random.Generator) -> tuple[list[Document], np.ndarray, list[str]]:
    vocab = [f"w{i}" for i in range(5000)]
    zipf = 1 / np.arange(1, len(vocab) + 1)
    zipf /= zipf.sum()
    words = rng.choice(len(vocab), size=(n, 60), p=zipf)
    docs = [
        Document(
            id=f"c{i}",
            page_content=" ".join(vocab[w] for w in row),
            metadata={"source": f"d{i // 10}"},
        )
        for i, row in enumerate(words)
    ]
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    # queries skip the 50 most frequent words, as the 'english' configuration drops stop words
    rest = zipf[50:] / zipf[50:].sum()
    queries = [
        " ".join(vocab[50 + w] for w in rng.choice(len(rest), 6, p=rest)) for _ in range(200)
    ]
    return docs, vecs, queries


def ms(fn, reps: list) -> list[float]:
    out = []
    for arg in reps:
        started = time.perf_counter()
        fn(arg)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> int:
    import bm25s
    import faiss

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000")
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    faiss.omp_set_num_threads(1)  # one query at a time: threads only add overhead here
    print(f"{'chunks':>7} {'engine':<22} {'build s':>8} {'dense ms p50':>13} {'sparse ms p50':>14}")
    with local_cluster() as pg:
        for n in (int(s) for s in args.sizes.split(",")):
            docs, vecs, queries = corpus(n, rng)
            qv = [
                v / np.linalg.norm(v)
                for v in rng.standard_normal((args.queries, DIM)).astype(np.float32)
            ]
            qs = queries[: args.queries]
            started = time.perf_counter()
            flat = faiss.IndexFlatIP(DIM)
            flat.add(vecs)
            bm = bm25s.BM25()
            bm.index(
                bm25s.tokenize([d.page_content for d in docs], show_progress=False),
                show_progress=False,
            )
            build = time.perf_counter() - started
            dense = ms(lambda v, f=flat: f.search(v[None, :], 5), qv)
            sparse = ms(
                lambda q, b=bm: b.retrieve(
                    bm25s.tokenize([q], show_progress=False), k=5, show_progress=False
                ),
                qs,
            )
            print(
                f"{n:>7} {'FAISS flat + bm25s':<22} {build:>8.2f} "
                f"{statistics.median(dense):>13.2f} {statistics.median(sparse):>14.2f}"
            )
            store = PgIndexStore(pg.url, uuid.uuid4().hex)
            started = time.perf_counter()
            store.write(docs, vecs)
            build = time.perf_counter() - started
            started = time.perf_counter()
            store.dense(qv[0], 5)  # first query loads the matrix (bytea) once per version
            first = (time.perf_counter() - started) * 1000
            dense = ms(lambda v, s=store: s.dense(v, 5), qv)
            sparse = ms(lambda q, s=store: s.sparse(q, 5), qs)
            print(
                f"{n:>7} {'Postgres ' + store.vector_kind + ' + FTS':<22} {build:>8.2f} "
                f"{statistics.median(dense):>13.2f} {statistics.median(sparse):>14.2f}"
                f"   (first dense query {first:.0f} ms: loads the vectors)"
            )
            store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
