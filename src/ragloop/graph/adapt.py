"""Node adapters: every node runs under ``invoke`` and ``ainvoke``, and writes JSON-safe state.

The nodes are coroutines; LangGraph only calls a sync function under ``invoke`` (the sync
checkpointers need it), so each node gets a sync twin that runs the coroutine on ragloop's
one background loop. A float that is NaN or infinite in an update becomes ``None``: Postgres
JSONB and strict JSON refuse NaN, and the state says "unmeasured" with ``None`` plus a reason.

The node is a bare ``Runnable``: LangGraph already opens one traced run per node (with the
node's name and metadata, which the callbacks and ``stream_mode="messages"`` read) and sets the
config LangGraph's ``get_runtime()`` reads. A ``RunnableLambda`` would open a second run inside
it and read the function's signature on every call, a fixed cost per step that dominates a run
when embedding is cheap. A routing function (a pure read of the state) is wrapped the same way
(``route``): LangGraph runs a plain sync function in a worker thread under ``ainvoke``, a
thread hop per edge taken.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import get_runtime

from ragloop._async import run_sync

__all__ = ["both_ways", "json_safe", "route"]


def json_safe(value: Any) -> Any:
    """``value`` with every NaN/inf float replaced by None (containers copied, rest kept).

    A value that needs no change (no NaN/inf float, no tuple, no dict or list subclass) is
    returned as it is, without the copy: the nodes never change state in place.
    """
    return value if _clean(value) else _safe(value)


_PLAIN = frozenset({str, int, bool, type(None)})


def _clean(value: Any) -> bool:
    """True when ``_safe(value)`` would equal ``value`` (same types, same values)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _PLAIN:
            continue
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict | list | tuple):
            return False  # a tuple or a dict/list subclass comes out as a plain list/dict
    return True


def _safe(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_safe(v) for v in value]
    return value


NodeFn = Callable[..., Awaitable[dict[str, Any]]]


def _quiet(config: RunnableConfig) -> RunnableConfig:
    """``config`` with the ``nostream`` tag its LLM calls inherit (kept out of the messages
    stream mode, which a chat UI shows)."""
    return {**config, "tags": [*(config.get("tags") or []), TAG_NOSTREAM]}


class _Node(Runnable[Any, Any]):
    """A graph node's sync and async bodies (see the module docstring)."""

    def __init__(self, name: str, body: Callable[..., Coroutine[Any, Any, Any]]) -> None:
        self.name = name
        self._body = body

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return run_sync(self._body(input, get_runtime(), ensure_config(config)))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self._body(input, get_runtime(), ensure_config(config))


def both_ways(name: str, node: NodeFn, stream: bool = False) -> Any:
    """A LangGraph node with a sync and an async body around the coroutine ``node``.

    One public ``Runnable`` holds both bodies; each reads the run's ``Runtime`` with
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

    return _Node(name, body)


class _Route(Runnable[Any, Any]):
    """A pure routing function, called directly under ``invoke`` and ``ainvoke``."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.name = fn.__name__
        self._fn = fn

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._fn(input)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._fn(input)


def route(fn: Callable[[Any], Any]) -> Any:
    """A conditional edge's path from a routing function that only reads the state (no I/O):
    run where the graph runs, never in a worker thread (see the module docstring)."""
    return _Route(fn)
