"""The compiled graph for LangGraph's own server and Studio (``langgraph.json``).

It is built from ``Settings`` (``RAGLOOP_*`` variables) with the bundled demo corpus unless
``RAGLOOP_CORPUS_DIR`` names another folder; the server supplies its own checkpointer.
"""

from __future__ import annotations

import os

from ragloop.config import load_settings
from ragloop.pipeline import build_pipeline

graph = build_pipeline(load_settings(), corpus_dir=os.environ.get("RAGLOOP_CORPUS_DIR")).graph
