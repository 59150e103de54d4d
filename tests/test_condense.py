"""Follow-ups become standalone questions: offline heuristic and LLM condensing, multi-turn."""

import asyncio

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from ragloop.nodes.condense import (
    HeuristicCondenser,
    LLMCondenser,
    Turn,
    condenser_for,
    heuristic_condense,
    is_follow_up,
    topic_span,
)
from tests.fakes.chat import ScriptedChatModel


@pytest.mark.parametrize(
    ("previous", "turn", "standalone"),
    [
        # a pronoun is replaced by the previous question's topic
        (
            "How much does an interlibrary loan cost?",
            "and how long does that take?",
            "How long does the interlibrary loan take?",
        ),
        (
            "What are the opening hours of the Northgate Branch?",
            "Is it open on Sundays?",
            "Is the Northgate Branch open on Sundays?",
        ),
        ("How do I get a library card?", "is that free?", "Is the library card free?"),
        (
            "How do I get a library card?",
            "what is its replacement fee?",
            "What is the library card's replacement fee?",
        ),
        (
            "How do I get a library card?",
            "how long does that card stay valid?",
            "How long does the library card stay valid?",
        ),
        (
            "Where is the Central Library?",
            "Can I park there?",
            "Can I park at the Central Library?",
        ),
        # "what about X" / "and X": the topic is swapped for X
        ("How long can I borrow a book?", "what about DVDs?", "How long can I borrow DVDs?"),
        ("How long can I borrow a book?", "and DVDs?", "How long can I borrow DVDs?"),
        (
            "Is there car parking at the Central Library?",
            "and at Eastshore?",
            "Is there car parking at Eastshore?",
        ),
        (
            "How much are late fees for DVDs?",
            "what about books?",
            "How much are late fees for books?",
        ),
        # ellipsis: connective or few content words, the topic is appended
        (
            "How long can I borrow a book?",
            "and how many times can I renew?",
            "How many times can I renew a book?",
        ),
        (
            "How long can I borrow a book?",
            "how many times can I renew?",
            "How many times can I renew a book?",
        ),
    ],
)
def test_heuristic_follow_ups(previous, turn, standalone):
    assert heuristic_condense(turn, previous) == standalone


@pytest.mark.parametrize(
    "turn",
    [
        "What is the Maker Lab?",
        "Who can join Books on Wheels?",
        "What is a hold?",
        "How much does it cost to replace a lost library card at Eastshore Branch",
    ],
)
def test_standalone_questions_are_left_alone(turn):
    previous = "How much does an interlibrary loan cost?"
    if "it cost" in turn:  # "it" is an expletive here, but the named branch keeps the rest
        assert "Eastshore Branch" in heuristic_condense(turn, previous)
    else:
        assert heuristic_condense(turn, previous) == turn


def test_topic_is_the_last_run_of_content_words_with_its_article():
    assert topic_span("How much does an interlibrary loan cost?")[2] == "an interlibrary loan"
    assert topic_span("Is there car parking at the Central Library?")[2] == "the Central Library"
    assert topic_span("what is it?") is None
    assert heuristic_condense("and that?", "what is it?") == "and that?"


def run_script(condenser, turns):
    """Feed turns one by one as the chat does: each standalone question joins the history."""
    history, out = [], []
    for text in turns:
        standalone = asyncio.run(condenser.acondense(text, history))
        out.append(standalone)
        history.append(Turn(standalone, f"answer to {standalone}", text))
    return out


def test_heuristic_multi_turn_script():
    out = run_script(
        HeuristicCondenser(),
        [
            "How long can I borrow a book?",
            "and how many times can I renew it?",
            "what about DVDs?",
            "What is the Maker Lab?",
            "and how much does printing cost there?",
        ],
    )
    assert out == [
        "How long can I borrow a book?",
        "How many times can I renew the book?",
        "How many times can I renew DVDs?",
        "What is the Maker Lab?",
        "How much does printing cost at the Maker Lab?",
    ]


def test_llm_condenser_one_call_per_follow_up_with_the_history_in_the_prompt():
    llm = ScriptedChatModel(
        script=[
            "How long does an interlibrary loan take?",
            'Standalone question: "Can an interlibrary loan be renewed?"',
            "",
        ]
    )
    condenser = LLMCondenser(llm)
    out = run_script(
        condenser,
        [
            "How much does an interlibrary loan cost?",
            "and how long does that take?",
            "can I renew it?",
            "is it free?",
        ],
    )
    assert out[0] == "How much does an interlibrary loan cost?"  # first turn: no call
    assert out[1] == "How long does an interlibrary loan take?"
    assert out[2] == "Can an interlibrary loan be renewed?"  # prefix and quotes stripped
    assert out[3] == "Is the interlibrary loan free?"  # empty reply: the heuristic's answer
    assert len(llm.calls) == 3
    system, human = llm.calls[1]
    assert isinstance(system, SystemMessage) and "standalone" in system.content
    assert isinstance(human, HumanMessage)
    assert "User: How much does an interlibrary loan cost?" in human.content
    assert "Assistant: answer to How long does an interlibrary loan take?" in human.content
    assert human.content.rstrip().endswith("Last message: can I renew it?")


