"""Turn metric names or instances into ready metrics: offline variants, defaults, cache wrappers."""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
from collections.abc import Iterable
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from ragloop.errors import ConfigError
from ragloop.eval.cache import Store, Usage, digest
from ragloop.eval.metrics.base import Metric, get_metric_class, metric_names
from ragloop.eval.schema import EvaluationDataset, MultiTurnSample
from ragloop.eval.wrappers import CachedChatModel, CachedEmbeddings, model_identity

#: LLM metric -> the offline metric that stands in for it when no LLM is given
OFFLINE_VARIANTS = {
    "answer_relevancy": "offline_answer_relevancy",
    "nv_context_relevance": "offline_context_relevance",
    "context_relevance": "offline_context_relevance",
    "context_recall": "offline_context_recall",
    "topic_adherence": "offline_topic_adherence",
}
#: RAGAS aliases accepted by name when an LLM is given
ALIASES = {"context_relevance": "nv_context_relevance"}
LLM_TRIO = ("answer_relevancy", "nv_context_relevance", "context_recall")
OFFLINE_TRIO = ("offline_answer_relevancy", "offline_context_relevance", "offline_context_recall")


def resolve_name(name: str, has_llm: bool) -> tuple[str, str | None]:
    """The metric name to build and, when it was swapped for an offline variant, a note."""
    name = name.strip()
    if has_llm:
        return ALIASES.get(name, name), None
    if name in OFFLINE_VARIANTS:
        variant = OFFLINE_VARIANTS[name]
        return variant, f"{name} ran as {variant} (no LLM given; pass llm= or --llm for the judge)"
    return name, None


def _fits(cls: type[Metric], ds: EvaluationDataset) -> bool:
    for sample in ds.samples:
        if isinstance(sample, MultiTurnSample) != cls.multi_turn:
            continue
        values = [getattr(sample, col, None) for col in cls.required_columns]
        if all(v is not None and (not isinstance(v, str | list | dict) or v) for v in values):
            return True
    return False


def default_metric_names(ds: EvaluationDataset, has_llm: bool) -> list[str]:
    """The trio (LLM or offline) plus every non-LLM metric the dataset's columns allow."""
    known = metric_names()
    trio = LLM_TRIO if has_llm else OFFLINE_TRIO
    others = [
        n
        for n in known
        if not get_metric_class(n).needs_llm
        and get_metric_class(n).in_defaults
        and get_metric_class(n).name == n  # an alias is not a second metric
        and n not in OFFLINE_TRIO
    ]
    names = [n for n in (*trio, *others) if n in known]
    return [n for n in names if _fits(get_metric_class(n), ds)]


def _own_http_client(model: Any, clients: list[Any]) -> Any:
    """A copy of an OpenAI model on an HTTP client of this run (closed when the run ends).

    The OpenAI SDK pools connections across calls; a pool used by an earlier, now closed
    event loop fails with "Event loop is closed", so each run gets its own. A client the
    user configured (``http_async_client``, a proxy) is left alone.
    """
    if getattr(model, "http_async_client", None) or getattr(model, "openai_proxy", None):
        return model
    is_chat = getattr(model, "root_async_client", None) is not None
    root = (
        model.root_async_client
        if is_chat
        else getattr(getattr(model, "async_client", None), "_client", None)
    )
    if root is None or not hasattr(root, "with_options"):
        return model
    import openai

    http = openai.DefaultAsyncHttpxClient()
    clients.append(http)
    fresh = root.with_options(http_client=http)
    if is_chat:
        return model.model_copy(
            update={"root_async_client": fresh, "async_client": fresh.chat.completions}
        )
    return model.model_copy(update={"async_client": fresh.embeddings})


def _wrap_llm(llm: Any, store: Store | None, usage: Usage, clients: list[Any]) -> Any:
    if isinstance(llm, BaseChatModel) and not isinstance(llm, CachedChatModel):
        return CachedChatModel.wrap(_own_http_client(llm, clients), store, usage)
    return llm


def _is_local(emb: Any) -> bool:
    from ragloop.embeddings import LocalEmbeddings

    return isinstance(emb, LocalEmbeddings)


