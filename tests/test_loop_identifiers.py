"""Dotted, qualified and SQL names are matched by the judge and by the extractive answer."""

from __future__ import annotations

import asyncio

import pytest

from ragloop.nodes.entries import defines
from ragloop.nodes.evidence import identifiers, lexical, name_match
from ragloop.nodes.extractive import AnswerWeights
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
        ("What does asind() return?", ["asind"]),
        ("How do I make my queries faster?", []),
        # command-line options, not a hyphenated word's tail or a negative number
        ("What does the df option --human-readable do?", ["--human-readable"]),
        ("How do I use grep -i with a well-known e-mail list?", ["-i"]),
        ("Why does it return -1?", []),
        ("When I build with make -j8 the output is mixed.", ["-j"]),
        # a Rust or C++ path is one name
        ("What does std::vec::Vec::push do?", ["std::vec::vec::push"]),
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


# a table of many functions under one heading: the row that starts with the name defines it
TABLE = (
    "Function | Description\n\nasin ( double precision ) → double precision\n\nInverse sine, "
    "result in radians\n\nasind ( double precision ) → double precision\n\nInverse sine, result "
    "in degrees"
)
PROSE = "Functions such as asind are listed in the table of trigonometric functions below."


def test_a_line_that_starts_with_the_name_defines_it():
    assert defines("asind", TABLE) == 1.0
    assert defines("asin", TABLE) == 1.0 and defines("acos", TABLE) == 0.0
    assert defines("wal_buffers", "x\n\nwal_buffers (integer): The amount of memory") == 1.0
    assert defines("pg_restore", "pg_restore — restore a database from an archive") == 1.0
    assert defines("os.setresgid", "setresgid(rgid, egid, sgid)\n\nSet the ids.") == 0.8
    assert defines("asind", PROSE) == 0.0  # mentioned, not defined
    assert defines("reindex", "REINDEX rebuilds an index") == 0.0


def test_a_signature_line_defines_the_name_under_its_own_qualifier_or_keyword():
    # Sphinx writes a method under its class, without the module: "Popen.wait(...)"
    assert defines("subprocess.popen.wait", "```\nPopen.wait(timeout=None)\n```") == 0.8
    assert defines("subprocess.popen", "class subprocess.Popen(args, bufsize=-1)") == 1.0
    assert defines("table_info", "PRAGMA x\n\nPRAGMA schema.table_info(table-name);") == 1.0
    assert defines("std::vec::vec::push", "pub fn push(&mut self, value: T)") == 0.8
    # prose that calls it, or the same last part under another qualifier, is no entry
    assert defines("communicate", "Use Popen.communicate() when using pipes.") == 0.0
    assert defines("subprocess.popen.wait", "Process.wait()") == 0.0


def test_a_name_under_fewer_qualifiers_is_named_but_not_a_qualified_names_tail():
    assert name_match("subprocess.popen.wait", "Call Popen.wait() to reap it.") == 0.8
    assert name_match("std::vec::vec::new", "let v = Vec::new();") == 0.8
    assert name_match("new", "let v = Vec::new();") == 0.0
    assert name_match("join", "os.path.join(a, b)") == 0.0


def test_an_option_entry_line_defines_each_option_it_lists():
    assert defines("--human-readable", "-h, --human-readable: print sizes in powers of 1024")
    assert defines("-h", "x\n-h, --human-readable: print sizes in powers of 1024") == 1.0
    assert defines("-f", "-f FILE, --file=FILE: Obtain patterns from FILE") == 1.0
    assert defines("--file", "-f FILE, --file=FILE: Obtain patterns from FILE") == 1.0
    assert defines("--color", "--color[=WHEN]: color the output") == 1.0
    assert defines("-e", "-e pattern, --regexp=pattern: Use pattern") == 1.0
    assert defines("-i", "-i, --ignore-case\n\nIgnore case distinctions.") == 1.0  # groff
    assert defines("-h", "Use -h, --human-readable to print sizes.") == 0.0  # a mention
    assert defines("-h", "--human-readable: print sizes") == 0.0  # not the long one's tail
    # an option is no tail of a longer one when matched in text either
    assert name_match("-h", "see --human-readable") == 0.0
    assert name_match("-h", "use -h, or --human-readable") == 1.0


