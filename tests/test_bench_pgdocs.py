"""The PostgreSQL-docs bench data module on a tiny hand-written fixture (no Debian package)."""

from __future__ import annotations

import gzip
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import _pgdocs as pg  # noqa: E402
from _pgdocs_parse import parse, squash  # noqa: E402
from _pgdocs_phrase import mentions  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "pgdocs"
NATURAL = FIX / "natural.jsonl"


def _questions(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pg.load_questions(FIX, natural_path=NATURAL, **kw)


def test_select_pages_takes_reference_pages_plain_or_gzipped():
    names = [p.name for p in pg.select_pages(FIX)]
    assert "index.html" not in names
    assert "app-widgetctl.html.gz" in names
    assert names[:2] == ["sql-createwidget.html", "sql-dropwidget.html"]
    assert len(pg.select_pages(FIX, n=2)) == 2


def test_every_kind_of_target_is_asked_by_name():
    named = {q.name: q for q in _questions() if q.kind == "named"}
    assert set(named) == {
        "CREATE WIDGET",
        "DROP WIDGET",
        "widget_count",
        "widget_label",
        "widgetctl",
        "widget_limit",
        "widget_trace",
    }
    for q in named.values():
        assert q.name in q.question
    assert named["widget_limit"].gold_page == "runtime-config-widget.html"
    # the operator row has no function name and is not a target
    assert not any(
        "share at least one gadget" in s for q in named.values() for s in q.gold_snippets
    )


def test_gold_snippets_come_from_the_defining_passage_of_their_page():
    by_id = {q.id: q for q in _questions()}
    create = by_id["named/sql-createwidget/CREATE WIDGET"]
    assert create.gold_snippets[0].startswith("CREATE WIDGET registers a new widget")
    assert all(30 <= len(s) <= 80 for s in create.gold_snippets)
    count = by_id["named/functions-widget/widget_count"]
    assert count.gold_snippets[0].startswith("Returns the number of widgets attached")
    for q in by_id.values():
        page = next(p for p in pg.select_pages(FIX) if p.name.startswith(q.gold_page))
        text = squash(parse(page)[0])
        assert all(squash(s) in text for s in q.gold_snippets), q.id


def test_paraphrases_reword_the_description_and_never_name_the_target():
    para = {q.name: q.question for q in _questions() if q.kind == "paraphrase"}
    assert para, "no paraphrase was built"
    for name, question in para.items():
        assert not mentions(question, name), question
    assert "widget" in para["DROP WIDGET"].lower()
    assert "remove" not in para["DROP WIDGET"].lower()  # rephrased, not copied
    assert "converts" not in para["widget_label"].lower()


def test_mentions_catches_the_name_and_every_word_of_a_multiword_name():
    assert mentions("What does CREATE INDEX do?", "CREATE INDEX")
    assert mentions("How do I create an index?", "CREATE INDEX")
    assert not mentions("How do I set up a new index?", "CREATE INDEX")
    assert mentions("what does to_tsvector() return", "to_tsvector")
    assert not mentions("what does my_to_tsvector return", "to_tsvector")


def test_questions_are_deterministic_for_a_seed():
    first = [(q.id, q.question) for q in _questions(seed=3)]
    assert first == [(q.id, q.question) for q in _questions(seed=3)]


def test_per_kind_caps_and_balances_over_target_types():
    qs = _questions(per_kind=4)
    named = [q for q in qs if q.kind == "named"]
    assert len(named) == 4
    assert len({q.target_kind for q in named}) == 4  # one of each type before any second


def test_bad_natural_rows_are_reported_and_skipped():
    with pytest.warns(UserWarning) as caught:
        qs = pg.load_questions(FIX, natural_path=NATURAL)
    natural = [q for q in qs if q.kind == "natural"]
    assert [q.gold_page for q in natural] == ["runtime-config-widget.html"]
    messages = " ".join(str(w.message) for w in caught)
    assert "natural.jsonl:2: skipped (ValueError: snippet not on sql-dropwidget.html alone" in (
        messages
    )
    assert "natural.jsonl:3: skipped (ValueError: sql-nothing.html is not in the corpus" in messages
    assert "natural.jsonl:4: skipped (JSONDecodeError" in messages
    assert "natural.jsonl:5: skipped (missing field 'gold_snippets')" in messages


def _q(*snippets: str, page: str = "functions-string.html") -> pg.Question:
    return pg.Question("t", "named", "?", page, snippets)


def test_passage_hit_ignores_case_whitespace_and_markup():
    q = _q("Returns number of bytes in the string.")
    assert pg.passage_hit("octet_length ( text )\n Returns number of\n  BYTES in the string.", q)
    assert pg.passage_hit("<p>Returns <code>number</code> of bytes in the string.</p>", q)
    assert not pg.passage_hit("Returns number of bits in the string.", q)


def test_passage_hit_survives_a_chunk_boundary_but_not_a_different_function():
    q = _q("Splits string at occurrences of delimiter and returns the n'th field")
    cut = "split_part ( string ) Splits string at occurrences of delimiter and returns the n'th"
    assert pg.passage_hit(cut, q)
    short = _q("Returns number of bytes in the string.")
    assert not pg.passage_hit("Returns number of bytes in the binary string.", short)
    assert not pg.passage_hit("Splits the array at occurrences of a separator value.", q)


def test_passage_hit_with_a_source_needs_the_gold_page():
    q = _q("Returns number of bytes in the string.")
    text = "Returns number of bytes in the string."
    assert pg.passage_hit(text, q, source="corpus/functions-string.html")
    assert not pg.passage_hit(text, q, source="functions-binarystring.html")


def test_page_hit_reads_paths_and_chunk_ids():
    q = _q("x" * 40, page="sql-createwidget.html")
    assert pg.page_hit("sql-createwidget.html#3", q)
    assert pg.page_hit("/tmp/corpus/sql-createwidget.html", q)
    assert not pg.page_hit("web/sql-createwidget.md", q)
    assert not pg.page_hit("sql-dropwidget.html#0", q)


def test_build_corpus_copies_pages_and_never_touches_a_foreign_folder(tmp_path):
    dest = pg.build_corpus(tmp_path / "corpus", root=FIX)
    names = sorted(p.name for p in dest.glob("*.html"))
    assert names == sorted(p.name.removesuffix(".gz") for p in pg.select_pages(FIX))
    unzipped = (dest / "app-widgetctl.html").read_bytes()
    assert unzipped == gzip.decompress((FIX / "app-widgetctl.html.gz").read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [q.id for q in _questions()] == [
            q.id for q in pg.load_questions(dest, natural_path=NATURAL)
        ]
    pg.build_corpus(dest, root=FIX)  # rebuilding its own folder is fine
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.html").write_text("my notes", encoding="utf-8")
    with pytest.raises(FileExistsError, match="did not write"):
        pg.build_corpus(foreign, root=FIX)
    assert (foreign / "notes.html").read_text(encoding="utf-8") == "my notes"


def test_an_empty_root_says_how_to_fix_it(tmp_path):
    with pytest.raises(pg.PgDocsMissing, match="build_corpus"):
        pg.load_questions(tmp_path)


def test_page_index_finds_every_exact_occurrence_at_any_offset():
    from _pgdocs_gold import PageIndex

    texts = {
        "a.html": squash("The widget registry keeps one row for every widget a gadget has held."),
        "b.html": squash("Nothing here but a note on gadgets; the widget registry keeps one row."),
    }
    index = PageIndex(texts)
    a = texts["a.html"]
    for start in range(len(a) - 30):
        key = a[start : start + 30]
        assert index.holders(key) == [p for p, t in texts.items() if key in t], key


def test_a_near_duplicate_passage_on_another_page_disqualifies_a_snippet():
    from _pgdocs_gold import PageIndex, sole

    close = "WIDGET CLOSE shuts the open widget and throws away every change made since it opened."
    end = "WIDGET END shuts the open widget and throws away every change made since it opened."
    index = PageIndex({"close.html": squash(close), "end.html": squash(end + " Other text.")})
    assert not sole(index, close[:70], "close.html")  # would fuzzily hit the other page
    index = PageIndex({"close.html": squash(close), "end.html": squash("Unrelated words only.")})
    assert sole(index, close[:70], "close.html")


def test_the_shipped_natural_questions_are_well_formed():
    import json

    rows = [json.loads(line) for line in pg.NATURAL_PATH.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 60
    assert len({r["question"] for r in rows}) == len(rows)
    for r in rows:
        assert r["gold_page"].startswith(pg.GROUPS) and r["gold_page"].endswith(".html"), r
        assert 1 <= len(r["gold_snippets"]) <= 3, r
        assert all(25 <= len(s) <= 120 for s in r["gold_snippets"]), r
        assert r["question"].endswith("?"), r


REAL = pg._installed()


@pytest.mark.skipif(REAL is None, reason="postgresql-doc-15 is not installed")
def test_real_corpus_questions_keep_every_natural_row_and_never_name_the_target():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a natural row skipped on the real pages is a failure
        qs = pg.load_questions(REAL)
    kinds = {k: [q for q in qs if q.kind == k] for k in pg.KINDS}
    assert len(qs) >= 350 and all(len(v) >= 60 for v in kinds.values())
    assert not [q for q in kinds["paraphrase"] if mentions(q.question, q.name)]
    names: dict[str, list[str]] = {}
    for page in pg.select_pages(REAL):
        names[page.name] = [t.name for t in parse(page)[1]]
    leaks = [
        q.question for q in kinds["natural"] for n in names[q.gold_page] if mentions(q.question, n)
    ]
    assert not leaks


def test_answer_hit_takes_any_judged_passage_on_its_page_and_the_gold_one(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(
        '{"question": "How do I count bytes?", "answers": [{"page": "functions-binarystring.html",'
        ' "snippet": "Returns the number of bytes in the binary string."}]}\n'
        "not json\n"
        '{"question": "How?"}\n',
        encoding="utf-8",
    )
    with pytest.warns(UserWarning) as caught:
        answers = pg.load_answers(path)
    assert list(answers) == ["How do I count bytes?"]
    messages = " ".join(str(w.message) for w in caught)
    assert "answers.jsonl:2: skipped (JSONDecodeError" in messages
    assert "answers.jsonl:3: skipped (KeyError" in messages
    q = pg.Question(
        "n",
        "natural",
        "How do I count bytes?",
        "functions-string.html",
        ("Returns number of bytes in the string.",),
        answers=answers["How do I count bytes?"],
    )
    judged = "octet_length ( bytea ) Returns the number of BYTES in the binary string."
    assert pg.answer_hit(judged, q, source="functions-binarystring.html")
    assert not pg.answer_hit(judged, q, source="functions-string.html")  # not on its page
    assert pg.answer_hit("Returns number of bytes in the string.", q, "functions-string.html")
    assert not pg.passage_hit(judged, q, source="functions-binarystring.html")  # strict: gold only


def test_the_shipped_answer_labels_belong_to_shipped_natural_questions():
    import json

    questions = {
        json.loads(line)["question"]
        for line in pg.NATURAL_PATH.read_text(encoding="utf-8").splitlines()
    }
    answers = pg.load_answers(pg.ANSWERS_PATH)
    assert len(answers) >= 50 and set(answers) <= questions
    for pairs in answers.values():
        for page, snippet in pairs:
            assert page.endswith(".html") and 20 <= len(snippet) <= 120, (page, snippet)


def test_a_commands_entry_line_is_gold_beside_its_description():
    # before: an answer that quoted "CREATE WIDGET — define a new widget" for "Which command
    # defines a new widget?" counted as a miss, though that line defines the command
    by_id = {q.id: q for q in _questions()}
    create = by_id["paraphrase/sql-createwidget/CREATE WIDGET"]
    assert create.gold_snippets[-1] == "CREATE WIDGET — define a new widget"
    assert pg.passage_hit("# CREATE WIDGET\n\nCREATE WIDGET — define a new widget", create)
    # functions and settings have no entry line: their gold is the description alone
    count = by_id["named/functions-widget/widget_count"]
    assert not any("—" in s for s in count.gold_snippets)
