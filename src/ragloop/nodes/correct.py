"""correct: pick rewrite, swap or web from what the judge saw; never repeat a (source, query) pair.

The judge's signals say why the evidence fell short: a name no chunk shows (lexical miss ->
BM25, then other words), words the chunks do not use (vocabulary gap -> dense), or words
found but weak evidence (-> the ranking not yet run, and fusion once both disagree).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.nodes.base import Deps
from ragloop.nodes.retrieve import unavailable
from ragloop.state import Action, State, add_step

#: by verdict: low relevance -> other retriever or rewrite; relevant but incomplete -> web
BY_VERDICT = {
    "irrelevant": ("swap", "rewrite", "web"),
    "incomplete": ("web", "swap", "rewrite"),
}
#: a sentence covering less than this share of the question's words is a vocabulary gap
TERMS_GAP = 0.5
#: a name matched less surely than this was not found (0.4 = only a bare last part)
NAME_FOUND = 0.5
#: why the offline loop answers once every retriever has seen the question
REWRITE_AFTER_ALL = "every retriever has seen the question; an offline rewrite rarely finds more"


def diagnose(signals: dict[str, float]) -> str:
    """What the judge saw, in one word: "lexical-miss", "vocabulary-gap", "weak" or ""."""
    if not signals:
        return ""
    if signals.get("names", 0) > 0 and signals.get("name_found", 0.0) < NAME_FOUND:
        return "lexical-miss"  # the question names something no chunk names
    if signals.get("terms_found", 0.0) < TERMS_GAP:
        return "vocabulary-gap"  # the chunks speak of it in other words (or not at all)
    return "weak"  # words found, evidence still short: another ranking may hold it


def preferred(diagnosis: str, ran: set[str]) -> list[str]:
    """Retrievers in the order the diagnosis suggests (``ran``: those already run)."""
    if diagnosis == "lexical-miss":
        return ["sparse", "hybrid", "dense"]
    if diagnosis == "vocabulary-gap":
        return ["dense", "hybrid", "sparse"]
    if {"dense", "sparse"} <= ran:
        return ["hybrid", "dense", "sparse"]  # two rankings disagree: fuse them
    return ["dense", "sparse", "hybrid"] if "sparse" in ran else ["sparse", "dense", "hybrid"]


def action_order(
    verdict: str, order: tuple[str, ...], diagnosis: str = "", ran: frozenset[str] = frozenset()
) -> list[str]:
    """The configured order when one is set, else the order that suits what the judge saw.

    ``ran``: the retrievers already run with the current query. A name that no chunk shows
    after BM25 looked for it calls for other words (or the web) before another ranking of
    the same words; words the corpus does not use after dense looked for their meaning
    suggest the corpus does not have it: the web, when there is one, comes next.
    """
    if order:
        return list(order)
    base = list(BY_VERDICT.get(verdict, BY_VERDICT["irrelevant"]))
    if diagnosis == "lexical-miss" and "sparse" in ran:
        base = ["web", "rewrite", "swap"]
    elif diagnosis == "vocabulary-gap" and "dense" in ran:
        base = ["web", "swap", "rewrite"]
    return base


def _last_kb(state: State, names: list[str]) -> str:
    for source, _ in reversed(state.get("tried", [])):
        if source != "web":
            return source
    return names[0] if names else "dense"


def make_correct(deps: Deps) -> Any:
    """Build the correct node; each skipped action is recorded with its reason."""

    async def correct(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        verdict = state["judgment"]["verdict"]
        iteration = state.get("iteration", 0) + 1
        tried = {(s, q) for s, q in state.get("tried", [])}
        down = unavailable(state)
        names = [n for n in deps.available_retrievers(ctx.retrievers) if n not in down]
        base = _last_kb(state, names)
        query = state["query"]
        actions = list(state.get("actions", []))
        taken = [a["action"] for a in actions if a["action"] in ("rewrite", "swap", "web")]
        last = taken[-1] if taken else ""
        diagnosis = diagnose(state["judgment"].get("signals") or {})
        ran = {s for s, _ in tried}
        seen_as = f"{verdict}, {diagnosis}" if diagnosis else verdict
        ran_now = frozenset(s for s, q in tried if q == query)
        plan = action_order(verdict, ctx.correct_order, diagnosis, ran_now)
        if not ctx.correct_order and any(n not in ran for n in names) and "rewrite" in plan:
            # every ranking sees the question as asked before other words are tried, so the
            # loop can reach what the best single retriever would have found
            plan.remove("rewrite")
            plan.insert(plan.index("swap") + 1 if "swap" in plan else len(plan), "rewrite")
        seen_by_all = len(names) > 1 and all((n, state["question"]) in tried for n in names)
        for action in plan:
            choice, why = None, ""
            if action == "rewrite" and diagnosis and not ctx.correct_order and seen_by_all:
                # the offline rewrite adds the kept chunks' own words; once every ranking has
                # seen the question it rarely finds new evidence and costs an iteration (an
                # LLM rewrite, or an explicit correct_order, still runs)
                why = REWRITE_AFTER_ALL
            elif action == "swap":
                if diagnosis:
                    ring = [n for n in preferred(diagnosis, ran) if n in names]
                    ring += [n for n in names if n not in ring]
                    ring.sort(key=lambda n: n in ran)  # a ranking not yet seen comes first
                else:  # no signals (an LLM or scripted judge): the configured ring
                    start = names.index(base) if base in names else -1
                    ring = names[start + 1 :] + names[: start + 1]
                free = [n for n in ring if (n, query) not in tried]
                if free:
                    choice, why = (
                        (free[0], query),
                        f"{seen_as}: try retriever {free[0]} instead of {base}",
                    )
                else:
                    why = "every retriever was already tried with this query"
            elif action == "rewrite" and last == "rewrite":
                why = "the last action was already a rewrite (avoids query drift)"
            elif action == "rewrite":
                seen = state.get("candidates", []) + state.get("contexts", [])
                new = await deps.rewriter.rewrite(
                    state["question"], query, seen, ctx.prompts.get("rewrite")
                )
                fallback = getattr(new, "fallback", None)
                new = new.strip()
                # new words suit a ranking that reads both words and meaning
                target = "hybrid" if diagnosis and "hybrid" in names else base
                if new and (target, new) not in tried:
                    choice, why = (target, new), f"{seen_as}: rewrite the query for {target}"
                    if fallback:
                        why += f" ({fallback})"
                else:
                    why = "the rewrite gave no new query" + (f" ({fallback})" if fallback else "")
            elif action == "web":
                if deps.web is None:
                    why = "no web search configured (set TAVILY_API_KEY or a web corpus)"
                elif "web" in down:
                    why = down["web"]
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
                "steps": add_step(
                    {**state, "iteration": iteration},
                    "correct",
                    detail,
                    action=action,
                    retriever=source,
                    query=new_query,
                    reason=why,
                ),  # fmt: skip
            }
        actions.append(
            Action(action="none", reason="no corrective action left", iteration=iteration)
        )
        return {
            "actions": actions,
            "stop_reason": "exhausted",
            "steps": add_step(
                state,
                "correct",
                "no corrective action left; answering",
                action="none",
                reason="no corrective action left",
            ),  # fmt: skip
        }

    return correct
