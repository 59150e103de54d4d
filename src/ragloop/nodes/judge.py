"""judge: grade each new chunk 0/1/2, keep the relevant ones, measure recall, give a verdict."""

from __future__ import annotations

import math
from typing import Any, cast

from langgraph.runtime import Runtime

from ragloop.config import Context, context_of
from ragloop.documents.boilerplate import is_boilerplate
from ragloop.nodes.base import Deps, Draft
from ragloop.nodes.prompts import Passage
from ragloop.retrievers.dense import titled_text
from ragloop.state import ContextItem, Judgment, State, add_fallback, add_step
from ragloop.text import split_sentences


def merge(kept: list[ContextItem], new: list[ContextItem]) -> list[ContextItem]:
    """Kept contexts plus new ones, deduplicated by chunk id (the first grade stays)."""
    seen = {c["id"] for c in kept}
    out = list(kept)
    for item in new:
        if item["id"] not in seen:
            seen.add(item["id"])
            out.append(item)
    return out


def judged_text(item: ContextItem) -> str:
    """What the judge reads: the heading path, a newline, the clean text (as dense embeds it)."""
    return titled_text(str(item.get("title") or ""), item["text"])


def _graded(item: ContextItem, grade: int, evidence: float | None) -> ContextItem:
    """The item with this judgment's grade (and evidence, when the judge gives one)."""
    out: dict[str, Any] = {k: v for k, v in item.items() if k != "evidence"}
    out["grade"] = int(grade)
    if evidence is not None:
        out["evidence"] = round(float(evidence), 4)
    return cast(ContextItem, out)


def compared(value: float, threshold: float) -> tuple[str, str]:
    """``value`` and ``threshold`` printed with enough digits to show why one is below.

    0.5999 and 0.60 both read "0.60" at two digits, which made "recall 0.60 < 0.60".
    """
    for digits in (2, 3, 4, 6):
        a, b = f"{value:.{digits}f}", f"{threshold:.{digits}f}"
        if a != b or value == threshold:
            return a, b
    return repr(value), repr(threshold)


def verdict_of(contexts: int, relevance: float, recall: float, ctx: Context) -> tuple[str, str]:
    """The verdict from the numbers, with the reason in words."""
    if contexts == 0:
        return "irrelevant", "no relevant context kept yet"
    rel, rel_min = compared(relevance, ctx.relevance_threshold)
    rec, rec_min = compared(recall, ctx.recall_threshold)
    if relevance < ctx.relevance_threshold and recall < ctx.recall_threshold:
        return "irrelevant", f"relevance {rel} < {rel_min} and recall {rec}"
    if recall < ctx.recall_threshold:
        return "incomplete", f"recall {rec} < {rec_min}"
    return "sufficient", f"recall {rec} >= {rec_min}"


def make_judge(deps: Deps) -> Any:
    """Build the judge node (development mode against a reference, else service mode)."""

    async def judge(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = context_of(runtime, deps.context)  # the server's settings when none was sent
        question = state["question"]
        # boilerplate (a corpus-wide footer, a contents page) is not judged: grade 0, no evidence
        boilerplate = [c for c in state.get("candidates", []) if is_boilerplate(c)]
        candidates = [c for c in state.get("candidates", []) if not is_boilerplate(c)]
        kept_before = state.get("contexts", [])
        reference = state.get("reference")
        if reference:
            mode, claims = "development", split_sentences(reference) or [reference]
        else:
            draft = Draft(state.get("draft", ""), state.get("draft_source", "none"), True)
            mode, claims = "service", await deps.drafter.claims(question, draft)
        assessment = await deps.judge.assess(
            question,
            [Passage(judged_text(c), c.get("origin", "kb")) for c in candidates],
            [Passage(judged_text(c), c.get("origin", "kb")) for c in kept_before],
            claims,
            ctx.relevance_keep,
        )
        evidence: list[float | None] = (
            list(assessment.evidence) if assessment.evidence else [None] * len(candidates)
        )
        graded = [
            _graded(c, g, e)
            for c, g, e in zip(candidates, assessment.grades, evidence, strict=True)
        ] + [_graded(c, 0, None) for c in boilerplate]
        new_kept = [c for c in graded if c["grade"] >= ctx.relevance_keep]
        contexts = merge(kept_before, new_kept)
        # graded below the keep grade (boilerplate aside): the answer may still read them last,
        # to make up k as naive RAG would, so one false low grade (an LLM's too) loses nothing
        low = [c for c in graded[: len(candidates)] if c["grade"] < ctx.relevance_keep]
        dropped = merge(state.get("dropped", []), low)
        relevance = sum(c["grade"] for c in graded) / (2 * len(graded)) if graded else 0.0
        supported = assessment.supported
        recall = sum(supported) / len(supported) if supported else (1.0 if contexts else 0.0)
        if mode == "service" and assessment.recall is not None:
            recall = float(assessment.recall)  # graded: the best evidence in hand
        verdict, why = verdict_of(len(contexts), relevance, recall, ctx)
        second: float | None = None
        if ctx.judge_mode == "second_response" and reference and contexts:
            answer, *_ = await deps.answerer.answer(question, contexts, ctx.prompts.get("answer"))
            second = await deps.judge.second_response(answer, reference)
            if verdict == "sufficient" and not math.isnan(second) and second < ctx.recall_threshold:
                verdict, why = (
                    "incomplete",
                    f"second response scores {second:.2f} against the reference",
                )
        judgment = Judgment(
            verdict=verdict,
            relevance=relevance,
            recall=recall,
            kept=len(new_kept),
            dropped=len(graded) - len(new_kept),
            mode=mode,
            second_response=second,
            reason=why,
            signals={k: round(float(v), 4) for k, v in assessment.signals.items()},
        )
        stop = ""
        if verdict == "sufficient":
            stop = "sufficient"
        elif state.get("iteration", 0) >= ctx.max_iterations:
            stop = "max_iterations"
        detail = (
            f"{verdict} ({why}); kept {len(new_kept)}, dropped {judgment['dropped']}, "
            f"{len(contexts)} context(s) in hand [{mode} mode]"
        )
        return {
            "candidates": graded,
            "contexts": contexts,
            "dropped": dropped,
            "judgment": judgment,
            "stop_reason": stop,
            "steps": add_fallback(
                add_step(state, "judge", detail, action=verdict, n=len(new_kept), reason=why),
                state,
                "judge",
                getattr(assessment, "fallback", None),
            ),
        }

    return judge
