"""bench/_pydocs.py: questions from Sphinx object entries of the Python library reference."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import _pydocs as py  # noqa: E402
from _pgdocs import passage_hit  # noqa: E402


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
    qs = py.load_questions(tmp_path, per_kind=5)
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
    assert py.load_questions(tmp_path) == []


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
    first = py.load_questions(tmp_path, seed=3, per_kind=4)
    assert first == py.load_questions(tmp_path, seed=3, per_kind=4)
    assert len([q for q in first if q.kind == "named"]) == 4
    assert py.described("w.clear", "function", "Return the shelf once clear() ran.") is None
    assert (
        py.described("w.f1", "function", "Return widget 1.") == "Which function returns widget 1?"
    )
    assert py.described("w.f1", "function", "Widget 1, returned.") is None  # no known verb
