"""Follow-ups become standalone questions: offline heuristic and LLM condensing, multi-turn."""

import asyncio

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from ragloop.chat.condense import (
    HeuristicCondenser,
    LLMCondenser,
    Turn,
    condenser_for,
    heuristic_condense,
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
