"""Node adapters: every node runs under ``invoke`` and ``ainvoke``, and writes JSON-safe state.

The nodes are coroutines; LangGraph only calls a sync function under ``invoke`` (the sync
checkpointers need it), so each node gets a sync twin that runs the coroutine on ragloop's
one background loop. A float that is NaN or infinite in an update becomes ``None``: Postgres
JSONB and strict JSON refuse NaN, and the state says "unmeasured" with ``None`` plus a reason.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import get_runtime

from ragloop._async import run_sync

__all__ = ["both_ways", "json_safe"]


def json_safe(value: Any) -> Any:
    """``value`` with every NaN/inf float replaced by None (containers copied, rest kept)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


NodeFn = Callable[..., Awaitable[dict[str, Any]]]


def _quiet(config: RunnableConfig) -> RunnableConfig:
    """``config`` with the ``nostream`` tag its LLM calls inherit (kept out of the messages
    stream mode, which a chat UI shows)."""
    return {**config, "tags": [*(config.get("tags") or []), TAG_NOSTREAM]}


def both_ways(name: str, node: NodeFn, stream: bool = False) -> Any:
    """A LangGraph node with a sync and an async body around the coroutine ``node``.

    A public ``RunnableLambda`` holds both bodies; each reads the run's ``Runtime`` with
    LangGraph's ``get_runtime()``, so no private LangGraph module is needed. ``stream``: the
    node's LLM calls reach ``stream_mode="messages"``; otherwise they run tagged ``nostream``
    (a judge's or condenser's reply is not the answer).
    """
    takes_config = "config" in node.__code__.co_varnames[: node.__code__.co_argcount]

    async def body(state: Any, runtime: Any, config: RunnableConfig) -> Any:
        args = (state, runtime, config) if takes_config else (state, runtime)
        if stream:
            return json_safe(await node(*args))
        token = var_child_runnable_config.set(_quiet(var_child_runnable_config.get() or config))
        try:
            return json_safe(await node(*args))
        finally:
            var_child_runnable_config.reset(token)

    async def arun(state: Any, config: RunnableConfig) -> Any:
        return await body(state, get_runtime(), config)

    def run(state: Any, config: RunnableConfig) -> Any:
        return run_sync(body(state, get_runtime(), config))

    run.__name__ = arun.__name__ = name
    return RunnableLambda(run, afunc=arun, name=name)
