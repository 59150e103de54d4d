"""Dotted, qualified and SQL names are matched by the judge and by the extractive answer."""

from __future__ import annotations

import asyncio

import pytest

from ragloop.nodes.evidence import identifiers, lexical, name_match
from ragloop.nodes.offline import OfflineStrategies
from ragloop.nodes.offline_judge import recall_of
from ragloop.state import ContextItem


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What does os.path.isdir do?", ["os.path.isdir"]),
        ("Does Path.exists() follow symlinks?", ["path.exists"]),
        ("What does error KX-217 mean?", ["kx-217"]),
        ("What is pg_stat_activity for?", ["pg_stat_activity"]),
        ("What does CREATE INDEX do?", ["create index"]),
        ("What changed in TidyOS 4.2.0?", ["tidyos", "4.2.0"]),
        ("How do I make my queries faster?", []),
    ],
)
def test_identifiers(question, expected):
    assert sorted(identifiers(question)) == sorted(expected)


def test_name_match_full_tail_and_phrase():
    assert name_match("os.setresgid", "Call os.setresgid(r, e, s) to change ids.") == 1.0
    # documented under the module, written without it: the call form still counts
    assert name_match("os.setresgid", "setresgid(rgid, egid, sgid) sets the ids.") == 0.8
    assert name_match("path.exists", "Path.exists", heading=True) == 1.0
    assert name_match("path.exists", "The file exists on disk.") == 0.4  # an ordinary word
    assert name_match("create index", "CREATE  INDEX constructs an index") == 1.0
    assert name_match("kx-217", "Error KX-2170 is another code") == 0.0
    assert name_match("pg_stat_activity", "see pg_stat_activity_ext") == 0.0


DEFINES = ContextItem(
    id="os#12",
    title="os — Miscellaneous operating system interfaces › setresgid",
    text="setresgid(rgid, egid, sgid) Set the current process's real, effective, and saved "
    "group ids. Availability: Unix, not Emscripten, not WASI.",
    source="os.rst",
)
MENTIONS = ContextItem(
    id="os#3",
    title="os — Miscellaneous operating system interfaces › Process Parameters",
    text="These functions and data items provide information and operate on the current "
    "process and user. Process parameters can be read with the functions below.",
    source="os.rst",
)


def test_lexical_evidence_sees_the_dotted_name_in_the_heading():
    lex = lexical("What does os.setresgid do?", DEFINES["text"], DEFINES["title"])
    assert lex.names_heading == (0.8,) and lex.names_text == (0.8,)
    other = lexical("What does os.setresgid do?", MENTIONS["text"], MENTIONS["title"])
    assert other.names_heading == (0.0,) and other.names_text == (0.0,)


@pytest.mark.parametrize("prefix", ["os.", ""])
def test_judge_grades_the_defining_chunk_with_or_without_the_module(wordllama, prefix):
    strategies = OfflineStrategies(wordllama)
    texts = [f"{c['title']}\n{c['text']}" for c in (DEFINES, MENTIONS)]
    question = f"What does {prefix}setresgid do?"
    got = asyncio.run(strategies.assess(question, texts, [], [question], 1))
    assert got.grades[0] >= 1 and got.evidence[0] > got.evidence[1]
    assert got.recall == pytest.approx(recall_of(strategies.calibration, got.evidence[0]))


def test_extractive_answer_quotes_the_chunk_that_names_the_identifier(wordllama):
    strategies = OfflineStrategies(wordllama, max_sentences=1)
    text, cited = asyncio.run(strategies.answer("What does os.setresgid do?", [MENTIONS, DEFINES]))
    assert cited == [2] and "group ids" in text
