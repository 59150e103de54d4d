"""answer: from the kept contexts with [n] citations, or from the draft when no retrieval ran."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.documents.boilerplate import quotable
from ragloop.documents.quoting import quoted_heading
from ragloop.nodes.base import Answerer, Deps
from ragloop.nodes.evidence import question_names
from ragloop.nodes.notfound import NOT_ANSWERED, NOT_FOUND, see_also
from ragloop.nodes.reading import judge_order, rank_contexts
from ragloop.state import ContextItem, State, add_step

__all__ = [
    "NOT_ANSWERED",
    "NOT_FOUND",
    "answer_step",
    "cite",
    "fill_to_k",
    "judge_order",
    "make_answer",
    "rank_contexts",
    "see_also",
]


def cite(n: int, ctx: ContextItem, answer: str = "") -> dict[str, Any]:
    """A citation: the chunk, its heading path (``Doc › Section``) and, for a PDF, the page.

    When the chunk packs several small sections, the path goes down to the one quoted.
    """
    page = ctx.get("page")
    title = ctx.get("title", "")
    sub = quoted_heading(answer, n, ctx.get("text", "")) if answer else None
    title = f"{title} › {sub}" if sub and title else sub or title
    return {
        "n": n,
        "id": ctx["id"],
        "source": ctx.get("source", ""),
        "title": f"{title}, p. {page}" if isinstance(page, int) else title,
        "page": page if isinstance(page, int) else None,
        "origin": ctx.get("origin", "kb"),
    }


def fill_to_k(
    kept: list[ContextItem], dropped: list[ContextItem], k: int
) -> tuple[list[ContextItem], int]:
    """Kept contexts, then (when fewer than ``k``) dropped ones in the order they were found.

    A judge that measures evidence is sometimes wrong at the margin; reading what it graded
    low after everything it kept, as naive RAG would, means one false low grade cannot lose
    a passage the first retrieval found. Only chunks that judge graded are used, so an LLM
    judge's "irrelevant" is never read; nothing is added when nothing was kept.
    """
    if not kept or len(kept) >= k:
        return kept, 0
    have = {c["id"] for c in kept}
    extra = [c for c in dropped if c["id"] not in have][: k - len(kept)]
    return [*kept, *extra], len(extra)


async def answer_step(
    answerer: Answerer, question: str, contexts: list[ContextItem], ctx: Context
) -> tuple[str, list[int], bool]:
    """The answer from ranked contexts: (text, cited context numbers, said "not found").

    Naive RAG in the benches runs this same step on a retriever's top k. An answerer says it
    found nothing by returning an ``Answer`` whose ``not_found`` is set; an ``Answer`` comes
    back as it is (its LLM message id and any cut at the reply cap ride along).
    """
    if not contexts:
        return NOT_FOUND, [], True
    k = max(ctx.k, 1)
    text, cited = await answerer.answer(question, contexts[:k], ctx.prompts.get("answer"))
    text = text if isinstance(text, str) else str(text)
    return text, list(cited), bool(getattr(text, "not_found", False))


def make_answer(deps: Deps) -> Any:
    """Build the answer node."""

    async def answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        stop = state.get("stop_reason") or ""
        if not state.get("retrieve"):
            return {
                "answer": state.get("draft", ""),
                "answer_id": None,
                "citations": [],
                "not_found": False,
                "stop_reason": "no_retrieval",
                "steps": add_step(
                    state, "answer", "answered from the draft (no retrieval)", action="draft"
                ),
            }
        nameless = not question_names(state["question"], deps.common_words)
        # boilerplate (a corpus-wide footer, a contents page) is never quoted
        contexts = rank_contexts(quotable(state.get("contexts", [])), nameless)
        if not contexts:
            return {
                "answer": NOT_FOUND,
                "answer_id": None,
                "citations": [],
                "contexts": [],
                "not_found": True,
                "stop_reason": stop or "exhausted",
                "steps": add_step(
                    state, "answer", "nothing relevant was found; said so", action="not_found"
                ),
            }
        # the answer reads the best k (as naive RAG does, so it costs the same); the rest stay
        # in the result as what the loop kept (k + 3 cited more but cost 1.6x the sentences)
        contexts, filled = fill_to_k(contexts, state.get("dropped", []), max(ctx.k, 1))
        reply, cited, not_found = await answer_step(deps.answerer, state["question"], contexts, ctx)
        text = str(reply)
        citations = [
            cite(n, contexts[n - 1], text) for n in sorted(set(cited)) if 1 <= n <= len(contexts)
        ]
        read = min(len(contexts), max(ctx.k, 1))
        detail = (
            f"answered from the best {read} of {len(contexts)} context(s), citing {len(citations)}"
            if read < len(contexts)
            else f"answered from {len(contexts)} context(s), citing {len(citations)}"
        )
        if not_found:
            detail = (
                f"no sentence of the {read} passage(s) read answers"
                f" well enough: said so, citing the {len(citations)} closest as see also"
            )
            if why := getattr(reply, "why", None):
                detail += f" ({why})"
        if filled:
            detail += f" ({filled} graded below the keep grade read last, to make up k)"
        if cut := getattr(reply, "cut", None):
            detail += f"; the answer is incomplete: {cut}"
        return {
            "answer": text,
            "answer_id": getattr(reply, "message_id", None),
            "citations": citations,
            "contexts": contexts,
            "not_found": not_found,
            "stop_reason": "not_found" if not_found else stop or "sufficient",
            "steps": add_step(
                state,
                "answer",
                detail,
                action="not_found" if not_found else "answer",
                n=len(citations),
            ),  # fmt: skip
        }

    return answer
