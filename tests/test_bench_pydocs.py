"""bench/_pydocs.py: questions from Sphinx object entries of the Python library reference."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import _pydocs as py  # noqa: E402
from _pgdocs import passage_hit  # noqa: E402

NO_NATURAL = Path("/nonexistent/natural.jsonl")  # fixture corpora have no natural questions


def _entry(kind: str, name: str, text: str) -> str:
    return (
        f'<dl class="py {kind}"><dt class="sig sig-object py" id="{name}">'
        f"<span>{name}</span>()</dt><dd><p>{text}</p><p>More about it.</p></dd></dl>"
    )


def _page(tmp_path: Path, name: str, *entries: str) -> None:
    body = "".join(entries)
    (tmp_path / name).write_text(
        f"<html><body><div class='body'><h1>{name}</h1>{body}</div></body></html>",
        encoding="utf-8",
    )


def test_named_and_description_questions_with_the_first_sentence_as_gold(tmp_path):
    _page(
        tmp_path,
        "widgets.html",
        _entry("function", "widgets.count", "Return the number of widgets in the store."),
        _entry("class", "widgets.Store", "A store of widgets kept in memory for quick access."),
        _entry("method", "widgets.Store.clear", "Remove every widget from the store at once."),
    )
    _page(tmp_path, "index.html", _entry("function", "toc.entry", "Return the table of contents."))
    qs = py.load_questions(tmp_path, natural_path=NO_NATURAL, per_kind=5)
    named = {q.question: q for q in qs if q.kind == "named"}
    assert set(named) == {
        "What does widgets.count do?",
        "What is widgets.Store for?",
        "What does widgets.Store.clear do?",
    }  # the contents page gives none
    described = {q.question for q in qs if q.kind == "description"}
    assert described == {
        "Which function returns the number of widgets in the store?",
        "Which method removes every widget from the store at once?",
    }
    q = named["What does widgets.count do?"]
    assert q.gold_page == "widgets.html"
    assert passage_hit(
        "## widgets.count\n\nReturn the number of widgets in the store.", q, "widgets.html"
    )
    assert not passage_hit("Return the number of widgets in the store.", q, "other.html")


def test_a_sentence_found_on_two_pages_is_never_gold(tmp_path):
    shared = "Return the number of widgets in the store."
    _page(tmp_path, "a.html", _entry("function", "a.count", shared))
    _page(tmp_path, "b.html", _entry("function", "b.count", shared))
    assert py.load_questions(tmp_path, natural_path=NO_NATURAL) == []


def test_questions_are_deterministic_and_a_description_never_names_its_object(tmp_path):
    _page(
        tmp_path,
        "w.html",
        *(
            _entry("function", f"w.f{i}", f"Return widget number {i} of the shelf.")
            for i in range(9)
        ),
        _entry("function", "w.clear", "Clear the shelf; clear() is fast."),
    )
    first = py.load_questions(tmp_path, natural_path=NO_NATURAL, seed=3, per_kind=4)
    assert first == py.load_questions(tmp_path, natural_path=NO_NATURAL, seed=3, per_kind=4)
    assert len([q for q in first if q.kind == "named"]) == 4
    assert py.described("w.clear", "function", "Return the shelf once clear() ran.") is None
    assert (
        py.described("w.f1", "function", "Return widget 1.") == "Which function returns widget 1?"
    )
    assert py.described("w.f1", "function", "Widget 1, returned.") is None  # no known verb


def test_natural_rows_are_read_and_a_bad_one_is_reported_and_skipped(tmp_path):
    import json
    import warnings

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _page(
        corpus, "widgets.html", _entry("function", "widgets.count", "Return the number of widgets.")
    )
    rows = [
        {
            "question": "How many are there?",
            "gold_page": "widgets.html",
            "gold_snippets": ["Return the number of widgets."],
        },
        {"question": "Where is it?", "gold_page": "nowhere.html", "gold_snippets": ["x" * 40]},
        {"question": "No snippets?", "gold_page": "widgets.html"},
    ]
    path = tmp_path / "natural.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qs = py.load_questions(corpus, natural_path=path)
    natural = [q for q in qs if q.kind == "natural"]
    assert [q.question for q in natural] == ["How many are there?"]
    assert natural[0].gold_page == "widgets.html" and natural[0].name == ""
    assert len(caught) == 2 and "natural.jsonl:2" in str(caught[0].message)


def test_the_shipped_natural_questions_name_no_function_and_are_well_formed():
    import json
    import re

    rows = [json.loads(x) for x in py.NATURAL_PATH.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 80 and len({r["question"] for r in rows}) == len(rows)
    assert len({r["gold_page"] for r in rows}) >= 45
    for r in rows:
        assert r["question"].endswith("?") and r["gold_page"].endswith(".html"), r
        assert 1 <= len(r["gold_snippets"]) <= 2, r
        assert not re.search(r"\w\.\w|\(|_", r["question"]), r  # no dotted name, call, ident


def test_a_description_that_introduces_an_example_asks_without_its_colon():
    # "Return a string representing the date and time:" then an example: the question a user
    # types ends at the words, not at the colon ("... date and time:?")
    asked = py.described("d.ctime", "method", "Return a string representing the date and time:")
    assert asked == "Which method returns a string representing the date and time?"
    assert py.described("d.f", "method", "Return the values; ") == (
        "Which method returns the values?"
    )
