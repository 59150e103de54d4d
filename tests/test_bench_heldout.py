"""The answer-quality bench's held-out corpus: the Rust book's pages are chosen by name, its
hand-written named and description questions are read (bad rows reported and skipped), and the
report shows a held-out corpus beside the development corpora's pooled figure, never in it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import _newdocs  # noqa: E402
import answer_quality  # noqa: E402
from _pgdocs_gold import PageIndex  # noqa: E402
from _pgdocs_parse import squash  # noqa: E402


def test_only_chapter_and_appendix_pages_are_book_pages(tmp_path: Path) -> None:
    for name in ("ch04-03-slices.html", "appendix-01-keywords.html", "appendix-00.html",
                 "print.html", "toc.html", "choosing-your-guarantees.html", "404.html",
                 "ch04-03-slices.html.bak"):  # fmt: skip
        (tmp_path / name).write_text("<html></html>", encoding="utf-8")
    assert [p.name for p in _newdocs.book_pages(tmp_path)] == [
        "appendix-00.html",
        "appendix-01-keywords.html",
        "ch04-03-slices.html",
    ]


def test_written_entries_are_read_by_kind_and_bad_rows_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = "A slice lets you reference a contiguous sequence of elements in a collection."
    rows = [
        {"kind": "named", "question": "What is a slice?", "name": "slice",
         "gold_page": "p.html", "gold_snippets": ["reference a contiguous sequence of elements"]},
        {"kind": "description", "question": "Which feature refers to part of a collection?",
         "name": "slice", "gold_page": "p.html", "gold_snippets": ["A slice lets you reference"]},
        {"kind": "trivia", "question": "Who wrote it?", "name": "x", "gold_page": "p.html",
         "gold_snippets": ["A slice lets you"]},
        {"kind": "named", "question": "What is a box?", "name": "Box", "gold_page": "p.html",
         "gold_snippets": ["a pointer to data on the heap"]},
    ]  # fmt: skip
    path = tmp_path / "book_entries.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n", encoding="utf-8")
    monkeypatch.setattr(_newdocs, "entries_file", lambda name: path)
    with pytest.warns(UserWarning) as caught:
        found = _newdocs.written_entries("book", PageIndex({"p.html": squash(page)}))
    assert [q.question for q in found["named"]] == ["What is a slice?"]
    assert [q.question for q in found["description"]] == [
        "Which feature refers to part of a collection?"
    ]
    assert found["named"][0].name == "slice" and found["named"][0].gold_page == "p.html"
    # the unknown kind, the snippet not on the page and the line that is not JSON
    assert len(caught) == 3
    assert _newdocs.entry_pages("book") == {"p.html"}


def test_a_held_out_corpus_is_reported_beside_the_pool_not_in_it() -> None:
    assert answer_quality.columns(["pg", "book", "bash"]) == [
        ("pg", ["pg"]),
        ("bash", ["bash"]),
        ("pooled", ["pg", "bash"]),
        ("book (held out)", ["book"]),
    ]
    assert answer_quality.columns(["book"]) == [("book (held out)", ["book"])]


def test_the_report_prints_the_held_out_column(capsys: pytest.CaptureFixture[str]) -> None:
    def row(corpus: str, gold: bool) -> dict:
        return {
            "corpus": corpus, "unanswerable": False, "kind": "named", "hybrid": 1, "oracle": 1,
            "kept": 1, "kept5": 1, "cited": 1, "loop_gold": gold, "naive_gold": False,
            "loop_nf": False, "naive_nf": False, "stop": "exhausted", "loop_ms": 2.0,
            "naive_ms": 1.0,
        }  # fmt: skip

    answer_quality.report({"pg": [row("pg", True)], "book": [row("book", False)]}, 5)
    out = capsys.readouterr().out
    header = out.splitlines()[2]
    assert header.split() == ["pg", "pooled", "book", "(held", "out)"]
    gold = next(line for line in out.splitlines() if line.startswith("gold in answer: loop"))
    assert gold.split()[4:] == ["1.000", "[1.00,1.00]", "1.000", "[1.00,1.00]", "0.000",
                                "[0.00,0.00]"]  # fmt: skip


def test_the_kind_table_splits_by_kind_and_flags_kept_below_the_oracle(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def row(corpus: str, kind: str, kept: bool, loop: bool) -> dict:
        return {
            "corpus": corpus, "unanswerable": False, "kind": kind, "hybrid": 1, "oracle": 1,
            "kept": kept, "kept5": kept, "cited": kept, "loop_gold": loop, "naive_gold": False,
            "loop_nf": False, "naive_nf": False,
        }  # fmt: skip

    unans = {**row("pg", "unanswerable", False, False), "unanswerable": True}
    answer_quality.report_kinds(
        {
            "pg": [row("pg", "named", True, True), row("pg", "natural", False, False), unans],
            "bash": [row("bash", "named", True, False), row("bash", "natural", True, False)],
            "book": [row("book", "natural", True, True)],
        }
    )
    lines = capsys.readouterr().out.splitlines()
    pooled = lines[lines.index(next(x for x in lines if x.startswith("by kind, pooled"))) :]
    named = next(x for x in pooled if x.startswith("named")).split()
    natural = next(x for x in pooled if x.startswith("natural")).split()
    # named: two questions, kept both, one loop answer holds the gold, naive none
    assert named[1] == "2" and named[4] == "1.000" and named[7] == "0.500"
    assert named[10] == "+0.500" and named[-1] == "yes"
    # natural: kept one of two while the oracle found both -> below oracle - 0.02
    assert natural[1] == "2" and natural[4] == "0.500" and natural[-1] == "NO"
    book = lines[lines.index(next(x for x in lines if x.startswith("by kind, book"))) :]
    assert next(x for x in book if x.startswith("natural")).split()[1] == "1"
    assert not any(x.startswith("unanswerable") for x in lines)


def test_sqlite_pragma_entries_are_the_pragmas_not_the_sections_about_them(
    tmp_path: Path,
) -> None:
    page = tmp_path / "pragma.html"
    page.write_text(
        "<html><body><h2>PRAGMA functions</h2>"
        "<p>PRAGMAs that return results can be read as table-valued functions.</p>"
        "<p>For example, the columns of an index can be read with index_info.</p>"
        "<h _id=pragma_foo_flag>PRAGMA foo_flag</h>"
        "<p>PRAGMA schema.foo_flag;</p><p>Query or change the foo flag.</p>"
        "</body></html>",
        encoding="utf-8",
    )
    entries = _newdocs.sqlite_entries(page)
    # the section is listed without a sentence (load_questions skips it), the pragma with the
    # first sentence after its syntax line
    assert entries == [
        ("PRAGMA functions", "pragma", "", None),
        ("PRAGMA foo_flag", "pragma", "Query or change the foo flag.",
         "queries or changes the foo flag"),
    ]  # fmt: skip


def test_a_question_two_entries_would_ask_is_not_asked(tmp_path: Path) -> None:
    def entry(sig: str, text: str) -> str:
        return f"<dl><dt>{sig}</dt><dd><p>{text}</p></dd></dl>"

    (tmp_path / "lang_aggfunc.html").write_text(
        "<html><body>"
        + entry("min(X)", "The min() aggregate function returns the minimum non-NULL value.")
        + entry("avg(X)", "The avg() function returns the average value of all non-NULL X.")
        + entry("likely(X)", "The likely(X) function returns the argument X unchanged.")
        + entry("likelihood(X,Y)", "The likelihood(X,Y) function returns argument X unchanged.")
        + entry("sin(X)", "The sin(X) function returns the sine of X, in radians.")
        + entry("cos(X)", "The cos(X) function returns the cosine of X, in radians.")
        + "</body></html>",
        encoding="utf-8",
    )
    (tmp_path / "lang_corefunc.html").write_text(
        "<html><body>"
        + entry("min(X,Y,...)", "The multi-argument min() function returns the least argument.")
        + "</body></html>",
        encoding="utf-8",
    )
    with pytest.warns(UserWarning):  # the committed natural questions' pages are absent here
        qs = _newdocs.load_questions("sqlite", tmp_path, per_kind=5)
    named = sorted(q.question for q in qs if q.kind == "named")
    assert "What does the SQL function min() do?" not in named
    assert "What does the SQL function avg() do?" in named
    # "returns argument X unchanged" and "returns the argument X unchanged" ask the same;
    # the sine and the cosine do not
    described = sorted(q.question for q in qs if q.kind == "description")
    assert described == [
        "Which SQL function returns the average value of all non-NULL X?",
        "Which SQL function returns the cosine of X, in radians?",
        "Which SQL function returns the sine of X, in radians?",
    ]


def test_man_page_options_are_entries_with_their_long_name(tmp_path: Path) -> None:
    page = tmp_path / "grep.html"
    page.write_text(
        '<html><body><dl class="Bl-tag">'
        '<dt id="i"><a class="permalink" href="#i"><b>-i</b>, <b>--ignore-case</b></a></dt>'
        "<dd>Ignore case distinctions in patterns and input data.</dd>"
        '<dt id="f"><b>-f</b> <i>FILE</i>, <b>--file</b>=<i>FILE</i></dt>'
        "<dd>Obtain patterns from FILE, one per line.</dd>"
        "<dt><b>-Z</b></dt><dd>Frobnicate the output in a way no verb list knows.</dd>"
        "</dl><dl><dt>Not options</dt><dd>A plain definition list.</dd></dl></body></html>",
        encoding="utf-8",
    )
    assert _newdocs.man_entries(page) == [
        ("--ignore-case", "grep option", "Ignore case distinctions in patterns and input data.",
         "ignores case distinctions in patterns and input data"),
        ("--file", "grep option", "Obtain patterns from FILE, one per line.", None),
        ("-Z", "grep option", "Frobnicate the output in a way no verb list knows.", None),
    ]  # fmt: skip
    assert "man" in answer_quality.HELD_OUT
