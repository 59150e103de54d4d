"""retrieve: run the current (source, query) pair; the web is just another source."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps, search, to_item
from ragloop.retrievers.registry import BUILTIN_RETRIEVERS
from ragloop.state import Action, ContextItem, State, add_step

#: how long an optional source (the web, a plug-in retriever) may take before it is skipped
SOURCE_TIMEOUT_S = 30.0


def optional(source: str) -> bool:
    """A source the answer can do without: the web and any retriever not built in.

    The built-in retrievers read the local index; their failure is a real error. An
    optional source that fails (an HTTP 500, a hang, a server down) is skipped instead,
    with its reason in the path, and the answer comes from what remains.
    """
    return source not in BUILTIN_RETRIEVERS


def unavailable(state: State) -> dict[str, str]:
    """The sources that failed earlier in this run, with why (``correct`` skips them)."""
    return {
        str(a.get("retriever")): str(a.get("reason", ""))
        for a in state.get("actions", [])
        if a.get("action") == "unavailable"
    }


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no reply in time"
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def section_starts(deps: Deps, source: str, items: list[ContextItem]) -> list[ContextItem]:
    """The first chunk of each section that a retrieved chunk continues (not retrieved itself).

    The judge reads it beside the chunk that led to it, so a definition at the head of a long
    section is not lost to a retriever that matched its details (``retrievers/sections.py``).
    """
    starts = deps.section_starts
    if starts is None:
        return []
    have = {item["id"] for item in items}
    out = []
    for item in items:
        first = starts.start_of(item["id"])
        if first is not None and str(first.id) not in have:
            have.add(str(first.id))
            start = to_item(first)
            start["retriever"] = source
            out.append(start)
    return out


def make_retrieve(deps: Deps) -> Any:
    """Build the retrieve node; it records the pair so it is never run twice."""

    async def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        source, query = state["retriever"], state["query"]
        tried = [*state.get("tried", []), [source, query]]
        if source == "web":
            run = deps.web.asearch(query, ctx.k)
        else:
            run = search(deps.retrievers[source], query, ctx.k)
        if not optional(source):
            docs = await run
        else:
            limit = deps.source_timeout_s or SOURCE_TIMEOUT_S
            try:
                docs = await asyncio.wait_for(run, limit)
            except Exception as exc:  # noqa: BLE001 - any failure of an optional source
                why = _why(exc)
                action = Action(
                    action="unavailable",
                    reason=f"{source} failed ({why}); skipped",
                    retriever=source,
                    query=query,
                    iteration=state.get("iteration", 0),
                )
                detail = f"{source} is unavailable ({why}): skipped, answering from the rest"
                return {
                    "candidates": [],
                    "tried": tried,
                    "actions": [*state.get("actions", []), action],
                    "steps": add_step(state, "retrieve", detail),
                }
        origin = "web" if source == "web" else "kb"
        items = [to_item(d, origin=origin) for d in docs]
        starts = section_starts(deps, source, items)
        detail = f"{source} returned {len(items)} chunk(s) for '{query}'"
        if starts:
            detail += f", and the start of {len(starts)} section(s) they continue"
        found = len(items)
        items += starts
        steps = add_step(
            state, "retrieve", detail, action="retrieve", retriever=source, query=query,
            k=ctx.k, n=found,
        )  # fmt: skip
        return {"candidates": items, "tried": tried, "steps": steps}

    return retrieve
