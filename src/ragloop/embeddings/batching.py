"""Embed many texts: cached vectors first, the rest in batches with progress and an estimate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings

from ragloop.embeddings.cache import VectorCache
from ragloop.embeddings.catalogue import card
from ragloop.embeddings.identity import known_dimension, model_id, unwrap

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class EmbedPlan:
    """What an embedding run will do, known before it starts."""

    model_id: str
    total: int
    cached: int
    #: rough seconds for the texts still to embed (None for a model of unknown speed)
    seconds: float | None

    @property
    def todo(self) -> int:
        return self.total - self.cached

    def describe(self) -> str:
        """One line for the CLI: counts and the estimate."""
        line = f"embedding {self.todo:,} of {self.total:,} chunks ({self.cached:,} cached)"
        if self.seconds is not None:
            line += f", about {_duration(self.seconds)} with {self.model_id}"
        return line


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def estimate_seconds(emb: Embeddings, n: int) -> float | None:
    """Seconds to embed ``n`` chunks with an embedded model, from its measured speed."""
    spec = getattr(unwrap(emb), "spec", None)
    entry = card(spec) if isinstance(spec, str) else None
    return n / entry.chunks_per_second if entry else None


def embed_texts(
    emb: Embeddings,
    texts: list[str],
    *,
    cache: VectorCache | None = None,
    batch: int = 128,
    progress: Progress | None = None,
    on_plan: Callable[[EmbedPlan], None] | None = None,
) -> np.ndarray:
    """Vectors for ``texts`` (float32 rows), reusing and filling ``cache`` by content hash."""
    ident = model_id(emb)
    dim = known_dimension(emb)
    found = cache.get_many(ident, dim, texts) if cache is not None and dim else {}
    todo = list(dict.fromkeys(t for t in texts if t not in found))
    if on_plan is not None:
        on_plan(
            EmbedPlan(ident, len(texts), len(texts) - len(todo), estimate_seconds(emb, len(todo)))
        )
    done = len(texts) - len(todo)
    if progress:
        progress(done, len(texts))
    for start in range(0, len(todo), batch):
        part = todo[start : start + batch]
        vecs = np.asarray(emb.embed_documents(part), dtype=np.float32)
        if cache is not None and dim and vecs.ndim == 2 and vecs.shape[1] == dim:
            cache.put_many(ident, part, vecs)
        found.update(zip(part, vecs, strict=True))
        done += len(part)
        if progress:
            progress(min(done, len(texts)), len(texts))
    if not texts:
        return np.zeros((0, dim or 0), dtype=np.float32)
    return np.stack([found[t] for t in texts])
