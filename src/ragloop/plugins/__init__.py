"""Plug-ins by name: retrievers, embeddings and chat models, from Python or entry points.

A package adds one by declaring an entry point in one of the groups ``ragloop.retrievers``,
``ragloop.embeddings`` or ``ragloop.chat_models``; the entry point's name is the name users
select in settings, on the command line, in experiment specs and in a server context.
"""

from __future__ import annotations

from ragloop.plugins.models import (
    CHAT_MODELS,
    EMBEDDINGS,
    build_chat_model,
    build_embeddings,
    chat_model_names,
    embeddings_names,
    register_chat_model,
    register_embeddings,
)
from ragloop.plugins.registry import Registry

__all__ = [
    "CHAT_MODELS",
    "EMBEDDINGS",
    "Registry",
    "build_chat_model",
    "build_embeddings",
    "chat_model_names",
    "embeddings_names",
    "register_chat_model",
    "register_embeddings",
]
