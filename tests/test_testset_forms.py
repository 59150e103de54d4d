"""Offline questions stand in for real ones: people's forms, no quoting, no templates, personas."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.testset import generate
from ragloop.testset.checks import MAX_QUOTED, is_subject, is_template, ngram_overlap
from ragloop.testset.forms import how_to, intent, what_happens
from ragloop.testset.personas import Persona
from ragloop.testset.related import RELATED_AT
from ragloop.testset.unanswerable import NearMisses
from tests.conftest import CORPUS

OLD_FORMS = [
    "Does argparse.ArgumentParser.get_default support GPU acceleration?",
    "Is there a mobile app for copy — Shallow and deep copy operations?",
    'Which topic in the os documentation is described as: "Return the number of CPUs"?',
    "In the os documentation, what do the sections on A and B each say?",
    "What is Changed in version 3.8?",
]


@pytest.fixture(scope="module")
def rows():
    return [r for seed in range(3) for r in generate(CORPUS, 24, seed=seed).rows]


def test_no_question_quotes_its_passage(rows):
    for row in rows:
        if row["reference_contexts"]:
            assert ngram_overlap(row["user_input"], row["reference_contexts"]) <= MAX_QUOTED


def test_no_template_form_and_every_kind_asks_like_a_person(rows):
    assert all(is_template(q) for q in OLD_FORMS)
    assert not any(is_template(r["user_input"]) for r in rows)
    starts = ("how", "what", "which", "why", "when", "where", "can", "is", "should", "does")
    perfect = [r["user_input"] for r in rows if r["query_style"] == "PERFECT_GRAMMAR"]
    assert perfect and all(q.lower().startswith(starts) and q.endswith("?") for q in perfect)


def test_multi_passage_questions_join_related_sections(rows):
    multi = [r for r in rows if r["kind"] == "multi_passage"]
    assert multi and all(r["relatedness"] >= RELATED_AT for r in multi)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta"]), max_size=12))
def test_overlap_is_a_share_and_a_copy_is_all_quoted(words):
    text = " ".join(words)
    value = ngram_overlap(text, ["unrelated words only here"])
    assert 0.0 <= value <= 1.0
    assert ngram_overlap(text, [text]) == (1.0 if len(words) >= 4 else 0.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_any_seed_keeps_paraphrased_questions_off_the_passage(seed):
    ts = generate(CORPUS, 10, seed=seed, mix={"single_hop_paraphrased_query_synthesizer": 1})
    for row in ts.rows:
        assert ngram_overlap(row["user_input"], row["reference_contexts"]) <= MAX_QUOTED
        assert row["subject"].lower() not in row["user_input"].lower()


def test_intents_read_the_action_and_a_short_object():
    it = intent("Return the number of CPUs in the system.", "os.cpu_count()")
    assert (it.verb, it.obj) == ("get", "the number of CPUs")
    assert (
        intent("CREATE INDEX constructs an index on the column.", "CREATE INDEX").obj == "an index"
    )
    assert intent("Return True if x is a NaN.") is None  # "True" is no thing to ask for
    question = how_to(it, random.Random(0), "function")
    assert "number of CPUs" in question and ngram_overlap(question, ["the number of CPUs"]) <= 0.5
    assert what_happens("If it is used, nothing.") is None
    assert what_happens("If the file does not exist, an error is raised.", "os.remove") == (
        "What happens with os.remove when the file does not exist?"
    )


def test_edit_notes_never_become_subjects(tmp_path):
    assert not is_subject("Changed in version 3.8") and not is_subject("New in version 3.2")
    assert is_subject("os.makedirs") and is_subject("Late Fees")
    corpus = tmp_path / "c"
    corpus.mkdir()
    text = (
        "# Tool\n\n## Changed in version 3.8\n\nThe tool returns a list of the saved files now.\n"
    )
    (corpus / "a.md").write_text(text * 1)
    ts = generate(corpus, 4, seed=0)
    assert not any("changed in version" in r["user_input"].lower() for r in ts.rows)


def test_near_misses_come_from_the_corpus_vocabulary():
    vocab = "added in version 3.10. changed in version 3.12. works on windows and linux."
    near = NearMisses.of(vocab)
    assert near.product == "version" and near.versions == ["3.14", "3.15", "3.16"]
    assert "Windows" not in near.platforms and "FreeBSD" in near.platforms
    assert NearMisses(vocab="the northgate branch").neighbour("Northgate Branch") == (
        "Southgate Branch",
        "Southgate Branch",
    )
    none = NearMisses(vocab="")
    assert none.neighbour("Background Writer") is None  # not "Background Readr"
    assert none.neighbour("JSON Input and Output Syntax") is None  # names both already


def test_a_persona_steers_the_questions_to_its_topics():
    persona = Persona.parse("Treasurer: pays late fees and fines for overdue items")
    assert persona.name == "Treasurer"
    ts = generate(
        CORPUS, 6, seed=0, personas=[persona], mix={"single_hop_specific_query_synthesizer": 1}
    )
    assert all(r["persona_name"] == "Treasurer" for r in ts.rows)
    assert "late-fees.md" in ts.rows[0]["reference_doc_ids"]
    plain = generate(CORPUS, 6, seed=0, mix={"single_hop_specific_query_synthesizer": 1})
    assert "persona_name" not in plain.rows[0]


def test_cli_persona_conditions_the_rows(tmp_path):
    import json

    from typer.testing import CliRunner

    from ragloop.cli import app

    out = tmp_path / "qa.jsonl"
    args = [
        "testset",
        str(CORPUS),
        "-n",
        "5",
        "-o",
        str(out),
        "--persona",
        "Member: borrows e-books",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(r["persona_name"] == "Member" for r in rows)
    bad = CliRunner().invoke(app, [*args[:-1], "Member:", "--force"])
    assert bad.exit_code != 0 and "--persona needs a description" in bad.output


def test_an_intent_is_the_subjects_own_act_with_a_whole_object():
    # a verb after a condition or a pronoun says what something else does
    assert intent("If empty() returns True it doesn't guarantee that put() will not block.") is None
    assert intent("It provides a suitable foundation for higher level context managers.") is None
    assert intent("Set during Python startup, before site.py is run.") is None  # a participle
    # a participle ends the object; hollow objects are no question
    it = intent("Return a StackSummary object representing a list of entries.", "extract_tb")
    assert it is not None and it.obj == "a StackSummary object"
    assert intent("This module defines a number of classes.", "threading") is None
    assert intent("Send a randomly generated message to the other end.") is None
    it = intent("This class securely creates a temporary directory using the same rules.", "X")
    assert it is not None and (it.verb, it.obj) == ("create", "a temporary directory")


def test_a_paraphrased_question_never_names_its_identifier():
    from ragloop.testset.offline import names, short_name

    assert names("How do I get a new partialmethod descriptor?", "functools.partialmethod")
    assert not names("How do I get the number of CPUs?", "os.cpu_count")
    assert short_name("pathlib — Object-oriented filesystem paths") == "pathlib"
    assert short_name("Loan Periods and Renewals") == "Loan Periods and Renewals"


def test_near_misses_name_a_release_or_platform_the_docs_do_not_cover():
    pg = "postgresql 14 adds. postgresql 15 too. postgresql 15 again. version 9.6 and 9.2 and 9.0."
    assert NearMisses.of(pg * 2).versions == ["17", "18", "19"]  # not 9.8: 15 is the newest
    bash = "bash, version 5.2. version 5.2 out. ./bash 1 2 3, ./bash 1 $ echo. license version 1.3"
    assert NearMisses.of(bash).versions == ["5.4", "5.5", "5.6"]
    unix = NearMisses.of("availability: unix, windows.")
    assert "FreeBSD" not in unix.platforms and "Haiku" in unix.platforms  # Unix answers FreeBSD
    wasm = NearMisses.of("availability: linux, not emscripten, not wasi.")
    assert "WebAssembly" not in wasm.platforms
    headed = NearMisses.of("date/time output styles", headings=["Date/Time Output"])
    assert headed.neighbour("Date Input") is None  # the Date/Time Output section covers it
    assert NearMisses(vocab="").neighbour("Input Columns Column") is None  # a caption


def test_unanswerable_questions_are_near_misses_of_several_kinds(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for n, name in enumerate(["pg_dump", "pg_restore", "initdb", "pg_isready", "vacuumdb"]):
        (corpus / f"{name}.md").write_text(
            f"# {name}\n\n## {name}\n\n{name} copies a database to a file. Availability: Linux, "
            f"Windows, macOS. Added in PostgreSQL 1{n}. Changed in PostgreSQL 15. The "
            f"--read-only option opens the file in read-only mode.\n"
        )
    ts = generate(corpus, 10, seed=0, mix={"single_hop_unanswerable_query_synthesizer": 1})
    questions = [r["user_input"] for r in ts.rows]
    assert questions and not any(is_template(q) for q in questions)
    vocab = " ".join(p.read_text().lower() for p in corpus.iterdir())
    for row in ts.rows:
        assert all(t.lower() not in vocab for t in row["absent_terms"])
    kinds = {
        "version" if "PostgreSQL 1" in q else "platform" if " on " in q else "option"
        for q in questions
    }
    assert {"version", "platform"} <= kinds, questions
