"""One candidate in a fresh process (so thread settings and load time are its own).

Usage: ``python bench/_embeddings_worker.py MODE CANDIDATE THREADS IN_JSON OUT``

- ``speed``: load time, chunks/s on the sample texts, query latency; writes OUT as JSON.
- ``embed``: vectors of every chunk and question; writes OUT as .npz.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import _embeddings_offline  # noqa: E402

_embeddings_offline.install()

import numpy as np  # noqa: E402
from _embeddings_candidates import BASELINE, CANDIDATES  # noqa: E402


def main() -> None:
    mode, name, threads, src, out = sys.argv[1:6]
    cand = BASELINE if name == BASELINE.name else CANDIDATES[name]
    data = json.loads(Path(src).read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    model = cand.load(int(threads))
    model.query("warm up")
    load_s = time.perf_counter() - t0
    if mode == "embed":
        # vectors are kept per candidate by content hash, so a chunker change re-embeds only
        # the chunks it changed
        from ragloop.embeddings.cache import VectorCache

        cache = VectorCache(Path(out).parent / f"vectors-{name}.sqlite")
        texts = data["chunks"]
        dim = int(model.query("dimension").shape[0])
        # keyed by what made the vectors: a new version of a model under the same name misses
        key = getattr(model, "model_id", name)
        known = cache.get_many(key, dim, texts)
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        t0 = time.perf_counter()
        if todo:
            fresh = model.docs(todo)
            cache.put_many(key, todo, fresh)
            known.update(zip(todo, fresh, strict=True))
        docs_s = time.perf_counter() - t0
        docs = np.stack([known[t] for t in texts]) if texts else np.zeros((0, dim))
        queries = np.stack([model.query(q) for q in data["questions"]])
        np.savez(out, docs=docs, queries=queries, docs_s=docs_s, embedded=len(todo))
        return
    texts = data["sample"]
    model.docs(texts[:8])  # warm the kernels for these lengths
    t0 = time.perf_counter()
    model.docs(texts)
    per_s = len(texts) / (time.perf_counter() - t0)
    lat = []
    for q in data["questions"][:60]:
        t1 = time.perf_counter()
        model.query(q)
        lat.append(time.perf_counter() - t1)
    result = {
        "load_s": load_s,
        "chunks_per_s": per_s,
        "query_p50_ms": 1e3 * float(np.percentile(lat, 50)),
        "query_p95_ms": 1e3 * float(np.percentile(lat, 95)),
        "offline": _embeddings_offline.proof(),
        "refused": len(_embeddings_offline.REFUSED),
    }
    Path(out).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
