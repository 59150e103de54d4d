"""bench/_quality_measure.py reads an extractive answer's quoted sentences back: the answer's
own "[n]" citations split it, a document's footnote mark inside a sentence does not."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from _quality_measure import flaws, quoted  # noqa: E402


def test_citations_split_the_answer_and_footnote_marks_do_not() -> None:
    answer = (
        "Create an object that writes rows to a file. [3] "
        "JSON is a format (not a strict subset of JavaScript [1] ). [1] "
        "Read it with the json module. [2]"
    )
    assert quoted(answer) == [
        "Create an object that writes rows to a file.",
        "JSON is a format (not a strict subset of JavaScript [1] ).",
        "Read it with the json module.",
    ]
    assert not flaws(answer, set())["code"]


def test_a_bare_signature_is_still_counted_as_code() -> None:
    assert flaws("The function returns a value. [1] os.setresgid(rgid, egid, sgid) [2]", set())[
        "code"
    ]


def test_an_index_or_table_block_is_counted_as_toc() -> None:
    index = "S\nset: | The Set Builtin\nshift: | Bourne Shell Builtins\nT\ntest: | Bourne Shell"
    assert flaws(f"The set builtin sets options. [1] {index} [2]", set())["toc"]
    assert flaws("From | To | Use\nseconds | struct_time | gmtime() [1]", set())["toc"]
    assert flaws("Jump to: | . : [ A B C D E F G H J K L M [1]", set())["toc"]
    prose = "Note\nThe unalias builtin removes each name from the list of aliases. [1]"
    assert not flaws(prose, set())["toc"]
    assert not flaws("Run a | b to pipe the output of a into b. [1]", set())["toc"]
