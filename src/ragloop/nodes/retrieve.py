"""retrieve: run the current (source, query) pair; the web is just another source."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps, search, to_item
from ragloop.state import State, add_step


def make_retrieve(deps: Deps) -> Any:
    """Build the retrieve node; it records the pair so it is never run twice."""

    async def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        source, query = state["retriever"], state["query"]
        if source == "web":
            docs = await deps.web.asearch(query, ctx.k)
            items = [to_item(d, origin="web") for d in docs]
        else:
            docs = await search(deps.retrievers[source], query, ctx.k)
            items = [to_item(d) for d in docs]
        tried = [*state.get("tried", []), [source, query]]
        detail = f"{source} returned {len(items)} chunk(s) for '{query}'"
        return {"candidates": items, "tried": tried, "steps": add_step(state, "retrieve", detail)}

    return retrieve