def test_condenser_for_picks_by_strategies():
    class Offline:
        name = "offline"

    class WithLLM:
        name = "llm"
        llm = ScriptedChatModel(script=["x"])

    assert isinstance(condenser_for(Offline()), HeuristicCondenser)
    assert isinstance(condenser_for(WithLLM()), LLMCondenser)


@pytest.mark.parametrize(
    ("previous", "turn", "standalone"),
    [
        # the reported bad case: "midnight" is a time, never the thing "that" points to
        (
            "What happens at midnight?",
            "show me an example of that",
            "Show me an example of what happens at midnight.",
        ),
        (
            "What happens to the trash at midnight?",
            "show me an example of that",
            "Show me an example of what happens to the trash at midnight.",
        ),
        (
            "How do I clear DK-04 on the Kestrel Dock?",
            "show me an example of that",
            "Show me an example of how to clear DK-04 on the Kestrel Dock.",
        ),
        ("What is the Maker Lab?", "tell me more about that", "Tell me more about the Maker Lab."),
        ("What is the Maker Lab?", "an example?", "An example of the Maker Lab?"),
        # "it" with a light verb after a how-to question is the action, not the last noun
        (
            "How do I clear DK-04 on the Kestrel Dock?",
            "how long does it take?",
            "How long does it take to clear DK-04 on the Kestrel Dock?",
        ),
        ("What does error KX-217 mean?", "how do I fix it?", "How do I fix error KX-217?"),
        ("What does error KX-217 mean?", "and what about KX-300?", "What does KX-300 mean?"),
        ("How do I get a library card?", "is this one free?", "Is the library card free?"),
        (
            "Is the Central Library closed on Sundays?",
            "why?",
            "Why is the Central Library closed on Sundays?",
        ),
        (
            "Which KP-PA-24 adapters are covered by the safety notice in Ireland?",
            "and in Belgium?",
            "Which KP-PA-24 adapters are covered by the safety notice in Belgium?",
        ),
    ],
)
def test_real_follow_ups(previous, turn, standalone):
    assert is_follow_up(turn)
    assert heuristic_condense(turn, previous) == standalone


@pytest.mark.parametrize(
    ("previous", "turn"),
    [
        # standalone questions: not follow-ups, never touched
        ("How do I get a library card?", "What does error KX-217 mean?"),
        ("How do I get a library card?", "Is there car parking at the Central Library?"),
        ("How do I get a library card?", "What is KX-217 and how do I fix it?"),
        ("How do I clear DK-04?", "What is the warranty period of the Tidy T2?"),
        ("How do I clear DK-04?", "thanks"),
    ],
)
def test_standalone_turns_are_not_follow_ups(previous, turn):
    assert not is_follow_up(turn)
    assert asyncio.run(HeuristicCondenser().acondense(turn, [Turn(previous, "a")])) == turn


@pytest.mark.parametrize(
    ("previous", "turn"),
    [
        # follow-ups whose referent is unclear are left alone rather than guessed
        ("What happens at midnight?", "how do I stop it?"),
        ("What is the Maker Lab?", "how much do those printers cost?"),
        ("How do I clear DK-04?", "ok great"),
    ],
)
def test_unclear_follow_ups_are_left_alone(previous, turn):
    assert heuristic_condense(turn, previous) == turn


def test_time_expressions_are_never_the_topic():
    assert topic_span("What happens at midnight?") is None
    assert topic_span("What happens to the trash at midnight?")[2] == "the trash"
    span = topic_span("What are the opening hours of the Northgate Branch on Sundays?")
    assert span[2] == "the Northgate Branch"


def test_llm_condenser_makes_no_call_for_a_standalone_turn():
    llm = ScriptedChatModel(script=["What is the warranty of the Tidy T2?"])
    history = [Turn("How do I clear DK-04?", "Press the reset button.")]
    turn = "What is the warranty period of the Tidy T2?"
    assert asyncio.run(LLMCondenser(llm).acondense(turn, history)) == turn
    assert llm.calls == []
    assert asyncio.run(LLMCondenser(llm).acondense("and how long does it take?", history))
    assert len(llm.calls) == 1
