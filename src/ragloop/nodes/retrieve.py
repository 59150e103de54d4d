"""retrieve: run the current (source, query) pair; the web is just another source."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps, search, to_item
from ragloop.state import ContextItem, State, add_step


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
        if source == "web":
            docs = await deps.web.asearch(query, ctx.k)
            items = [to_item(d, origin="web") for d in docs]
        else:
            docs = await search(deps.retrievers[source], query, ctx.k)
            items = [to_item(d) for d in docs]
        starts = section_starts(deps, source, items)
        tried = [*state.get("tried", []), [source, query]]
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
