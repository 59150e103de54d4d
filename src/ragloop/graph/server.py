"""The compiled graph for LangGraph's own server and Studio (``langgraph.json``).

It is built from ``Settings`` (``RAGLOOP_*`` variables, e.g. ``RAGLOOP_CORPUS_DIR``); the
server supplies its own checkpointer.
"""

from __future__ import annotations

from ragloop.config import load_settings
from ragloop.pipeline import build_pipeline

graph = build_pipeline(load_settings()).graph
