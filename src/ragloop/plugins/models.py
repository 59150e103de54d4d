"""Embeddings and chat models by name: any LangChain ``Embeddings`` / ``BaseChatModel``."""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from ragloop.errors import ProviderError
from ragloop.plugins.registry import Registry, decorator_or_call

#: entry point group ``ragloop.embeddings``: name = an Embeddings instance, class or factory
EMBEDDINGS: Registry[Any] = Registry("embeddings", "ragloop.embeddings")
#: entry point group ``ragloop.chat_models``: name = a BaseChatModel instance, class or factory
CHAT_MODELS: Registry[Any] = Registry("chat model", "ragloop.chat_models")

#: LLM knobs set on a registered model when it has a field of that name
_KNOB_FIELDS = {
    "timeout": ("timeout", "request_timeout"),
    "max_tokens": ("max_tokens", "max_output_tokens", "num_predict"),
    "max_retries": ("max_retries",),
}


def register_embeddings(name: str, embeddings: Any = None) -> Any:
    """Make embeddings selectable as ``name`` (settings, ``--embeddings``, experiment specs).

    ``embeddings`` is an ``Embeddings`` instance or a no-argument factory returning one;
    without it this is a decorator for the factory.
    """
    return decorator_or_call(EMBEDDINGS, name, embeddings)


def register_chat_model(name: str, model: Any = None) -> Any:
    """Make a chat model selectable as ``name`` (``RAGLOOP_LLM``, ``--llm``, experiment specs).

    ``model`` is a ``BaseChatModel`` instance or a no-argument factory returning one;
    without it this is a decorator for the factory.
    """
    return decorator_or_call(CHAT_MODELS, name, model)


def embeddings_names() -> list[str]:
    """Registered embeddings names (Python and entry points)."""
    return EMBEDDINGS.names()


def chat_model_names() -> list[str]:
    """Registered chat model names (Python and entry points)."""
    return CHAT_MODELS.names()


def _instance(entry: Any, base: type, kind: str, name: str) -> Any:
    if isinstance(entry, base):
        return entry
    if callable(entry):
        try:
            entry = entry()
        except Exception as exc:
            raise ProviderError(f"{kind} '{name}' could not be built: {exc}") from exc
        if isinstance(entry, base):
            return entry
    raise ProviderError(
        f"{kind} '{name}' is a {type(entry).__name__}, not a LangChain {base.__name__}: "
        f"register an instance or a factory returning one"
    )


def build_embeddings(name: str) -> Embeddings:
    """The registered embeddings ``name``; an unknown name lists the known ones."""
    result: Embeddings = _instance(EMBEDDINGS.get(name), Embeddings, "embeddings", name)
    return result


def with_knobs(model: BaseChatModel, **knobs: Any) -> BaseChatModel:
    """A copy of ``model`` with timeout / max_tokens / max_retries set where it has such fields."""
    fields = getattr(type(model), "model_fields", {})
    update: dict[str, Any] = {}
    for knob, value in knobs.items():
        if value is None:
            continue
        for field in _KNOB_FIELDS.get(knob, ()):
            if field in fields:
                update[field] = value
                break
    return model.model_copy(update=update) if update else model


def build_chat_model(name: str, **knobs: Any) -> BaseChatModel:
    """The registered chat model ``name`` with the LLM knobs applied where it supports them."""
    model: BaseChatModel = _instance(CHAT_MODELS.get(name), BaseChatModel, "chat model", name)
    return with_knobs(model, **knobs)
