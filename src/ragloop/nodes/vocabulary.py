"""What a corpus's word counts say about a question: the corpus's own common words, which
name nothing, and the question's names that the corpus never mentions.

Both read the sparse index's counts (word -> number of chunks holding it, ``chunk_counts``),
which the pipeline has at hand for every index.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ragloop.nodes.entries import page_subject
from ragloop.nodes.evidence import TOKEN_PARTS, question_names
from ragloop.text import tokenize

#: no word is one of a corpus's own words (``common_words``) in an index smaller than this:
#: a few dozen chunks of one product all say its name, and its model names (T2, T3) still
#: tell them apart
COMMON_MIN_CHUNKS = 1000
#: a word in more than this share of the chunks is one of the corpus's own words
COMMON_SHARE = 0.1


def common_words(
    chunk_counts: dict[str, int],
    chunks: int,
    pages: Iterable[str] = (),
    share: float = COMMON_SHARE,
    min_chunks: int | None = None,
) -> frozenset[str]:
    """The corpus's own words: tokens in more than ``share`` of its ``chunks`` chunks, less
    those a page is about (its title, given in ``pages``, is the word, or "word — ...").

    ``chunk_counts`` maps a token to the number of chunks holding it (a sparse index's
    document frequencies). Like a vectorizer's ``max_df``, these are words a question gives
    that tell no chunk apart: "PostgreSQL" (in 19% of the PostgreSQL docs' chunks) and "SQL"
    (14%) in "How can I get rid of a procedure in PostgreSQL?" made every "Compatibility"
    section ("... conforms to the SQL standard, with these PostgreSQL extensions") look more
    evident than the line that answers ("DROP PROCEDURE — remove a procedure"). "SELECT" is
    as common there (12%), but the page "SELECT" is about it, so it stays a name.
    """
    if chunks < (COMMON_MIN_CHUNKS if min_chunks is None else min_chunks):
        return frozenset()
    subjects = {page_subject(t).lower() for t in pages}
    return frozenset(t for t, n in chunk_counts.items() if n > share * chunks and t not in subjects)


def unknown_names(
    question: str, vocabulary: Mapping[str, int] | None, common: frozenset[str] = frozenset()
) -> float:
    """Share of the question's names (``question_names``) that the corpus never mentions: a
    word of the name is in none of its chunks (``vocabulary``: word -> number of chunks
    holding it, the sparse index's counts). 0 when the question names nothing or no
    vocabulary is given.

    A question about something a corpus never names ("PgBouncer's pool_mode" asked of the
    PostgreSQL manual, "GraphQL" of a web framework's) is rarely answered by it, however close
    its other words come; the answer's abstention reads this beside the sentence scores.
    """
    names = question_names(question, common)
    if not names or not vocabulary:
        return 0.0
    return len(names_never_mentioned(question, vocabulary, common)) / len(names)


def names_never_mentioned(
    question: str, vocabulary: Mapping[str, int] | None, common: frozenset[str] = frozenset()
) -> list[str]:
    """The question's names (``question_names``) with a word that no chunk holds, by
    ``vocabulary`` (word -> number of chunks holding it); empty without a vocabulary.

    A dotted, hyphenated or slashed word counts as held when all its parts are, as the sparse
    index reads it: "Path.exists" asked of docs that write ``exists()`` under ``pathlib.Path``,
    "a 52-card deck", "out.log"; "pandas.read_excel" asked of the Python library is not.
    """
    if not vocabulary:
        return []

    def held(word: str) -> bool:
        if vocabulary.get(word, 0) > 0:
            return True
        parts = [p for p in TOKEN_PARTS.split(word) if p]
        return len(parts) > 1 and all(vocabulary.get(p, 0) > 0 for p in parts)

    return [
        n
        for n in question_names(question, common)
        if not all(held(t) for t in tokenize(n, drop_stopwords=True))
    ]
