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
