"""ragloop: a self-correcting RAG pipeline on LangGraph with evaluation built in.

The classes and functions users need are importable from the package root, typed for mypy;
at run time they load lazily so that ``import ragloop`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # what mypy and editors see; the same names load lazily below
    from ragloop.config import Context as Context
    from ragloop.config import Settings as Settings
    from ragloop.config import load_settings as load_settings
    from ragloop.errors import ConfigError as ConfigError
    from ragloop.errors import ProviderError as ProviderError
    from ragloop.errors import RagloopError as RagloopError
    from ragloop.errors import UnknownNameError as UnknownNameError
    from ragloop.eval import metrics as metrics
    from ragloop.eval.metrics.base import Metric as Metric
    from ragloop.eval.metrics.base import MetricResult as MetricResult
    from ragloop.eval.metrics.base import get_metric as get_metric
    from ragloop.eval.metrics.base import metric_names as metric_names
    from ragloop.eval.results import EvaluationResult as EvaluationResult
    from ragloop.eval.runner import aevaluate as aevaluate
    from ragloop.eval.runner import evaluate as evaluate
    from ragloop.eval.schema import EvaluationDataset as EvaluationDataset
    from ragloop.eval.schema import MultiTurnSample as MultiTurnSample
    from ragloop.eval.schema import SingleTurnSample as SingleTurnSample
    from ragloop.graph.builder import build_graph as build_graph
    from ragloop.graph.result import RunResult as RunResult
    from ragloop.nodes.base import Deps as Deps
    from ragloop.pipeline import Pipeline as Pipeline
    from ragloop.pipeline import build_pipeline as build_pipeline
    from ragloop.plugins.models import register_chat_model as register_chat_model
    from ragloop.plugins.models import register_embeddings as register_embeddings
    from ragloop.providers import get_chat_model as get_chat_model
    from ragloop.providers import get_embeddings as get_embeddings
    from ragloop.retrievers.registry import register_retriever as register_retriever

_LAZY: dict[str, tuple[str, str | None]] = {
    "Context": ("ragloop.config", "Context"),
    "Settings": ("ragloop.config", "Settings"),
    "load_settings": ("ragloop.config", "load_settings"),
    "ConfigError": ("ragloop.errors", "ConfigError"),
    "ProviderError": ("ragloop.errors", "ProviderError"),
    "RagloopError": ("ragloop.errors", "RagloopError"),
    "UnknownNameError": ("ragloop.errors", "UnknownNameError"),
    "Metric": ("ragloop.eval.metrics.base", "Metric"),
    "MetricResult": ("ragloop.eval.metrics.base", "MetricResult"),
    "get_metric": ("ragloop.eval.metrics.base", "get_metric"),
    "metric_names": ("ragloop.eval.metrics.base", "metric_names"),
    "EvaluationResult": ("ragloop.eval.results", "EvaluationResult"),
    "aevaluate": ("ragloop.eval.runner", "aevaluate"),
    "evaluate": ("ragloop.eval.runner", "evaluate"),
    "EvaluationDataset": ("ragloop.eval.schema", "EvaluationDataset"),
    "MultiTurnSample": ("ragloop.eval.schema", "MultiTurnSample"),
    "SingleTurnSample": ("ragloop.eval.schema", "SingleTurnSample"),
    "build_graph": ("ragloop.graph.builder", "build_graph"),
    "RunResult": ("ragloop.graph.result", "RunResult"),
    "Deps": ("ragloop.nodes.base", "Deps"),
    "Pipeline": ("ragloop.pipeline", "Pipeline"),
    "build_pipeline": ("ragloop.pipeline", "build_pipeline"),
    "register_chat_model": ("ragloop.plugins.models", "register_chat_model"),
    "register_embeddings": ("ragloop.plugins.models", "register_embeddings"),
    "get_chat_model": ("ragloop.providers", "get_chat_model"),
    "get_embeddings": ("ragloop.providers", "get_embeddings"),
    "register_retriever": ("ragloop.retrievers.registry", "register_retriever"),
    "metrics": ("ragloop.eval.metrics", None),
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'ragloop' has no attribute {name!r}")
    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
