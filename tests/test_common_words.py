"""A corpus's own words ("PostgreSQL" on its docs) are no names the judge or the answer seek."""

from __future__ import annotations

import asyncio

from langchain_core.documents import Document

from ragloop.nodes.evidence import lexical, question_names, terms
from ragloop.nodes.offline import OfflineStrategies
from ragloop.nodes.vocabulary import common_words
from ragloop.retrievers.sparse import build_bm25, chunk_counts, page_titles
from ragloop.state import ContextItem
from tests.fakes.embeddings import HashEmbeddings

QUESTION = "How can I get rid of a procedure in PostgreSQL?"
ENTRY = ContextItem(
    id="drop#0",
    title="DROP PROCEDURE",
    text="# DROP PROCEDURE\n\nDROP PROCEDURE — remove a procedure",
)
COMPAT = ContextItem(
    id="drop#3",
    title="DROP PROCEDURE › Compatibility",
    text="# DROP PROCEDURE › Compatibility\n\n"
    "This command conforms to the SQL standard, with these PostgreSQL extensions.",
)
OWN = frozenset({"postgresql", "sql"})


def test_common_words_are_the_frequent_tokens_no_page_is_about():
    counts = {"postgresql": 190, "sql": 140, "select": 120, "drop": 30, "procedure": 12}
    pages = ["SELECT", "DROP PROCEDURE", "9.3. Mathematical Functions"]
    assert common_words(counts, 1000, pages) == {"postgresql", "sql"}
    # a page titled "word — what it does" is about the word too
    assert common_words(counts, 1000, ["sql — the SQL language"]) == {"postgresql", "select"}
    assert common_words(counts, 1000, pages, share=0.15) == {"postgresql"}
    # in a small base every product page says its name: nothing is common there
    assert common_words({"kestrel": 40}, 54) == frozenset()
    assert common_words({"kestrel": 40}, 54, min_chunks=10) == {"kestrel"}


def test_chunk_counts_and_page_titles_read_the_sparse_index():
    docs = [
        Document(page_content="PostgreSQL runs SQL.", metadata={"title": "Intro"}),
        Document(page_content="SQL standard notes.", metadata={"title": "SELECT › Notes"}),
        Document(page_content="Remove a procedure.", metadata={"title": "DROP PROCEDURE"}),
    ]
    counts, n = chunk_counts(build_bm25(docs))
    assert n == 3
    assert counts["sql"] == 2 and counts["postgresql"] == 1 and counts["procedure"] == 1
    assert page_titles(docs) == {"Intro", "SELECT", "DROP PROCEDURE"}


def test_a_common_word_is_neither_a_name_nor_a_term_of_the_question():
    assert question_names(QUESTION) == ["postgresql"]
    assert question_names(QUESTION, OWN) == []
    assert "postgresql" in terms(QUESTION) and "postgresql" not in terms(QUESTION, OWN)
    # a longer name that holds the word is still a name
    assert question_names("What is postgresql.conf?", OWN) == ["postgresql.conf"]
    lex = lexical(QUESTION, COMPAT["text"], COMPAT["title"], OWN)
    assert lex.names_text == () and lex.sentence < lexical(QUESTION, COMPAT["text"]).sentence


def test_judge_and_answer_prefer_the_entry_line_to_the_product_name():
    # before: the question's "PostgreSQL" was a name, and only the Compatibility section gave
    # it, so that section outranked the line that answers
    texts = [f"{c['title']}\n{c['text']}" for c in (COMPAT, ENTRY)]
    plain = OfflineStrategies(HashEmbeddings(dim=256))
    before = asyncio.run(plain.assess(QUESTION, texts, [], [], 1))
    assert before.evidence[0] > before.evidence[1]
    aware = OfflineStrategies(HashEmbeddings(dim=256), common_words=OWN)
    got = asyncio.run(aware.assess(QUESTION, texts, [], [], 1))
    assert got.evidence[1] > got.evidence[0]
    assert got.signals["names"] == 0.0  # no lexical miss for the policy to chase either
    one = OfflineStrategies(HashEmbeddings(dim=256), max_sentences=1, common_words=OWN)
    text, cited = asyncio.run(one.answer(QUESTION, [COMPAT, ENTRY]))
    assert cited == [2] and "remove a procedure" in text


def test_the_pipeline_reads_the_common_words_of_its_own_index(tmp_path, wordllama, monkeypatch):
    import ragloop.nodes.vocabulary as vocabulary
    from ragloop.config import load_settings
    from ragloop.pipeline import build_pipeline
    from tests.conftest import CORPUS

    settings = load_settings(index_dir=tmp_path / "idx", corpus_dir=CORPUS, embeddings="wordllama")
    small = build_pipeline(settings, env={}, embeddings=wordllama)
    assert small.deps.strategies.common_words == frozenset()  # a small base has none
    monkeypatch.setattr(vocabulary, "COMMON_MIN_CHUNKS", 1)
    pipe = build_pipeline(settings, env={}, embeddings=wordllama)
    index = pipe.deps.retrievers.index
    counts, n = chunk_counts(index.bm25)
    want = common_words(counts, n, page_titles(index.chunks))
    assert want and pipe.deps.strategies.common_words == want
    assert all(counts[w] > 0.1 * n for w in want)
