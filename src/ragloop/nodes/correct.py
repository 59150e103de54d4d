"""correct: pick rewrite, swap or web from the verdict; never repeat a (source, query) pair."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps
from ragloop.state import Action, State, add_step

#: by verdict: low relevance -> other retriever or rewrite; relevant but incomplete -> web
BY_VERDICT = {
    "irrelevant": ("swap", "rewrite", "web"),
    "incomplete": ("web", "swap", "rewrite"),
}


def action_order(verdict: str, order: tuple[str, ...]) -> list[str]:
    """The configured order when one is set, else the order that suits the verdict."""
    return list(order) if order else list(BY_VERDICT.get(verdict, BY_VERDICT["irrelevant"]))


def _last_kb(state: State, names: list[str]) -> str:
    for source, _ in reversed(state.get("tried", [])):
        if source != "web":
            return source
    return names[0] if names else "dense"


def make_correct(deps: Deps) -> Any:
    """Build the correct node; each skipped action is recorded with its reason."""

    async def correct(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime)  # defaults when a caller sent no context
        verdict = state["judgment"]["verdict"]
        iteration = state.get("iteration", 0) + 1
        tried = {(s, q) for s, q in state.get("tried", [])}
        names = deps.available_retrievers(ctx.retrievers)
        base = _last_kb(state, names)
        query = state["query"]
        actions = list(state.get("actions", []))
        taken = [a["action"] for a in actions if a["action"] in ("rewrite", "swap", "web")]
        last = taken[-1] if taken else ""
        for action in action_order(verdict, ctx.correct_order):
            choice, why = None, ""
            if action == "swap":
                start = names.index(base) if base in names else -1
                ring = names[start + 1 :] + names[: start + 1]
                free = [n for n in ring if (n, query) not in tried]
                if free:
                    choice, why = (
                        (free[0], query),
                        f"{verdict}: try retriever {free[0]} instead of {base}",
                    )
                else:
                    why = "every retriever was already tried with this query"
            elif action == "rewrite" and last == "rewrite":
                why = "the last action was already a rewrite (avoids query drift)"
            elif action == "rewrite":
                seen = state.get("candidates", []) + state.get("contexts", [])
                new = await deps.strategies.rewrite(
                    state["question"], query, seen, ctx.prompts.get("rewrite")
                )
                new = new.strip()
                if new and (base, new) not in tried:
                    choice, why = (base, new), f"{verdict}: rewrite the query for {base}"
                else:
                    why = "the rewrite gave no new query"
            elif action == "web":
                if deps.web is None:
                    why = "no web search configured (set TAVILY_API_KEY or a web corpus)"
                elif ("web", query) in tried:
                    why = "the web was already searched with this query"
                else:
                    choice, why = ("web", query), f"{verdict}: search the web"
            if choice is None:
                actions.append(Action(action=f"skip:{action}", reason=why, iteration=iteration))
                continue
            source, new_query = choice
            actions.append(
                Action(
                    action=action,
                    reason=why,
                    retriever=source,
                    query=new_query,
                    iteration=iteration,
                )
            )
            detail = f"{action} -> {source} with '{new_query}' ({why})"
            return {
                "iteration": iteration,
                "retriever": source,
                "query": new_query,
                "actions": actions,
                "stop_reason": "",
                "steps": add_step({**state, "iteration": iteration}, "correct", detail),
            }
        actions.append(
            Action(action="none", reason="no corrective action left", iteration=iteration)
        )
        return {
            "actions": actions,
            "stop_reason": "exhausted",
            "steps": add_step(state, "correct", "no corrective action left; answering"),
        }

    return correct
