"""Parsing each format into sections with heading paths, clean text and whole code blocks."""

import shutil
from pathlib import Path

import pytest

from ragloop.documents import Block, DocumentError, chunk_document, parse_file, parse_text
from ragloop.retrievers.corpus import load_corpus
from ragloop.text import option_line

FIXTURES = Path(__file__).parent / "fixtures" / "documents"
JSON = "json — JSON encoder and decoder"


def sections(name):
    return {s.heading_path: s for s in parse_file(FIXTURES / name).sections}


def test_rst_sphinx_markup_becomes_clean_sections(capsys):
    doc = parse_file(FIXTURES / "json.rst")
    assert doc.title == JSON
    by_path = {s.heading_path: s for s in doc.sections}
    dumps = by_path[(JSON, "Basic Usage", "json.dumps")]
    assert dumps.anchor == "json.dumps"
    code = [b.text for b in dumps.blocks if b.kind == "code"]
    assert (
        code[0] == "dumps(obj, *, skipkeys=False, ensure_ascii=True, indent=None, sort_keys=False)"
    )
    assert code[1] == 'text = json.dumps({"a": 1}, indent=2)\n\nprint(text)'
    prose = " ".join(b.text for b in dumps.blocks if b.kind == "text")
    assert "Serialize obj to a JSON formatted str, like dump." in prose
    assert "built with dict.fromkeys." in prose
    assert "Changed in version 3.6: All optional parameters are now keyword-only." in prose
    method = by_path[(JSON, "Basic Usage", "json.JSONEncoder", "json.JSONEncoder.default")]
    assert "See PEP 8 and thing." in method.text
    top = by_path[(JSON,)]
    assert top.blocks[0].text == "Source code: Lib/json/__init__.py"
    assert "Note: The term “object”" in top.text
    assert "See Basic Usage and the command line." in top.text  # the label names a section
    usage = next(s for s in doc.sections if s.heading_path == (JSON, "Basic Usage"))
    literal = usage.blocks[-1]
    assert literal.kind == "code" and literal.text.count("\n") == 2  # the :: block, whole
    assert "See also: pickle for Python-specific serialization." in doc.text
    assert "JavaScript Object Notation" not in doc.text  # .. index:: entries are dropped
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # docutils reports nothing


def test_rst_unknown_markup_degrades_to_text():
    doc = parse_text(
        "Title\n=====\n\nUse :weird:`thing <target>` and |undefined|, see :ref:`elsewhere`.\n\n"
        ".. strange-directive:: some args\n\n   Body text.\n\n.. toctree::\n\n   other\n",
        "x.rst",
    )
    text = doc.text
    assert (
        "Use thing and undefined, see elsewhere." in text
        and "some args" in text
        and "Body text." in text
    )
    assert "other" not in text and "System Message" not in text and ":weird:" not in text


def test_markdown_sections_front_matter_and_fences():
    by_path = sections("guide.md")
    assert list(by_path) == [
        ("Widget Guide",),
        ("Widget Guide", "Installing"),
        ("Widget Guide", "Configuring"),
    ]
    assert by_path[("Widget Guide",)].text == (
        "Widgets are small parts with a long life. Read the manual first."
    )
    install = by_path[("Widget Guide", "Installing")]
    assert [b.kind for b in install.blocks] == ["text", "code", "text"]
    assert install.blocks[1].text == "pip install widget\n\nwidget --version"
    assert install.blocks[2].text == (
        "- step one: unpack\n- step two: run the installer\n  1. nested first\n  2. nested second"
    )
    config = by_path[("Widget Guide", "Configuring")].text
    assert "color | the widget colour" in config and "Do not overheat the widget." in config


