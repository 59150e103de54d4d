"""AsciiDoc (.adoc, and .txt written in it), and .txt files in reST or Markdown: golden
outputs. ``asciidoc-git-show-ref.txt`` is git-doc's source of the HTML page beside it."""

from __future__ import annotations

from pathlib import Path

from ragloop.documents import chunk_document, parse_file, parse_text
from ragloop.documents.sniff import sniff_markup

PAGES = Path(__file__).parent / "fixtures" / "pages"

ADOC = """\
= Widget Guide
:product: Widget Server
:toc:

// a comment that is not content

== Installing

Install {product} with the package manager.

[source,shell]
----
$ apt-get install widget-server
  --with-docs
----

.Ports
The server listens on port 8080.

NOTE: Run it as an unprivileged user.

== Options

--only-untracked::
	Show only the untracked files.

-q::
--quiet::
	Suppress all output.
+
Errors are still printed.

--config <file>:: Read the settings from `<file>` (see <<files,the files section>>).

[[files]]
=== Files

|===
|Path |What
|/etc/widget.conf |the settings
|===

* one item
* another item
"""


def test_adoc_sections_labelled_lists_and_listing_blocks(tmp_path):
    (tmp_path / "guide.adoc").write_text(ADOC)
    doc = parse_file(tmp_path / "guide.adoc")
    assert (doc.title, doc.generator) == ("Widget Guide", "asciidoc")
    by_title = {s.title: s for s in doc.sections}
    assert list(by_title) == [
        "Widget Guide › Installing",
        "Widget Guide › Options",
        "Widget Guide › Options › Files",
    ]
    install = by_title["Widget Guide › Installing"].blocks
    assert [(b.kind, b.text) for b in install] == [
        ("text", "Install Widget Server with the package manager."),
        ("code", "$ apt-get install widget-server\n  --with-docs"),
        ("text", "Ports: The server listens on port 8080."),
        ("text", "Note: Run it as an unprivileged user."),
    ]
    options = by_title["Widget Guide › Options"].blocks
    assert [b.text for b in options] == [
        "--only-untracked: Show only the untracked files.",
        "-q, --quiet: Suppress all output.",
        "Errors are still printed.",
        "--config <file>: Read the settings from <file> (see the files section).",
    ]
    assert options[1].keep and options[1].keep == options[2].keep  # one record
    files = by_title["Widget Guide › Options › Files"]
    assert files.anchor == "files"
    assert files.blocks[0].text == "Path | What\n/etc/widget.conf | the settings"
    assert files.blocks[1].text == "- one item\n- another item"
    text = "\n".join(c.page_content for c in chunk_document(doc, "guide.adoc"))
    for markup in ("----", "::", "{product}", "<<", "[source", ":toc:", "//"):
        assert markup not in text


def test_asciidoc_txt_man_page_is_read_with_its_structure():
    doc = parse_file(PAGES / "asciidoc-git-show-ref.txt")
    assert (doc.title, doc.generator) == ("git-show-ref(1)", "asciidoc")
    names = [s.heading_path[-1] for s in doc.sections]
    assert names == [
        "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "OUTPUT", "EXAMPLES", "FILES",
        "SEE ALSO", "GIT",
    ]  # fmt: skip
    first = doc.sections[0]
    assert first.title == "git-show-ref(1) › NAME"
    assert first.blocks[0].text == "git-show-ref - List references in a local repository"
    synopsis = doc.sections[1].blocks[0]
    assert synopsis.kind == "code" and synopsis.text.startswith("git show-ref [-q | --quiet]")
    options = [b.text for b in doc.sections[3].blocks]
    assert (
        options[0] == "--head: Show the HEAD reference, even if it would normally be filtered out."
    )
    assert options[2].startswith("-d, --dereference: Dereference tags into object IDs")
    assert any(b.kind == "code" for b in doc.sections[4].blocks)
    assert "linkgit" not in doc.text and "NAME\n----" not in doc.text


def test_the_txt_and_html_of_one_man_page_agree_on_what_it_is():
    import gzip

    html = parse_text(
        gzip.decompress((PAGES / "asciidoc-git-show-ref.html.gz").read_bytes()).decode(),
        "git-show-ref.html",
    )
    txt = parse_file(PAGES / "asciidoc-git-show-ref.txt")
    assert html.sections[0].blocks[0].text == txt.sections[0].blocks[0].text
    opts = [b.text.split(":")[0] for b in txt.sections[3].blocks if b.keep]
    html_opts = [b.text.split(":")[0] for b in html.sections[3].blocks if b.keep]
    assert opts[:6] == html_opts[:6]


def test_txt_files_in_rst_markdown_or_nothing_are_recognised():
    rst = (
        "JSON\n====\n\n.. module:: json\n\nUse :func:`dumps` to write.\n\nBasics\n------\n\nText.\n"
    )
    md = "# Notes\n\nSee [the guide](guide.md).\n\n```\ncode\n```\n"
    plain = "Meeting notes\n\nWe talked about widgets.\n"
    assert [sniff_markup(t) for t in (rst, md, plain)] == ["rst", "markdown", "text"]
    doc = parse_text(rst, "json.rst.txt")
    assert [s.title for s in doc.sections] == ["JSON", "JSON › Basics"]
    assert "Use dumps() to write." in doc.text or "Use dumps to write." in doc.text
    assert parse_text(md, "notes.txt").sections[0].blocks[-1].kind == "code"


def test_myst_roles_leave_their_text():
    doc = parse_text("# Certs\n\nUse {pypi}`truststore` or {ref}`the guide <certs>`.\n", "c.md")
    assert doc.sections[0].blocks[0].text == "Use truststore or the guide."
