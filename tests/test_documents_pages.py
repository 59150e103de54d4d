"""Golden real pages, one or two per documentation generator (copied from Debian's doc packages:
git-doc, postgresql-doc-15, rust-doc, mkdocs-doc, libcommons-lang3-java-doc, libjsoncpp-doc,
libffi8, sqlite3-doc): each keeps its title and its first lines say what the page is."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ragloop.documents import chunk_document, parse_text

PAGES = Path(__file__).parent / "fixtures" / "pages"

# file, generator detected, title, (heading path, start of its first block) of the first section
GOLDEN = [
    (
        "asciidoc-git-show-ref.html",
        "asciidoc",
        "git-show-ref(1) Manual Page",
        ("git-show-ref(1) Manual Page › NAME", "git-show-ref - List references in a local"),
    ),
    ("docbook-sql-droptable.html", "docbook", "DROP TABLE", ("DROP TABLE", "DROP TABLE — remove")),
    (
        "doxygen-json-writer.html",
        "doxygen",
        "Json::Writer Class Reference",
        ("Json::Writer Class Reference", "Abstract class for writers."),
    ),
    ("html-sqlite-droptable.html", "html", "DROP TABLE", ("DROP TABLE", "DROP TABLE")),
    (
        "javadoc-ClassLoaderUtils.html",
        "javadoc",
        "Class ClassLoaderUtils",
        ("Class ClassLoaderUtils", "java.lang.Object"),
    ),
    (
        "mdbook-hello-world.html",
        "mdbook",
        "Hello, World!",
        ("Hello, World!", "Now that you’ve installed Rust"),
    ),
    ("mkdocs-user-guide.html", "mkdocs", "User Guide", ("User Guide", "Building Documentation")),
    (
        "rustdoc-fn.max.html",
        "rustdoc",
        "Function std::cmp::max",
        ("Function std::cmp::max", "pub fn max<T>(v1: T, v2: T) -> T"),
    ),
    (
        "texinfo-libffi-introduction.html",
        "texinfo",
        "1 What is libffi?",
        ("1 What is libffi?", "Compilers for high level languages"),
    ),
]


def read(name: str):
    return parse_text(gzip.decompress((PAGES / f"{name}.gz").read_bytes()).decode(), name)


@pytest.mark.parametrize(("name", "generator", "title", "first"), GOLDEN)
def test_each_generator_keeps_the_page_title_and_identity(name, generator, title, first):
    doc = read(name)
    assert doc.generator == generator
    assert doc.title == title
    head = doc.sections[0]
    assert (head.title, head.blocks[0].text[: len(first[1])]) == first
    chunks = chunk_document(doc, name)
    assert chunks[0].page_content.startswith(f"# {title}")
    # no page furniture: rustdoc's "source" links and [−] toggles, javadoc's nav bars, ¶ marks
    text = "\n".join(c.page_content for c in chunks)
    for furniture in ("[−]", "Skip navigation", "¶", "Permanent link", "Copy item path"):
        assert furniture not in text


def test_asciidoc_man_page_options_keep_their_dashes_and_sections():
    doc = read("asciidoc-git-show-ref.html")
    titles = [s.heading_path[-1] for s in doc.sections]
    assert titles[:4] == ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS"]
    options = next(s for s in doc.sections if s.heading_path[-1] == "OPTIONS")
    assert options.blocks[0].text.startswith("--head: Show the HEAD reference")
    # the footer ("Last updated ...") is not content
    assert "Last updated" not in doc.text


def test_texinfo_single_page_manual_is_titled_by_its_settitle():
    html = (
        '<html><head><meta name="Generator" content="makeinfo"><title>Bash Reference Manual'
        '</title></head><body><div class="top-level-extent"><div class="nav-panel"><p>Next: '
        '<a href="#Intro">Introduction</a></p></div><h1 class="settitle">Bash Reference Manual'
        '</h1><h2 class="chapter">1 Introduction</h2><ul class="mini-toc"><li><a href="#x">What '
        "is Bash?</a></li></ul><p>Bash is the shell.</p></div></body></html>"
    )
    doc = parse_text(html, "bashref.html")
    assert (doc.generator, doc.title) == ("texinfo", "Bash Reference Manual")
    assert [(s.title, s.text) for s in doc.sections] == [
        ("Bash Reference Manual › 1 Introduction", "Bash is the shell.")
    ]


def test_an_unknown_site_without_known_containers_reads_its_densest_block():
    nav = "".join(f'<li><a href="p{i}.html">Page {i}</a></li>' for i in range(30))
    prose = "".join(
        f"<p>Paragraph {i} says what the widget does, in some detail, for its reader.</p>"
        for i in range(12)
    )
    html = (
        f"<html><head><title>Widgets</title></head><body><div><ul>{nav}</ul></div>"
        f'<div class="x"><div class="y"><h1>Widgets</h1>{prose}</div></div>'
        "<div>Copyright 2024 Example Corp. All rights reserved.</div></body></html>"
    )
    doc = parse_text(html, "widgets.html")
    assert doc.title == "Widgets"
    assert "Page 3" not in doc.text and "Copyright" not in doc.text
    assert doc.text.count("Paragraph") == 12