def _wrap_embeddings(emb: Any, store: Store | None, usage: Usage, clients: list[Any]) -> Any:
    if isinstance(emb, Embeddings) and not isinstance(emb, CachedEmbeddings) and not _is_local(emb):
        if getattr(emb, "async_client", None) is not None:
            emb = _own_http_client(emb, clients)
        return CachedEmbeddings(emb, store, usage)
    return emb


def attach(metric: Metric, store: Store | None, usage: Usage, clients: list[Any]) -> Metric:
    """A shallow copy of ``metric`` whose models count calls and use the cache."""
    clone = copy.copy(metric)
    judge = getattr(metric, "judge", None)
    if judge is not None and isinstance(getattr(judge, "llm", None), BaseChatModel):
        clone.judge = copy.copy(judge)  # type: ignore[attr-defined]
        clone.judge.llm = _wrap_llm(judge.llm, store, usage, clients)  # type: ignore[attr-defined]
    clone.llm = _wrap_llm(metric.llm, store, usage, clients)
    clone.embeddings = _wrap_embeddings(metric.embeddings, store, usage, clients)
    return clone


def build_metrics(
    metrics: Iterable[Metric | str] | None,
    ds: EvaluationDataset,
    llm: BaseChatModel | None,
    embeddings: Embeddings | None,
    store: Store | None,
    usage: Usage,
    clients: list[Any],
) -> tuple[dict[str, Metric], list[str]]:
    """Ready metrics by unique label, and notes on what was substituted or assumed.

    HTTP clients opened for the run are appended to ``clients`` for the caller to close.
    """
    notes: list[str] = []
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    if metrics is None:
        metrics = default_metric_names(ds, llm is not None)
        notes.append(f"metrics chosen from the dataset's columns: {', '.join(metrics)}")
    if getattr(llm, "max_retries", 0):
        notes.append(
            f"the model retries on its own too (max_retries={llm.max_retries}); "  # type: ignore[union-attr]
            "build it with max_retries=0 so only the runner retries"
        )
    llm_w = _wrap_llm(llm, store, usage, clients)
    emb_w = _wrap_embeddings(embeddings, store, usage, clients)
    built: dict[str, Metric] = {}
    by_name: set[str] = set()
    for item in metrics:
        if isinstance(item, Metric):
            metric = attach(item, store, usage, clients)
        elif isinstance(item, str):
            name, note = resolve_name(item, llm is not None)
            notes += [note] if note else []
            if name in by_name:  # e.g. context_relevance and nv_context_relevance offline
                continue
            by_name.add(name)
            cls = get_metric_class(name)
            kwargs: dict[str, Any] = {}
            if cls.needs_llm:
                kwargs["llm"] = llm_w
            if cls.needs_embeddings:
                if emb_w is None:
                    from ragloop.providers import get_embeddings

                    emb_w = get_embeddings("wordllama")
                    notes.append("embeddings: WordLlama (offline default)")
                kwargs["embeddings"] = emb_w
            metric = cls(**kwargs)
        else:
            raise ConfigError(f"a metric must be a name or a Metric; got {type(item).__name__}")
        label, n = metric.name, 2
        while label in built:
            label, n = f"{metric.name}_{n}", n + 1
        built[label] = metric
    if not built:
        raise ConfigError("no metric to run: name some with metrics=[...] or --metrics a,b")
    return built, notes


@functools.lru_cache(maxsize=256)
def _code_hash(cls: type) -> str:
    try:
        source = inspect.getsource(inspect.getmodule(cls) or cls)
    except (OSError, TypeError):
        source = f"{cls.__module__}.{cls.__qualname__}"
    return hashlib.sha256(source.encode()).hexdigest()


def fingerprint(metric: Metric) -> str:
    """What makes a metric's result differ: its code, parameters, prompts and models."""
    skip = {"llm", "embeddings", "judge"}
    params = {k: v for k, v in vars(metric).items() if k not in skip and not k.startswith("_")}
    judge = getattr(metric, "judge", None)
    judge_llm = getattr(judge, "llm", None)
    models = {
        "llm": model_identity(metric.llm) if metric.llm is not None else None,
        "embeddings": model_identity(metric.embeddings) if metric.embeddings is not None else None,
        "judge": model_identity(judge_llm) if judge_llm is not None else None,
        "judge_temperature": getattr(judge, "temperature", None),
    }
    cls = type(metric)
    return digest(
        {
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "code": _code_hash(cls),
            "name": metric.name,
            "params": params,
            "models": models,
        }
    )
