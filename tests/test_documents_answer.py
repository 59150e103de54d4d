"""Offline answers that announce code quote the whole block; citations carry the heading path."""

from ragloop.documents import chunk_document, parse_text
from ragloop.documents.quoting import attach_code

RST = """Describing code
===============

Python
------

Use the py:function directive to document a Python function, as follows:

.. code-block:: rst

   .. py:function:: enumerate(sequence[, start=0])

      Return an iterator that yields tuples.

It renders like this.
"""


def source_text():
    [chunk] = chunk_document(parse_text(RST, "code.rst"), "code.rst")
    return chunk.page_content


def test_sentence_announcing_code_brings_the_whole_block():
    answer = "Use the py:function directive to document a Python function, as follows: [1]"
    out = attach_code(answer + " It renders like this. [1]", [source_text()])
    assert out == (
        f"{answer}\n```\n.. py:function:: enumerate(sequence[, start=0])\n\n"
        "   Return an iterator that yields tuples.\n```\nIt renders like this. [1]"
    )


def test_other_answers_are_left_alone():
    text = source_text()
    for answer in ("It renders like this. [1]", "Something else entirely: [1]", "No cite:"):
        assert attach_code(answer, [text]) == answer
    quoted = "Use it, as follows: [1] ```\nx\n``` [1]"
    assert attach_code(quoted, ["Use it, as follows:\n\n```\nx\n```"]) == quoted  # once only
    assert attach_code("Use it, as follows: [3]", [text]) == "Use it, as follows: [3]"


def test_citation_of_a_packed_chunk_names_the_quoted_section():
    from ragloop.documents import parse_file
    from ragloop.nodes.answer import cite
    from tests.test_documents import FIXTURES

    [chunk] = chunk_document(parse_file(FIXTURES / "guide.md"), "guide.md", chunk_size=800)
    ctx = {"id": chunk.id, "title": chunk.metadata["title"], "text": chunk.page_content}
    answer = "Widgets are small parts with a long life. [1] Install with pip: [1]"
    assert cite(1, ctx, answer)["title"] == "Widget Guide"  # the first quote is above any ##
    answer = "Do not overheat the widget. [1]"
    assert cite(1, ctx, answer)["title"] == "Widget Guide › Configuring"
    assert cite(1, ctx, "A sentence from elsewhere. [1]")["title"] == "Widget Guide"
