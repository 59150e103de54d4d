"""Chat model and embeddings wrappers that count calls and tokens and read/write the cache.

LangChain's own per-model cache keys on ``_serialized``, a cached property that a
``model_copy(update={"temperature": ...})`` carries over unchanged, so a judge bound to
another temperature would read answers given at the old one. These wrappers key on the
model's live parameters instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr, SecretStr

from ragloop.eval.cache import Store, Usage, digest
from ragloop.llm.faults import never_sent
from ragloop.redact import redact, secret_values, secrets_of

_SECRET_NAME = re.compile(r"(?i)(api_?key|secret|password|authorization|headers|token$)")


def _public(params: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in params.items()
        if not _SECRET_NAME.search(k) and not isinstance(v, SecretStr)
    }


def _env_secrets() -> list[str]:
    return secret_values()


def _sent(error: BaseException | None) -> int:
    """1 when a call reached the server (it succeeded or failed there), 0 when never sent."""
    return 0 if error is not None and never_sent(error) else 1


def model_identity(model: Any) -> dict[str, Any]:
    """What makes a chat model or embeddings answer differently: type, live params, endpoint."""
    if isinstance(model, CachedChatModel):
        return {**model_identity(model.target()), "temperature": model.temperature}
    if isinstance(model, CachedEmbeddings):
        return model_identity(model.inner)
    ident: dict[str, Any] = {"type": type(model).__qualname__}
    if isinstance(model, BaseChatModel):
        ident["params"] = _public(dict(model._identifying_params))
    else:
        for attr in ("model", "model_name", "dimensions", "deployment"):
            if isinstance(getattr(model, attr, None), str | int):
                ident[attr] = getattr(model, attr)
    for attr in ("openai_api_base", "base_url"):
        if getattr(model, attr, None):
            ident["endpoint"] = str(getattr(model, attr))
    return ident


class CachedChatModel(BaseChatModel):
    """Wraps a chat model: counts requests and tokens and, given a store, caches replies.

    ``temperature`` is a field so ``Judge`` can bind it; it is passed on to the wrapped
    model and is part of the key with the model's live parameters and the messages.
    """

    inner: BaseChatModel
    temperature: float | None = None
    _store: Store | None = PrivateAttr(default=None)
    _usage: Usage = PrivateAttr(default_factory=Usage)
    _targets: dict[float | None, BaseChatModel] = PrivateAttr(default_factory=dict)

    @classmethod
    def wrap(cls, inner: BaseChatModel, store: Store | None, usage: Usage) -> CachedChatModel:
        model = cls(inner=inner, temperature=getattr(inner, "temperature", None), cache=False)
        model._store, model._usage = store, usage
        return model

    @property
    def _llm_type(self) -> str:
        return f"ragloop-cached-{self.inner._llm_type}"

    @property
    def model_name(self) -> str | None:
        return getattr(self.inner, "model_name", None) or getattr(self.inner, "model", None)

    def target(self) -> BaseChatModel:
        """The wrapped model with this wrapper's temperature applied (one copy per value)."""
        inner = self.inner
        fields = getattr(type(inner), "model_fields", {})
        if "temperature" in fields and getattr(inner, "temperature", None) != self.temperature:
            if self.temperature not in self._targets:
                self._targets[self.temperature] = inner.model_copy(
                    update={"temperature": self.temperature}
                )
            inner = self._targets[self.temperature]
        return inner

    def _key(self, target: BaseChatModel, messages: list[BaseMessage], stop: Any, kw: Any) -> str:
        msgs = [message_to_dict(m.model_copy(update={"id": None})) for m in messages]
        ident = {**model_identity(target), "temperature": self.temperature}
        return digest({"model": ident, "stop": stop, "kwargs": kw, "messages": msgs})

    def _hit(self, key: str) -> ChatResult | None:
        raw = self._store.get("llm", key) if self._store and key else None
        if raw is None:
            return None
        self._usage.cache_hits += 1
        message = messages_from_dict([json.loads(raw)])[0]
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _record(self, key: str, message: BaseMessage) -> ChatResult:
        usage = getattr(message, "usage_metadata", None) or {}
        self._usage.input_tokens += int(usage.get("input_tokens", 0))
        self._usage.output_tokens += int(usage.get("output_tokens", 0))
        # a key the model echoes is neither cached nor passed on (a hit and a miss agree)
        data = redact(message_to_dict(message), _secrets=secrets_of(self.inner) + _env_secrets())
        message = messages_from_dict([data])[0]
        if self._store is not None and key:
            self._store.put("llm", key, json.dumps(data).encode())
        msg = message if isinstance(message, AIMessage) else AIMessage(content=message.content)
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        target = self.target()
        key = self._key(target, messages, stop, kwargs) if self._store else ""
        if (hit := self._hit(key)) is not None:
            return hit
        try:
            message = target.invoke(messages, stop=stop, **kwargs)
        except Exception as exc:  # a request counts once it reached the server
            self._usage.llm_calls += _sent(exc)
            raise
        self._usage.llm_calls += 1
        return self._record(key, message)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        target = self.target()
        key = self._key(target, messages, stop, kwargs) if self._store else ""
        if (hit := self._hit(key)) is not None:
            return hit
        try:
            message = await target.ainvoke(messages, stop=stop, **kwargs)
        except Exception as exc:  # a refused connection is no LLM call
            self._usage.llm_calls += _sent(exc)
            raise
        self._usage.llm_calls += 1
        return self._record(key, message)


class CachedEmbeddings(Embeddings):
    """Wraps embeddings: counts calls and, given a store, caches each text's vector (float64)."""

    def __init__(self, inner: Embeddings, store: Store | None, usage: Usage):
        self.inner, self._store, self._usage = inner, store, usage
        self._ident = digest(model_identity(inner))

    def _lookup(self, kind: str, texts: Sequence[str]) -> tuple[list[Any], list[int], list[str]]:
        keys = [digest([self._ident, kind, t]) for t in texts]
        found: list[Any] = []
        for key in keys:
            raw = self._store.get("emb", key) if self._store else None
            found.append(None if raw is None else np.frombuffer(raw, dtype=np.float64).tolist())
        missing = [i for i, v in enumerate(found) if v is None]
        self._usage.embedding_cache_hits += len(texts) - len(missing)
        return found, missing, keys

    def _fill(self, found: list[Any], missing: list[int], keys: list[str], vecs: Any) -> list[Any]:
        for i, vec in zip(missing, vecs, strict=True):
            found[i] = [float(x) for x in vec]
            if self._store is not None:
                self._store.put("emb", keys[i], np.asarray(found[i], dtype=np.float64).tobytes())
        return found

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        found, missing, keys = self._lookup("doc", texts)
        if missing:
            self._usage.embedding_calls += 1
            vecs = self.inner.embed_documents([texts[i] for i in missing])
            self._fill(found, missing, keys, vecs)
        return found

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        found, missing, keys = self._lookup("doc", texts)
        if missing:
            self._usage.embedding_calls += 1
            vecs = await self.inner.aembed_documents([texts[i] for i in missing])
            self._fill(found, missing, keys, vecs)
        return found

    def embed_query(self, text: str) -> list[float]:
        found, missing, keys = self._lookup("query", [text])
        if missing:
            self._usage.embedding_calls += 1
            self._fill(found, missing, keys, [self.inner.embed_query(text)])
        return found[0]

    async def aembed_query(self, text: str) -> list[float]:
        found, missing, keys = self._lookup("query", [text])
        if missing:
            self._usage.embedding_calls += 1
            self._fill(found, missing, keys, [await self.inner.aembed_query(text)])
        return found[0]
