"""Boilerplate known at index time: a footer every page repeats, contents and index pages;
the answer never quotes it and the judge gives it no evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragloop.documents import parse_file, parse_text
from ragloop.documents.boilerplate import dot_leaders, is_boilerplate, mark_boilerplate, quotable
from ragloop.retrievers.corpus import load_corpus

FOOTER = "Part of the Kestrel toolkit suite, maintained by the Kestrel documentation team."
TOPICS = ["pumps", "valves", "filters", "hoses", "gauges", "seals"]


def write_corpus(folder: Path) -> Path:
    for topic in TOPICS:
        (folder / f"{topic}.md").write_text(
            f"# Kestrel {topic}\n\nThe Kestrel {topic} are checked every spring by the "
            f"maintenance crew, who log each {topic[:-1]} they replace.\n\n{FOOTER}\n"
        )
    return folder


def test_a_footer_every_page_repeats_is_kept_once_and_marked(tmp_path):
    report = load_corpus(write_corpus(tmp_path))
    marked = [c for c in report.chunks if c.metadata["boilerplate"]]
    assert [c.page_content.count(FOOTER) for c in marked] == [1]  # once in the whole index
    content = [c for c in report.chunks if not c.metadata["boilerplate"]]
    assert len(content) == len(TOPICS) and not any(FOOTER in c.page_content for c in content)
    assert report.boilerplate_dropped == len(TOPICS) - 1
    [kind] = report.parsing.rows()
    assert (kind["format"], kind["pages"], kind["titles_found"]) == ("markdown", 6, 6)
    assert kind["boilerplate_blocks"] == len(TOPICS)


def test_a_line_few_pages_share_is_content(tmp_path):
    write_corpus(tmp_path)
    for n in range(30):  # the footer is now on 6 pages of 36: under a fifth
        (tmp_path / f"extra{n}.md").write_text(f"# Extra {n}\n\nNothing shared on sheet {n}.\n")
    report = load_corpus(tmp_path)
    assert not any(c.metadata["boilerplate"] for c in report.chunks)
    assert sum(FOOTER in c.page_content for c in report.chunks) == len(TOPICS)


def test_a_note_many_pages_carry_mid_page_is_content(tmp_path):
    for topic in TOPICS:  # "New in version 3.2." inside each page, not at its edges
        (tmp_path / f"{topic}.md").write_text(
            f"# {topic}\n\nOne about {topic}.\n\nTwo about {topic}.\n\nThree about {topic}.\n\n"
            f"New in version 3.2.\n\nFour about {topic}.\n\nFive about {topic}.\n\n"
            f"Six about {topic}.\n"
        )
    report = load_corpus(tmp_path)
    assert not any(c.metadata["boilerplate"] for c in report.chunks)
    assert sum("New in version 3.2." in c.page_content for c in report.chunks) == len(TOPICS)


def test_dot_leader_lines_are_contents_not_prose():
    assert dot_leaders("9 asn1_der_coding . . . . . . . . . . . 36")
    assert dot_leaders("1 Introduction......3 2 Usage........7")
    assert dot_leaders("Preface . . . . . . . . . . xi")
    assert not dot_leaders("The coder writes DER. It returns 36 on success.")
    assert not dot_leaders("Wait... then retry. Again... and again.")


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=12))
def test_marking_never_loses_a_block_it_does_not_count(texts):
    docs = [parse_text(f"# Page {n}\n\n{t}\n", f"p{n}.md") for n, t in enumerate(texts)]
    before = sum(len(s.blocks) for d in docs for s in d.sections)
    marked = mark_boilerplate(docs)
    after = sum(len(s.blocks) for d in docs for s in d.sections)
    assert before - after == marked.dropped
    assert marked.recurring == 0 or marked.dropped >= 0
    if len(docs) < 4:  # too few pages to tell what recurs
        assert marked.dropped == 0


def make_pdf_with_index(path: Path) -> None:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.start_section("Contents")
    for n, (name, page) in enumerate([("Introduction", 2), ("Coding", 3)], start=1):
        pdf.cell(0, 8, f"{n} {name} " + ". " * 30 + str(page), new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    pdf.start_section("Introduction")
    pdf.multi_cell(0, 8, "The library encodes ASN.1 structures in DER.")
    pdf.add_page()
    pdf.start_section("Coding")
    pdf.multi_cell(0, 8, "asn1_der_coding writes the DER encoding of an element into a buffer.")
    pdf.add_page()
    pdf.start_section("Index")
    pdf.multi_cell(0, 8, "asn1_der_coding, 3\nasn1_create_element, 2\nasn1_delete_structure, 2")
    pdf.output(str(path))


def test_pdf_contents_and_index_pages_are_marked(tmp_path):
    make_pdf_with_index(tmp_path / "libasn.pdf")
    report = load_corpus(tmp_path)
    by_page = {c.metadata["page"]: c.metadata["boilerplate"] for c in report.chunks}
    assert by_page == {1: True, 2: False, 3: False, 4: True}
    doc = parse_file(tmp_path / "libasn.pdf")
    assert doc.format == "pdf"


@pytest.fixture
def kestrel_pipeline(tmp_path, wordllama):
    from ragloop.config import load_settings
    from ragloop.pipeline import build_pipeline

    (tmp_path / "kb").mkdir()
    corpus = write_corpus(tmp_path / "kb")
    settings = load_settings(index_dir=tmp_path / "idx", corpus_dir=corpus, embeddings="wordllama")
    return build_pipeline(settings, env={}, embeddings=wordllama)


QUESTION = "Who maintains the Kestrel toolkit suite documentation?"


def test_the_answer_never_quotes_boilerplate(kestrel_pipeline):
    result = kestrel_pipeline.run(QUESTION)
    assert result.retrieved
    assert "maintained by the Kestrel documentation team" not in result.answer
    assert not any(is_boilerplate(c) for c in result.contexts)


def test_the_judge_gives_boilerplate_no_evidence(kestrel_pipeline):
    import asyncio

    from ragloop.nodes.judge import make_judge

    footer = {"id": "pumps.md#1", "text": f"# Kestrel pumps\n\n{FOOTER}", "source": "pumps.md"}
    footer |= {"title": "Kestrel pumps", "origin": "kb", "score": 1.0, "boilerplate": True}
    page = {"id": "pumps.md#0", "text": "# Kestrel pumps\n\nThe Kestrel pumps are checked."}
    page |= {"source": "pumps.md", "title": "Kestrel pumps", "origin": "kb", "score": 0.5}
    state = {"question": QUESTION, "candidates": [footer, page], "contexts": [], "steps": []}
    out = asyncio.run(make_judge(kestrel_pipeline.deps)(state, None))
    graded = {c["id"]: c for c in out["candidates"]}
    assert graded["pumps.md#1"]["grade"] == 0 and "evidence" not in graded["pumps.md#1"]
    assert "evidence" in graded["pumps.md#0"]
    assert all(not is_boilerplate(c) for c in out["contexts"] + out["dropped"])


def test_quotable_leaves_out_marked_items_only():
    items = [{"id": "a"}, {"id": "b", "boilerplate": True}, {"id": "c", "boilerplate": False}]
    assert [i["id"] for i in quotable(items)] == ["a", "c"]


def test_index_reports_parsing_per_format_and_lists_every_format(tmp_path):
    import json

    from typer.testing import CliRunner

    from ragloop.cli import app
    from ragloop.documents import SUFFIXES

    def _invoke(*args: str):
        return CliRunner().invoke(app, list(args))

    corpus = write_corpus(tmp_path / "kb" if (tmp_path / "kb").mkdir() is None else tmp_path)
    (corpus / "no-title.html").write_text(
        "<html><body><p>" + "Just words. " * 5 + "</p></body></html>"
    )
    built = _invoke("index", str(corpus), "--out", str(tmp_path / "idx"), "--json")
    assert built.exit_code == 0, built.output
    data = json.loads(built.stdout)
    rows = {(r["format"], r["generator"]): r for r in data["parsing"]}
    assert rows[("markdown", None)]["titles_found"] == 6
    assert rows[("markdown", None)]["boilerplate_blocks"] == 6
    assert (
        rows[("html", "html")]["untitled"] == ["no-title.html"] and rows[("html", "html")]["hint"]
    )
    assert data["boilerplate_dropped"] == 5
    shown = _invoke("index", str(corpus), "--out", str(tmp_path / "idx2"))
    assert "no title found in 1 html page(s): no-title.html" in shown.output
    assert "5 repeated boilerplate block(s)" in shown.output
    helped = " ".join(_invoke("index", "--help").output.split())
    assert all(suffix in helped for suffix in SUFFIXES)
