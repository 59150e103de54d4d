"""Any text in any format parses into clean sections or a DocumentError: never a crash."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloop.documents import DocumentError, chunk_document, parse_text

MARKUP = st.sampled_from(
    [
        "Title\n=====\n",
        "\n\n",
        "::\n\n    code\n",
        ".. note::\n\n   x\n",
        ":func:`a`",
        "``x``",
        ".. function:: f(x)\n\n   Doc.\n",
        "   indented\n",
        "# H\n",
        "```\ncode\n",
        "<div>",
        "</p>",
        "<h2>H</h2>",
        "<pre>x</pre>",
        "| a | b |\n|---|---|\n",
        "- item\n",
        "1. one\n",
        "*",
        "`",
        "|sub|",
        "[x]_",
        ".. _label:\n",
        "---\ntitle: t\n---\n",
        "&amp;",
        "\x0c",
        "\ufeff",
    ]
)
TEXT = st.lists(st.one_of(MARKUP, st.text(max_size=20)), max_size=25).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, fmt=st.sampled_from(["rst", "markdown", "html", "text"]))
def test_any_text_parses_or_is_a_clear_error(text, fmt):
    try:
        doc = parse_text(text, f"x.{fmt}", fmt)
    except DocumentError as exc:
        assert exc.reason
        return
    for chunk in chunk_document(doc, "x", chunk_size=120, chunk_overlap=10):
        assert chunk.page_content.strip()
        assert "System Message" not in chunk.page_content


def test_a_parser_failure_is_reported_for_that_file_only(tmp_path, monkeypatch):
    import ragloop.documents.markdown as markdown
    from ragloop.retrievers.corpus import load_corpus

    def broken(text, path):
        raise ValueError("parser bug")

    monkeypatch.setattr(markdown, "parse_markdown", broken)
    (tmp_path / "bad.md").write_text("# Bad\n\ntext")
    (tmp_path / "good.txt").write_text("Good text.")
    report = load_corpus(tmp_path)
    assert dict(report.skipped) == {
        "bad.md": "could not be parsed as markdown (ValueError: parser bug)"
    }
    assert [c.id for c in report.chunks] == ["good.txt#0"]
