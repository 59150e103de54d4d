import pytest

from ragloop.errors import CorpusError
from ragloop.retrievers.corpus import fingerprint, html_to_text, load_corpus


def test_loads_every_format_with_stable_ids(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha text about pumps.")
    (tmp_path / "b.txt").write_text("Plain text file.")
    (tmp_path / "c.rst").write_text("Title\n=====\n\nSome rst.")
    (tmp_path / "sub" / "d.html").write_text(
        "<html><head><title>Page D</title><style>p{}</style></head>"
        "<body><p>Hello <b>world</b></p><script>evil()</script></body></html>"
    )
    (tmp_path / "ignored.pdf").write_bytes(b"%PDF")
    report = load_corpus(tmp_path)
    ids = [c.id for c in report.chunks]
    assert ids == ["a.md#0", "b.txt#0", "c.rst#0", "sub/d.html#0"]
    html = report.chunks[-1]
    assert "Hello world" in html.page_content and "evil" not in html.page_content
    assert "<" not in html.page_content and html.metadata["title"] == "Page D"
    assert report.chunks[0].metadata == {
        "id": "a.md#0",
        "source": "a.md",
        "title": "Alpha",
        "chunk": 0,
        "section": 0,
        "page": None,
        "anchor": "alpha",
        "has_code": False,
        "boilerplate": False,
    }
    assert dict(report.skipped)["ignored.pdf"].startswith("not a readable PDF")
    assert load_corpus(tmp_path).fingerprint == report.fingerprint


def test_chunks_overlap(tmp_path):
    words = " ".join(f"word{i}" for i in range(400))
    (tmp_path / "long.txt").write_text(words)
    chunks = load_corpus(tmp_path, chunk_size=200, chunk_overlap=50).chunks
    assert len(chunks) > 5
    assert [c.id for c in chunks[:2]] == ["long.txt#0", "long.txt#1"]
    tail = chunks[0].page_content.split()[-1]
    assert tail in chunks[1].page_content


def test_bad_files_are_reported_not_fatal(tmp_path):
    (tmp_path / "good.md").write_text("# Good\n\nFine text.")
    (tmp_path / "empty.md").write_text("   \n")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 menu".encode("latin-1"))
    report = load_corpus(tmp_path)
    assert dict(report.skipped) == {"binary.txt": "binary file", "empty.md": "empty file"}
    assert [p for p, _ in report.repaired] == ["latin1.txt"]
    assert "caf\ufffd menu" in next(c for c in report.chunks if c.id == "latin1.txt#0").page_content


def test_missing_or_empty_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CorpusError, match="not found"):
        load_corpus(tmp_path / "nope")
    with pytest.raises(CorpusError, match="no usable text"):
        load_corpus(tmp_path)
    (tmp_path / "e.md").write_text("")
    with pytest.raises(CorpusError, match="empty file"):
        load_corpus(tmp_path)


def test_fingerprint_changes_with_content(tmp_path):
    (tmp_path / "a.md").write_text("one")
    before = fingerprint(tmp_path)
    (tmp_path / "a.md").write_text("two")
    assert fingerprint(tmp_path) != before


def test_html_to_text_strips_markup():
    text, title = html_to_text("<title>T</title><div>a &amp; b</div><div>c</div>")
    assert title == "T" and "a & b" in text and "c" in text