def test_html_main_content_without_navigation():
    doc = parse_file(FIXTURES / "manual.html")
    assert doc.title == "Manual"
    by_path = {s.heading_path: s for s in doc.sections}
    assert list(by_path) == [
        ("Manual",),
        ("Manual", "1. Setup"),
        ("Manual", "1. Setup", "1.1. Options"),
    ]
    setup = by_path[("Manual", "1. Setup")]
    assert setup.anchor == "SETUP"
    assert [b.kind for b in setup.blocks] == ["text", "code", "text"]
    assert setup.blocks[1].text == "widget setup --all\n\nwidget check"
    assert setup.blocks[2].text == "Note: Setup needs network access."
    assert by_path[("Manual",)].text == "The manual explains every widget setting."
    options = by_path[("Manual", "1. Setup", "1.1. Options")].text
    assert "- --all sets everything\n- --dry shows the plan" in options
    assert "Option | Effect\n--all | everything" in options
    for noise in (
        "Navigation link",
        "banner",
        "footer",
        "Prev",
        "evil",
        "color: red",
        "1. Setup\n",
    ):
        assert noise not in doc.text


def test_plain_text_paragraphs_and_indented_code():
    doc = parse_file(FIXTURES / "notes.txt")
    assert doc.title == "Release notes"
    [section] = doc.sections
    assert [(b.kind, b.text) for b in section.blocks] == [
        ("text", "Version 2 makes widgets faster and quieter than version 1."),
        ("code", "widget upgrade --to 2"),
    ]


