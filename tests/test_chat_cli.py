"""``ragloop chat`` in a terminal: the header names corpus, model and thread; quit words leave."""

import pytest
from typer.testing import CliRunner

from ragloop.chat.traces import TraceStore
from ragloop.cli import app
from ragloop.cli.chat import is_quit
from tests.conftest import CORPUS


def chat(*args: str, input: str):
    result = CliRunner().invoke(app, ["chat", *args], input=input, catch_exceptions=False)
    return result, " ".join(result.output.split())


@pytest.mark.parametrize("word", ["quit", "exit", ":q", "/quit", "/exit", "/:q", "QUIT", "exit!"])
def test_quit_words_leave(word):
    assert is_quit(word)


@pytest.mark.parametrize("line", ["quit smoking?", "how do I exit the app?", "q1", "/trace"])
def test_questions_that_mention_quitting_are_not_quit(line):
    assert not is_quit(line)


def test_header_names_corpus_model_and_thread_and_quit_leaves_unanswered(data_dir):
    result, out = chat(
        "--thread",
        "t1",
        "--corpus",
        str(CORPUS),
        input="How much does an interlibrary loan cost?\nexit\nWhat does the Maker Lab offer?\n",
    )
    assert result.exit_code == 0, out
    packed = "".join(result.output.split())  # rich may wrap a long path anywhere
    assert f"corpus{CORPUS}" in packed
    assert "model none" in out and "thread t1 (new)" in out
    turns = TraceStore(data_dir / "traces.sqlite").turns()
    # "exit" left: the question after it was never read, and "exit" itself was not answered
    assert [t.original or t.question for t in turns] == ["How much does an interlibrary loan cost?"]


def test_a_follow_up_is_condensed_and_a_standalone_question_is_not(data_dir):
    result, out = chat(
        "--corpus",
        str(CORPUS),
        input=(
            "How much does an interlibrary loan cost?\n"
            "and how long does that take?\n"
            "Which branch has car parking?\n"
            ":q\n"
        ),
    )
    assert result.exit_code == 0, out
    questions = [t.question for t in TraceStore(data_dir / "traces.sqlite").turns()]
    assert questions == [
        "How much does an interlibrary loan cost?",
        "How long does the interlibrary loan take?",
        "Which branch has car parking?",
    ]
    assert out.count("(as: ") == 1
