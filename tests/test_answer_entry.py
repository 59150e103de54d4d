"""The offline answer quotes the entry line that defines a name over lines that mention it."""

from __future__ import annotations

import asyncio

from ragloop.nodes.entries import page_subject, subject_entry
from ragloop.nodes.extractive import AnswerWeights
from ragloop.nodes.offline import OfflineStrategies
from ragloop.nodes.sentences import entry, name_weights, quotable
from ragloop.state import ContextItem
from tests.fakes.embeddings import HashEmbeddings


def _ctx(n: int, title: str, body: str) -> ContextItem:
    return ContextItem(id=f"c#{n}", title=title, text=f"# {title}\n\n{body}", evidence=0.5)


QUESTION = "What does the SQL command ALTER VIEW do?"
COMPAT = _ctx(1, "ALTER VIEW › Compatibility", "ALTER VIEW is an extension of the SQL standard.")
NOTES = _ctx(2, "ALTER VIEW › Notes", "Only the owner of a view may run ALTER VIEW on it.")
DEFINING = _ctx(3, "ALTER VIEW", "ALTER VIEW — change the definition of a view")


def test_a_sentence_that_is_or_follows_the_defining_line_is_the_names_entry():
    assert entry(["alter view"], "ALTER VIEW — change the definition of a view", "") == 1.0
    assert (
        entry(["lseg"], "Extracts the box's diagonal as a segment.", "lseg ( box ) → lseg") == 1.0
    )
    assert entry(["alter view"], "Only the owner may run ALTER VIEW on it.", "A note.") == 0.0
    # the piece before each quotable sentence is what its chunk says just above it
    ctx = _ctx(4, "9.11", "lseg ( box ) → lseg\n\nExtracts the box's diagonal as a segment.")
    q = quotable([ctx])[-1]
    sentence, n, heading, before = q.sentence, q.n, q.heading, q.before
    assert sentence.startswith("Extracts")
    assert (n, heading, before) == (1, "9.11", "lseg ( box ) → lseg")


def test_a_name_every_context_mentions_still_marks_the_one_context_that_defines_it():
    contexts = [COMPAT, NOTES, DEFINING]
    assert name_weights(["alter view"], contexts) == {"alter view": 0.0}
    assert name_weights(["alter view"], contexts, defining=True) == {"alter view": 1.0}


def test_the_entry_line_is_quoted_over_a_mention():
    # before: "ALTER VIEW" was named by every context, so its bonuses faded to nothing and
    # the compatibility note outscored the line that says what the command does
    contexts = [COMPAT, NOTES, DEFINING]
    strategies = OfflineStrategies(HashEmbeddings(dim=256), max_sentences=1)
    text, cited = asyncio.run(strategies.answer(QUESTION, contexts))
    assert cited == [3] and "change the definition" in text
    without = OfflineStrategies(
        HashEmbeddings(dim=256), max_sentences=1, answer_weights=AnswerWeights(name_entry=0.0)
    )
    assert asyncio.run(without.answer(QUESTION, contexts))[1] == [1]


def test_a_nameless_question_is_answered_by_what_the_pages_subject_does():
    # before: the sentence that echoes the question outscored the one that says what the
    # page's subject does, since the question gives no name for the entry bonus to follow
    assert page_subject("REINDEX › Description") == "REINDEX"
    assert page_subject("os — Miscellaneous operating system interfaces › Files") == "os"
    assert subject_entry("REINDEX rebuilds an index.", "", "REINDEX › Description") == 1.0
    assert subject_entry("Remove it first.", "DROP TYPE — remove a data type", "DROP TYPE") == 1.0
    assert subject_entry("An index has become corrupted.", "", "REINDEX › Description") == 0.0
    question = "How do I rebuild an index that has become bloated or corrupted?"
    echo = ContextItem(
        id="reindex#1",
        title="REINDEX › Description",
        text="# REINDEX › Description\n\nAn index may become corrupted by bugs.",
    )
    does = ContextItem(
        id="reindex#0",
        title="REINDEX › Description",
        text="# REINDEX › Description\n\nREINDEX rebuilds an index from the table's data.",
    )
    embeddings = HashEmbeddings(dim=256)
    off = AnswerWeights(subject_entry=0.0)
    plain = OfflineStrategies(embeddings, max_sentences=1, answer_weights=off)
    assert asyncio.run(plain.answer(question, [echo, does]))[1] == [1]
    strategies = OfflineStrategies(embeddings, max_sentences=1)
    text, cited = asyncio.run(strategies.answer(question, [echo, does]))
    assert cited == [2] and text.startswith("REINDEX rebuilds")
