"""Shared set-up for the benches: the demo pipeline in a scratch folder and the QA set."""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from pathlib import Path
from typing import Any

from ragloop.config import load_settings
from ragloop.data import QA_PATH
from ragloop.pipeline import Pipeline, build_pipeline

logging.getLogger("bm25s").setLevel(logging.WARNING)
logging.getLogger("faiss").setLevel(logging.WARNING)
SCRATCH = Path(tempfile.gettempdir()) / "ragloop-bench"


def qa_rows() -> list[dict[str, Any]]:
    """The demo QA set."""
    return [json.loads(line) for line in QA_PATH.read_text(encoding="utf-8").splitlines() if line]


def demo_index_dir() -> Path:
    """The scratch index folder of the demo base, named after the model behind the setting.

    A new version of ``minilm`` gets a new folder instead of an index its vectors cannot be
    compared with.
    """
    from ragloop.embeddings import model_id
    from ragloop.providers import get_embeddings

    name = load_settings().embeddings
    tag = hashlib.sha1(model_id(get_embeddings(name, env={})).encode("utf-8")).hexdigest()[:8]
    return SCRATCH / f"index-{name}-{tag}"


def demo_pipeline(**context: Any) -> Pipeline:
    """The offline demo pipeline with its index in a scratch folder (built once per model)."""
    SCRATCH.mkdir(parents=True, exist_ok=True)  # an index folder's parent must exist
    settings = load_settings(index_dir=demo_index_dir())
    return build_pipeline(settings, env={}, demo=True, **context)


def reference_sources(row: dict[str, Any]) -> set[str]:
    """Chunk sources that hold the answer (web docs carry the web/ prefix)."""
    prefix = "web/" if row["kind"] == "web" else ""
    return {prefix + d for d in row.get("reference_doc_ids", [])}
