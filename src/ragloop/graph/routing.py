"""Pure edge functions: read the state and the context, name the next node, nothing else."""

from __future__ import annotations

from typing import Literal

from ragloop.state import State


def after_decide(state: State) -> Literal["retrieve", "answer"]:
    """Retrieve when the decide node asked for it, else answer from the draft."""
    value = state.get("retrieve")
    if value is True:
        return "retrieve"
    if value is False:
        return "answer"
    raise ValueError(f"decide left retrieve={value!r}; expected True or False")


def after_judge(state: State) -> Literal["answer", "correct"]:
    """Answer when the verdict is sufficient or the judge hit the cap; otherwise correct.

    The judge compares ``iteration`` with the context's ``max_iterations`` and sets
    ``stop_reason="max_iterations"``; this function only reads the state.
    """
    verdict = state.get("judgment", {}).get("verdict")
    if verdict not in ("sufficient", "irrelevant", "incomplete"):
        raise ValueError(f"unknown verdict {verdict!r}")
    if verdict == "sufficient" or state.get("stop_reason") == "max_iterations":
        return "answer"
    return "correct"


def after_correct(state: State) -> Literal["retrieve", "answer"]:
    """Retrieve again when correct chose an action; answer when none was left."""
    stop = state.get("stop_reason")
    if stop in (None, ""):
        return "retrieve"
    if stop == "exhausted":
        return "answer"
    raise ValueError(f"unexpected stop_reason after correct: {stop!r}")
