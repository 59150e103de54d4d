"""ragloop: a self-correcting RAG pipeline on LangGraph with evaluation built in.

The main entry points are importable from the package root; they load lazily so that
``import ragloop`` stays fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["build_graph", "build_pipeline", "evaluate", "aevaluate", "metrics", "load_settings"]

_LAZY = {
    "build_graph": ("ragloop.graph.builder", "build_graph"),
    "build_pipeline": ("ragloop.pipeline", "build_pipeline"),
    "evaluate": ("ragloop.eval.runner", "evaluate"),
    "aevaluate": ("ragloop.eval.runner", "aevaluate"),
    "load_settings": ("ragloop.config", "load_settings"),
    "metrics": ("ragloop.eval.metrics", None),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'ragloop' has no attribute {name!r}")
    import importlib

    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name)
    return module if attr is None else getattr(module, attr)