def make_pdf(path: Path) -> None:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_title("Pump Handbook")
    pdf.set_font("helvetica", size=12)
    for heading, body in [
        ("Priming", "Open the bleed valve before priming the pump."),
        ("Storage", "Drain the pump before winter storage."),
    ]:
        pdf.add_page()
        pdf.start_section(heading)
        pdf.multi_cell(0, 10, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.multi_cell(0, 10, body, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def test_pdf_pages_and_outline(tmp_path):
    make_pdf(tmp_path / "handbook.pdf")
    doc = parse_file(tmp_path / "handbook.pdf")
    assert doc.title == "Pump Handbook"
    got = [(s.heading_path, s.page) for s in doc.sections]
    assert got == [(("Pump Handbook", "Priming"), 1), (("Pump Handbook", "Storage"), 2)]
    assert "Drain the pump before winter storage." in doc.sections[1].text
    chunks = chunk_document(doc, "handbook.pdf")
    assert [c.metadata["page"] for c in chunks] == [1, 2]
    assert chunks[1].metadata["title"] == "Pump Handbook › Storage"


def test_pdf_citation_shows_page(tmp_path):
    from ragloop.nodes.answer import cite

    make_pdf(tmp_path / "handbook.pdf")
    [chunk] = [c for c in load_corpus(tmp_path).chunks if c.metadata["page"] == 2]
    item = {"id": chunk.id, "title": chunk.metadata["title"], "page": 2, "source": "handbook.pdf"}
    assert cite(1, item)["title"] == "Pump Handbook › Storage, p. 2"
    assert cite(1, {"id": "a.md#0", "title": "A › B"})["title"] == "A › B"


def test_broken_and_unknown_files_are_reported_and_skipped(tmp_path):
    (tmp_path / "ok.md").write_text("# Ok\n\nFine.")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "slides.pptx").write_bytes(b"PK\x03\x04")
    (tmp_path / "a.png").write_bytes(b"\x89PNG")
    (tmp_path / "b.png").write_bytes(b"\x89PNG")
    report = load_corpus(tmp_path)
    skipped = dict(report.skipped)
    assert skipped["broken.pdf"].startswith("not a readable PDF")
    assert skipped["slides.pptx"].startswith("unsupported format .pptx")
    assert skipped["a.png and 1 more .png file(s)"].startswith("unsupported format .png")
    assert [c.id for c in report.chunks] == ["ok.md#0"]
    with pytest.raises(DocumentError, match="unsupported format"):
        parse_file(tmp_path / "slides.pptx")


def test_chunks_follow_sections_and_keep_code_whole():
    doc = parse_file(FIXTURES / "json.rst")
    chunks = chunk_document(doc, "json.rst", chunk_size=200, chunk_overlap=20)
    assert [c.id for c in chunks] == [f"json.rst#{n}" for n in range(len(chunks))]
    code = 'text = json.dumps({"a": 1}, indent=2)\n\nprint(text)'
    holding = [c for c in chunks if code in c.page_content]
    assert len(holding) == 1 and holding[0].metadata["has_code"]
    assert f"```\n{code}\n```" in holding[0].page_content
    assert holding[0].metadata["title"] == f"{JSON} › Basic Usage › json.dumps"
    assert holding[0].page_content.startswith(f"# {JSON} › Basic Usage › json.dumps\n\n")
    for chunk in chunks:  # a chunk belongs to exactly one section
        section = doc.sections[chunk.metadata["section"]]
        body = chunk.page_content.split("\n\n", 1)[1]
        assert body.split("\n\n")[0] in section.text


def test_long_code_is_cut_at_line_ends():
    lines = [f"step_{n} = run({n})" for n in range(60)]
    doc = parse_text("# T\n\n```\n" + "\n".join(lines) + "\n```\n", "t.md")
    chunks = chunk_document(doc, "t.md", chunk_size=300, chunk_overlap=30)
    assert len(chunks) > 2 and all(len(c.page_content) <= 300 + 10 for c in chunks)
    pieces = [c.page_content.split("```\n", 1)[1].rsplit("\n```", 1)[0] for c in chunks]
    assert "\n".join(pieces).split("\n") == lines


def test_permalink_marks_are_not_text():
    # texinfo puts a "¶" link after every term and heading; answers quoted "POSIX ¶: A family"
    html = (
        "<html><body><main><h2>2 Definitions<a class='copiable-anchor' href='#Def'> &para;</a>"
        "</h2><dl><dt id='index-POSIX'><span><code>POSIX</code><a href='#index-POSIX' "
        "class='copiable-anchor'> &para;</a></span></dt><dd><p>A family of open system "
        "standards based on Unix.</p></dd></dl><p>See <a href='#x'>the list</a> and "
        "<a href='#y'>#</a> more.</p></main></body></html>"
    )
    doc = parse_text(html, "defs.html")
    text = "\n".join(s.text for s in doc.sections)
    assert "\u00b6" not in text and "\u00b6" not in doc.sections[-1].heading_path[-1]
    assert "POSIX: A family of open system standards based on Unix." in text
    assert "See the list and more." in text  # a link with words stays


def test_a_paragraph_longer_than_a_chunk_is_cut_between_sentences():
    # one paragraph of 30 sentences of 8-9 words: cut at any space, a chunk ended mid-sentence
    # and the answer quoted that fragment ("it must be manually reset between multiple calls")
    sentences = [f"Sentence number {n} tells the reader one more small fact." for n in range(30)]
    doc = parse_text("# T\n\n" + " ".join(sentences) + "\n", "t.md")
    chunks = chunk_document(doc, "t.md", chunk_size=300, chunk_overlap=60)
    assert len(chunks) > 3
    for chunk in chunks:
        body = chunk.page_content.split("\n\n", 1)[1]
        assert body.startswith("Sentence number ") and body.endswith("small fact."), body
    told = " ".join(c.page_content.split("\n\n", 1)[1] for c in chunks)
    assert all(s in told for s in sentences)  # nothing lost, overlap aside


RAW_MARKUP = (":func:", ":class:", ":meth:", ":ref:", ".. ", "====", "----", "<div", "**", "`")
ERROR_TEXT = ("System Message", "Unknown interpreted text role", "Unknown directive", "ERROR/")


def test_fixture_corpus_has_no_raw_markup_in_chunks_or_titles(tmp_path):
    for item in FIXTURES.iterdir():
        shutil.copy(item, tmp_path / item.name)
    make_pdf(tmp_path / "handbook.pdf")
    report = load_corpus(tmp_path, chunk_size=300, chunk_overlap=30)
    assert report.files == 6 and not report.skipped
    for chunk in report.chunks:
        prose = "\n".join(
            part for n, part in enumerate(chunk.page_content.split("```")) if n % 2 == 0
        )
        for pattern in RAW_MARKUP + ERROR_TEXT:
            assert pattern not in prose, (chunk.id, pattern, prose)
        title = chunk.metadata["title"]
        assert title and title[0].isalnum() and not title.startswith(".."), title


def test_sentences_keep_fenced_code_whole():
    from ragloop.text import split_sentences

    doc = parse_file(FIXTURES / "guide.md")
    [chunk] = [c for c in chunk_document(doc, "guide.md") if c.metadata["has_code"]]
    sentences = split_sentences(chunk.page_content)
    assert "```\npip install widget\n\nwidget --version\n```" in sentences
    assert "Install with pip:" in sentences


def test_sphinx_html_objects_become_sections():
    doc = parse_file(FIXTURES / "sphinx-json.html")
    assert doc.title == JSON
    got = {s.heading_path: s for s in doc.sections}
    assert list(got) == [(JSON,), (JSON, "Basic Usage", "json.dumps"), (JSON, "Basic Usage")]
    assert (
        got[(JSON,)].text
        == "Source code: Lib/json/__init__.py\n\nWarning: Be cautious with untrusted data."
    )
    dumps = got[(JSON, "Basic Usage", "json.dumps")]
    assert dumps.blocks[0] == Block("code", "json.dumps(obj, *, indent=None)")
    assert "Serialize obj to a JSON formatted str." in dumps.text
    assert "JSON | Python\nobject | dict" in dumps.text
    assert got[(JSON, "Basic Usage")].text == "Text after the function."
    for noise in ("¶", "Sidebar", "Copyright", "»"):
        assert noise not in doc.text


def test_rst_confval_keeps_its_name_type_and_default():
    doc = parse_text(
        "Options\n=======\n\n.. module:: conf\n\n.. confval:: html_theme\n"
        "   :type: :code-py:`str`\n   :default: ``'alabaster'``\n\n   The theme for HTML output.\n",
        "conf.rst",
    )
    [section] = doc.sections
    assert section.heading_path == ("Options", "html_theme")
    assert section.text == (
        "```\nhtml_theme\n```\n\nType: str\n\nDefault: 'alabaster'\n\nThe theme for HTML output."
    )


def test_pdf_running_headers_and_page_numbers_are_dropped(tmp_path):
    fpdf = pytest.importorskip("fpdf")

    class Manual(fpdf.FPDF):
        def header(self):
            self.set_font("helvetica", size=9)
            self.cell(0, 8, "ACME Pump Manual", new_x="LMARGIN", new_y="NEXT")

        def footer(self):
            self.set_y(-15)
            self.set_font("helvetica", size=9)
            self.cell(0, 8, str(self.page_no()))

    pdf = Manual()
    for n in range(1, 4):
        pdf.add_page()
        pdf.set_font("helvetica", size=12)
        pdf.multi_cell(0, 10, f"Step {n} of the procedure is described here.")
    pdf.output(str(tmp_path / "manual.pdf"))
    doc = parse_file(tmp_path / "manual.pdf")
    assert doc.title == "ACME Pump Manual"
    assert [s.text for s in doc.sections] == [
        f"Step {n} of the procedure is described here." for n in range(1, 4)
    ]
    assert [s.page for s in doc.sections] == [1, 2, 3]


def test_small_neighbouring_sections_share_a_chunk_under_their_common_path():
    doc = parse_file(FIXTURES / "guide.md")
    [chunk] = chunk_document(doc, "guide.md", chunk_size=800, chunk_overlap=50)
    assert chunk.metadata["title"] == "Widget Guide" and chunk.metadata["section"] == 0
    text = chunk.page_content
    assert text.startswith("# Widget Guide\n\nWidgets are small parts")
    assert "\n\n## Installing\n\nInstall with pip:" in text
    assert "\n\n## Configuring\n\nkey | meaning" in text
    apart = chunk_document(doc, "guide.md", chunk_size=150, chunk_overlap=20)
    assert [c.metadata["title"] for c in apart][:2] == ["Widget Guide", "Widget Guide › Installing"]
    assert all("## " not in c.page_content for c in apart)  # nothing to pack at this size


def test_a_section_of_some_length_keeps_its_own_chunk_and_title():
    def titles(body_a):
        md = f"# Doc\n\nShort intro.\n\n## A\n\n{body_a}\n\n## B\n\nShort b."
        return [c.metadata["title"] for c in chunk_document(parse_text(md, "d.md"), "d.md")]

    assert titles("word " * 80) == ["Doc", "Doc › A", "Doc › B"]  # 400 chars > 0.4 x 800
    assert titles("word " * 20) == ["Doc"]  # all short: one chunk under the common path


def _settings_page(n: int) -> str:
    """A DocBook-style settings page: a variablelist of n settings, each a term + paragraph."""
    entries = "".join(
        f'<dt id="GUC-S{i}"><span class="term"><code class="varname">setting_{i}</code>'
        f' (<code class="type">integer</code>)</span></dt>'
        f"<dd><p>Sets how many widgets stage {i} keeps in memory before it flushes them to"
        f" the disk, in units of one widget.</p></dd>"
        for i in range(n)
    )
    body = f"<h1>Settings</h1><div class='variablelist'><dl>{entries}</dl></div>"
    return f"<html><body>{body}</body></html>"


def test_a_definition_term_leads_its_description_and_never_ends_a_chunk():
    # before: each <dt> was a block of its own and the packer cut after it, so a chunk ended
    # with "setting_3 (integer)" while the next one described it without its name
    doc = parse_text(_settings_page(12), Path("settings.html"))
    chunks = chunk_document(doc, "settings.html", chunk_size=300, chunk_overlap=0)
    assert len(chunks) > 3
    for i in range(12):
        described = [c for c in chunks if f"widgets stage {i} keeps" in c.page_content]
        assert len(described) == 1
        lead = f"setting_{i} (integer): Sets how many widgets stage {i}"
        assert lead in described[0].page_content
    for chunk in chunks:
        assert not chunk.page_content.rstrip().endswith("(integer)")


def test_a_term_whose_description_starts_with_code_keeps_its_own_line():
    html = (
        "<html><body><h1>Cmds</h1><dl><dt>run-all</dt><dd><pre>widget run --all</pre>"
        "<p>Runs every widget.</p></dd><dt>a</dt><dt>b</dt><dd><p>Two names.</p></dd>"
        "</dl></body></html>"
    )
    doc = parse_text(html, Path("cmds.html"))
    blocks = doc.sections[0].blocks
    assert [(b.kind, b.text) for b in blocks] == [
        ("text", "run-all"),
        ("code", "widget run --all"),
        ("text", "Runs every widget."),
        ("text", "a, b: Two names."),
    ]
    assert blocks[0].keep and blocks[0].keep == blocks[1].keep == blocks[2].keep
    assert blocks[3].keep not in (0, blocks[0].keep)


def test_an_option_line_stays_in_the_chunk_of_what_it_does():
    # a man page converted to HTML: each option is a paragraph, what it does the next one;
    # before, a chunk could end with "-i, --ignore-case" and its description open the next
    opts = "".join(
        f"<p><b>-{c}</b>, <b>--option-{c}</b></p><p>Turn on the behaviour number {i} of the"
        f" program, which changes how it reads its input.</p>"
        for i, c in enumerate("abcdefghij")
    )
    html = f"<html><body><h1>GREP</h1><h2>OPTIONS</h2>{opts}</body></html>"
    doc = parse_text(html, Path("grep.html"))
    chunks = chunk_document(doc, "grep.html", chunk_size=300, chunk_overlap=0)
    assert len(chunks) > 3
    for i, c in enumerate("abcdefghij"):
        holding = [ch for ch in chunks if f"-{c}, --option-{c}" in ch.page_content]
        assert len(holding) == 1
        assert f"behaviour number {i} of" in holding[0].page_content
    assert option_line("-f FILE, --file=FILE") and option_line("--color[=WHEN]")
    assert not option_line("-1 is returned when the pattern is empty.")
    assert not option_line("Note") and not option_line("a - b")


def test_an_empty_cell_leaves_no_gap_in_a_row_whatever_the_markup(tmp_path):
    # the HTML reader always left empty cells out; Markdown and reST wrote "a |  | c"
    pages = {
        "t.md": "# T\n\n| name | flag | default |\n|---|---|---|\n| judge | | auto mode |\n",
        "t.rst": "T\n=\n\n===== ==== =========\nname  flag default\n===== ==== =========\n"
        "judge      auto mode\n===== ==== =========\n",
        "t.html": "<html><body><h1>T</h1><table><tr><td>judge</td><td></td>"
        "<td>auto mode</td></tr></table></body></html>",
    }
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        doc = parse_file(tmp_path / name)
        assert "judge | auto mode" in doc.text, (name, doc.text)
        assert "|  |" not in doc.text, name


def test_a_table_row_read_cell_by_cell_stays_in_one_chunk():
    # a function table row holds a signature, a description and an example as paragraphs;
    # before, the chunk could end after the signature and the description start the next one
    rows = "".join(
        f"<tr><td><p>fn_{i} ( integer ) → integer</p><p>Returns the {i}th widget count"
        f" of the store, or null.</p><p>fn_{i}(1) → 7</p></td></tr>"
        for i in range(10)
    )
    html = f"<html><body><h1>Functions</h1><table><tbody>{rows}</tbody></table></body></html>"
    doc = parse_text(html, Path("fn.html"))
    chunks = chunk_document(doc, "fn.html", chunk_size=260, chunk_overlap=0)
    assert len(chunks) > 3
    for i in range(10):
        holding = [c for c in chunks if f"fn_{i} ( integer )" in c.page_content]
        assert len(holding) == 1
        assert f"Returns the {i}th widget count" in holding[0].page_content
        assert f"fn_{i}(1) → 7" in holding[0].page_content


def test_sentences_keep_a_numbered_heading_line_whole():
    from ragloop.text import split_sentences

    text = "# 9.9. Date/Time Functions › 9.9.2. date_trunc\n\nIt truncates. Then it returns."
    assert split_sentences(text) == [
        "# 9.9. Date/Time Functions › 9.9.2. date_trunc",
        "It truncates.",
        "Then it returns.",
    ]
    assert split_sentences("#hashtag is text. Next.") == ["#hashtag is text.", "Next."]


def test_a_list_marker_is_dropped_but_a_leading_dash_of_an_option_is_kept():
    from ragloop.text import split_sentences

    # a man page's options: the dashes are the option's, not a list's
    text = "-i, --ignore-case: Ignore case distinctions.\n\n--no-ignore-case: Do not ignore it."
    assert split_sentences(text) == [
        "-i, --ignore-case: Ignore case distinctions.",
        "--no-ignore-case: Do not ignore it.",
    ]
    assert split_sentences("*args and **kwargs are collected.") == [
        "*args and **kwargs are collected."
    ]
    items = "Have these ready:\n- the serial number;\n* the error code;\n• the order number."
    assert split_sentences(items) == [
        "Have these ready:",
        "the serial number;",
        "the error code;",
        "the order number.",
    ]
    assert split_sentences("- \n-") == []  # a marker alone is no sentence


def test_sentences_may_start_with_a_lower_case_name_but_not_after_an_abbreviation():
    from ragloop.text import split_sentences

    text = "Return the names that match pattern. pattern can be absolute, e.g. the full path."
    assert split_sentences(text) == [
        "Return the names that match pattern.",
        "pattern can be absolute, e.g. the full path.",
    ]
    assert split_sentences("Set it, i.e. always. fd is the file.") == [
        "Set it, i.e. always.",
        "fd is the file.",
    ]
    # the name may be a path or a hyphenated command: a question that leads into it ("Does it
    # help?") is its own sentence, so the answer never quotes the question with its reply
    assert split_sentences("Does it help? bench/fit.py refits the model.") == [
        "Does it help?",
        "bench/fit.py refits the model.",
    ]
    assert split_sentences("Run it. git-annex adds files.") == ["Run it.", "git-annex adds files."]