def test_judge_ranks_the_table_row_that_defines_a_name_above_a_mention(wordllama):
    # before: neither heading named asind, so the mention and the defining row scored alike
    heading = "9.3. Mathematical Functions and Operators"
    lex_row = lexical("What does asind() return?", TABLE, heading)
    lex_prose = lexical("What does asind() return?", PROSE, heading)
    assert lex_row.names_heading == (1.0,) and lex_prose.names_heading == (0.0,)
    strategies = OfflineStrategies(wordllama)
    texts = [f"{heading}\n{PROSE}", f"{heading}\n{TABLE}"]
    got = asyncio.run(strategies.assess("What does asind() return?", texts, [], [], 1))
    assert got.evidence[1] > got.evidence[0]


def test_extractive_answer_never_quotes_a_heading_or_a_sentence_twice(wordllama):
    # before: "# 8.14. JSON Types › 8.14.4. jsonb Indexing" was split after "8.14." and the
    # rest quoted as a sentence, once for each chunk that carried it
    title = "8.14. JSON Types › 8.14.4. jsonb Indexing"
    shared = "GIN indexes can be used to search efficiently for keys within jsonb documents."
    contexts = [
        ContextItem(id=f"json#{n}", title=title, text=f"# {title}\n\n{shared} {extra}")
        for n, extra in enumerate(["They are large.", "They are fast to search."])
    ]
    strategies = OfflineStrategies(wordllama, max_sentences=3)
    text, _ = asyncio.run(strategies.answer("How do I index jsonb documents?", contexts))
    assert "JSON Types" not in text
    assert text.count(shared) == 1


def test_a_long_heading_path_does_not_outweigh_the_sentence_that_answers():
    # before: each sentence was embedded as "heading: sentence", so a heading sharing the
    # question's words lifted an unrelated sentence above the one that answers
    from tests.fakes.embeddings import HashEmbeddings

    question = "which function returns matching path names for a pattern"
    wrong = ContextItem(
        id="p#1",
        title="which function returns path names for a pattern",
        text="# which function returns path names for a pattern\n\n"
        "An empty list gives back an empty string here.",
    )
    right = ContextItem(
        id="g#1",
        title="glob module",
        text="# glob module\n\nGives every matching path name in a folder.",
    )
    strategies = OfflineStrategies(HashEmbeddings(dim=256), max_sentences=1)
    text, cited = asyncio.run(strategies.answer(question, [wrong, right]))
    assert cited == [2] and "matching path name" in text


def test_a_name_every_context_gives_does_not_outvote_the_one_that_marks_the_answer():
    # before: "Kestrel Dock" in every heading earned every sentence the full name bonus, so
    # the section headed by DK-04 (whose fix does not repeat the code) lost to the page intro
    from ragloop.nodes.sentences import name_weights
    from tests.fakes.embeddings import HashEmbeddings

    question = "How do I clear DK-04 on the Kestrel Dock?"
    intro = ContextItem(
        id="dk#0",
        title="Kestrel Dock error codes",
        text="# Kestrel Dock error codes\n\nThe Kestrel Dock reports its faults with DK codes.",
    )
    fix = ContextItem(
        id="dk#1",
        title="Kestrel Dock error codes › DK-04 Duct blocked",
        text="# Kestrel Dock error codes › DK-04 Duct blocked\n\n"
        "Unplug it, open the cover at the base and free the duct.",
    )
    notes = ContextItem(
        id="fw#1",
        title="Kestrel Dock firmware notes",
        text="# Kestrel Dock firmware notes\n\nThe Kestrel Dock now retries before it reports.",
    )
    weights = name_weights(["dk-04", "kestrel dock"], [intro, fix, notes])
    assert weights["kestrel dock"] == 0.0 and weights["dk-04"] == 1.0
    assert name_weights(["dk-04"], [fix]) == {"dk-04": 1.0}  # one context: nothing to compare
    strategies = OfflineStrategies(HashEmbeddings(dim=256), max_sentences=1)
    text, cited = asyncio.run(strategies.answer(question, [intro, fix, notes]))
    assert cited == [2] and "free the duct" in text
    unweighted = OfflineStrategies(
        HashEmbeddings(dim=256), max_sentences=1, answer_weights=AnswerWeights(spread_names=False)
    )
    assert asyncio.run(unweighted.answer(question, [intro, fix, notes]))[1] != [2]
