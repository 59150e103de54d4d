"""Set-up of the real-corpus loop bench: the PostgreSQL docs indexed once by ragloop's builder.

The index lives under ``.ragloop/bench/pgdocs/index-<embeddings>`` (vectors also cached by
content hash), so reruns load it in seconds; the pipeline is ragloop's own
(``build_pipeline``) over that index, with the web off (the corpus has none).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from _pgdocs import build_corpus

from ragloop.config import load_settings
from ragloop.pipeline import Pipeline, build_pipeline

logging.getLogger("bm25s").setLevel(logging.WARNING)
logging.getLogger("faiss").setLevel(logging.WARNING)
HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".ragloop" / "bench" / "pgdocs"


def _progress(started: float) -> Any:
    state = {"last": 0.0}

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - state["last"] > 30 or done == total:
            state["last"] = now
            print(f"  embedded {done}/{total} chunks ({now - started:.0f} s)", file=sys.stderr)

    return report


def pg_pipeline(embeddings: str | None = None, **context: Any) -> Pipeline:
    """The offline pipeline over the PG docs (index built on first use, then reused)."""
    return bench_pipeline(build_corpus(), WORK, embeddings, **context)


def bench_pipeline(
    corpus: Path, work: Path, embeddings: str | None = None, **context: Any
) -> Pipeline:
    """The offline pipeline over a bench corpus, its index kept under ``work`` (a bench folder)."""
    overrides: dict[str, Any] = {"web": "off"}
    if embeddings:
        overrides["embeddings"] = embeddings
    settings = load_settings(**overrides)
    folder = work / f"index-{settings.embeddings}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    settings = load_settings(index_dir=folder, corpus_dir=corpus, **overrides)
    from ragloop.embeddings import model_id
    from ragloop.embeddings.cache import VectorCache
    from ragloop.providers import get_embeddings
    from ragloop.retrievers.index import open_index

    # built (or brought up to date with the corpus) here, with vectors cached by content,
    # so only changed chunks are embedded; build_pipeline then finds it fresh and loads it
    emb = get_embeddings(settings.embeddings, env={})
    print(f"index of {corpus} in {folder} ...", file=sys.stderr)
    manifest = folder / "manifest.json"
    # a folder this bench owns: rebuilt (from cached vectors) when its model has changed
    changed = manifest.is_file() and json.loads(manifest.read_text()).get(
        "embeddings_model"
    ) != model_id(emb)
    open_index(
        corpus,
        folder,
        emb,
        settings.embeddings,
        chunk_size=settings.chunk_size,
        chunk_overlap=settings.chunk_overlap,
        cache=VectorCache(work / "vectors.sqlite"),
        progress=_progress(time.perf_counter()),
        force=True,  # a folder this bench owns
        rebuild="always" if changed else "auto",
    )
    return build_pipeline(settings, env={}, embeddings=emb, **context)


if __name__ == "__main__":
    pipe = pg_pipeline(sys.argv[1] if len(sys.argv) > 1 else None)
    print(pipe.describe_sources())
