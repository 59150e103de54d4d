"""Follow-up condensing yields questions a person would write, over many follow-up forms.

The checks here are the test's own (word lists below), not the condenser's ``broken``: no
"How do I the ...", no "do I deleting", no verb doubled with a gerund that takes an object
("rename deleting a tag"), no doubled word; a rewrite is a capitalised question that keeps
what the follow-up asked about.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.nodes.condense import LLMCondenser, Turn, heuristic_condense
from tests.fakes.chat import ScriptedChatModel

FRAMES = ["How do I", "How can I", "How should I", "Can I", "How long can I", "Where do I"]
VERBS = ["rename", "delete", "rebuild", "configure", "install", "create", "export", "reset"]
OBJECTS = [
    "a tag", "the index", "old indexes", "a branch", "the package", "logging", "my password",
    "the cache", "a book", "the API key", "DK-04", "the Maker Lab booking",
]  # fmt: skip
GERUNDS = ["deleting", "renaming", "updating", "removing", "exporting", "creating", "resetting"]
BASES = dict(
    zip(GERUNDS, ["delete", "rename", "update", "remove", "export", "create", "reset"], strict=True)
)
NOUNS = ["the --keep-index option", "the --force flag", "DVDs", "the config file", "branches"]
OPENERS = ["what about", "and what about", "how about", "And what about", "What about"]
DETERMINERS = [
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "my",
    "your",
    "our",
    "their",
    "its",
]
AUX = r"\b(?:do|does|did|can|could|should|would|will|may|might|must)\s+(?:i|we|you)\s+"


def follow_ups():
    gerund_phrase = st.builds(
        lambda g, o: f"{g} {o}".strip(),
        st.sampled_from(GERUNDS),
        st.sampled_from(["", "it", "one", "them", "a tag", "the index", "branches"]),
    )
    x = st.one_of(st.sampled_from(NOUNS), gerund_phrase)
    about = st.builds(lambda o, x, p: f"{o} {x}{p}", st.sampled_from(OPENERS), x,
                      st.sampled_from(["?", "", " ?"]))  # fmt: skip
    short = st.builds(lambda n: f"and {n}?", st.sampled_from(NOUNS))
    return st.one_of(about, short)


previous_questions = st.builds(
    lambda f, v, o: f"{f} {v} {o}?",
    st.sampled_from(FRAMES),
    st.sampled_from(VERBS),
    st.sampled_from(OBJECTS),
)


def problems(question: str) -> list[str]:
    """What makes ``question`` a sentence no person writes (empty when none)."""
    found = []
    m = re.search(AUX + r"(?P<next>[\w'-]+)(?:\s+(?P<after>[\w'-]+))?(?:\s+(?P<third>\S+))?",
                  question, re.I)  # fmt: skip
    if m:
        nxt, after = m["next"].lower(), (m["after"] or "").lower()
        third = (m["third"] or "").lower().strip("?.!")
        if nxt in DETERMINERS:
            found.append(f"an auxiliary and subject followed by '{nxt}'")
        if nxt in GERUNDS:
            found.append(f"an auxiliary and subject followed by the gerund '{nxt}'")
        if nxt in VERBS and after in GERUNDS and third in DETERMINERS + ["it", "one", "them"]:
            found.append(f"'{nxt} {after} {third}': a verb doubled with a gerund")
    words = re.findall(r"[\w'-]+", question.lower())
    found += [f"'{a} {a}' doubled" for a, b in zip(words, words[1:], strict=False) if a == b]
    if re.search(r"\b(?:what|how) about\b", question, re.I):
        found.append("still a 'what about' follow-up")
    return found


@settings(max_examples=400, deadline=None)
@given(previous=previous_questions, turn=follow_ups())
def test_rewrites_are_questions_a_person_would_write(previous, turn):
    out = heuristic_condense(turn, previous)
    if out == turn.strip():
        return  # unchanged is allowed (a wrong rewrite is worse than none) ...
    assert not problems(out), (previous, turn, out)
    assert out[0].isupper() and out.endswith("?"), out
    asked = turn.lower().replace("and what about", "").replace("what about", "")
    asked = asked.replace("how about", "").replace("and ", "", 1).strip(" ?")
    head = asked.split()[0]
    # ... and a rewrite keeps what was asked about: the option, noun, or the gerund's verb
    assert BASES.get(head, head).lower() in out.lower(), (turn, out)


@settings(max_examples=200, deadline=None)
@given(previous=previous_questions, turn=follow_ups())
def test_most_follow_ups_are_rewritten(previous, turn):
    """Leaving a follow-up unchanged is safe but not standalone: it stays the exception."""
    assert heuristic_condense(turn, previous) != turn.strip() or turn.startswith("and the")


@pytest.mark.parametrize(
    ("previous", "turn", "standalone"),
    [
        ("How do I rename a tag?", "what about deleting a tag?", "How do I delete a tag?"),
        ("How do I rename a tag?", "and what about deleting one?", "How do I delete a tag?"),
        ("How do I rebuild the index?", "what about deleting it?", "How do I delete the index?"),
        (
            "How do I delete old indexes?",
            "and what about the --keep-index option?",
            "How do I delete old indexes with the --keep-index option?",
        ),
        (
            "How can I install the package?",
            "and what about upgrading?",
            "How can I upgrade the package?",
        ),
        ("How do I configure logging?", "what about tracing?", "How do I configure tracing?"),
        (
            "How do I configure logging?",
            "and the --verbose flag?",
            "How do I configure logging with the --verbose flag?",
        ),
        (
            "What is the default port?",
            "what about deleting it?",
            "How do I delete the default port?",
        ),
        ("How long can I borrow a book?", "what about DVDs?", "How long can I borrow DVDs?"),
    ],
)
def test_follow_ups_from_the_issue_and_their_kin(previous, turn, standalone):
    assert heuristic_condense(turn, previous) == standalone


@pytest.mark.parametrize(
    "reply",
    ["How do I the --keep-index option?", "How do I rename deleting a tag?", "x" * 500],
)
def test_an_llm_rewrite_no_person_would_write_falls_back_to_the_rules(reply):
    llm = ScriptedChatModel(script=[reply])
    history = [Turn("How do I delete old indexes?", "Run ragloop prune.")]
    out = asyncio.run(
        LLMCondenser(llm).acondense("and what about the --keep-index option?", history)
    )
    assert len(llm.calls) == 1
    assert out == "How do I delete old indexes with the --keep-index option?"


def test_a_good_llm_rewrite_is_kept():
    llm = ScriptedChatModel(script=["What does the --keep-index option do when deleting?"])
    history = [Turn("How do I delete old indexes?", "Run ragloop prune.")]
    out = asyncio.run(
        LLMCondenser(llm).acondense("and what about the --keep-index option?", history)
    )
    assert out == "What does the --keep-index option do when deleting?"
