"""evaluate() returns what RAGAS users expect: result[m] per row, scores, to_pandas()."""

from __future__ import annotations

import math
import sys

import pytest

from ragloop.eval.runner import evaluate
from ragloop.eval.schema import EvaluationDataset

ROWS = [
    {"response": "Paris", "reference": "Paris"},
    {"response": "", "reference": ""},  # empty strings are scored (RAGAS: exact match 1.0)
    {"response": "Rome", "reference": "Paris"},
    {"response": "Oslo"},  # no reference: unmeasured, NaN with a reason
]


@pytest.fixture
def result():
    return evaluate(ROWS, ["exact_match", "string_present"], cache=False)


def test_getitem_is_the_per_row_list(result):
    values = result["exact_match"]
    assert values[:3] == [1.0, 1.0, 0.0] and math.isnan(values[3])
    assert len(result) == 4
    assert result.means()["exact_match"] == pytest.approx(2 / 3)  # NaN kept out of the mean
    with pytest.raises(KeyError, match="metrics: exact_match, string_present"):
        result["faithfulness"]


def test_scores_is_one_dict_per_row(result):
    assert result.scores[0] == {"exact_match": 1.0, "string_present": 1.0}
    assert result.scores[2] == {"exact_match": 0.0, "string_present": 0.0}
    assert len(result.scores) == 4


def test_to_pandas_has_rows_metrics_and_reasons(result):
    pd = pytest.importorskip("pandas")
    frame = result.to_pandas()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 4
    assert list(frame["exact_match"][:3]) == [1.0, 1.0, 0.0]
    assert "reference" in frame["exact_match.reason"][3]


def test_to_pandas_has_every_input_column_then_the_metrics_as_ragas():
    pd = pytest.importorskip("pandas")
    rows = [
        {"user_input": "Capital?", "response": "Paris", "reference": "Paris", "id": "q1"},
        {"user_input": "Where?", "retrieved_contexts": ["Paris is in France."], "response": "x"},
    ]
    frame = evaluate(rows, ["exact_match"], cache=False).to_pandas()
    inputs = ["user_input", "response", "reference", "id", "retrieved_contexts"]
    assert set(inputs) <= set(frame.columns)
    assert list(frame.columns[-2:]) == ["exact_match", "exact_match.reason"]
    assert frame["retrieved_contexts"][1] == ["Paris is in France."]
    assert frame["id"][0] == "q1" and pd.isna(frame["reference"][1])


def test_to_pandas_keeps_a_conversation_as_messages():
    pytest.importorskip("pandas")
    thread = [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}]
    result = evaluate(
        EvaluationDataset.from_list([{"user_input": thread, "reference": "greet"}]),
        ["exact_match"],  # unmeasured here: the columns are what counts
        cache=False,
    )
    frame = result.to_pandas()
    assert [m["content"] for m in frame["user_input"][0]] == ["hi", "hello"]
    assert frame["reference"][0] == "greet"


def test_to_pandas_without_pandas_says_how_to_install(result, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r"ragloop\[pandas\]"):
        result.to_pandas()


def test_summary_and_write_keep_ragloop_coverage(result, tmp_path):
    summary = result.summary()["metrics"]["exact_match"]
    assert summary["measured"] == 3 and summary["total"] == 4
    rows_path, _ = result.write(tmp_path / "out")
    assert rows_path.read_text(encoding="utf-8").count("\n") == 4


def test_csv_list_cells_in_python_literal_form_are_read(tmp_path):
    import pandas as pd

    path = tmp_path / "ragas.csv"
    frame = pd.DataFrame(
        {
            "user_input": ["q"],
            "retrieved_contexts": [["it's a", "b"]],
            "reference_contexts": [["b"]],
            "retrieved_context_ids": [[1, "x"]],
        }
    )
    frame.to_csv(path, index=False)  # pandas writes "[\"it's a\", 'b']" list cells
    ds = EvaluationDataset.load(path)
    assert not ds.errors
    sample = ds[0]
    assert sample.retrieved_contexts == ["it's a", "b"]
    assert sample.retrieved_context_ids == [1, "x"]  # a typed RAGAS field, not an extra
    assert "retrieved_context_ids" not in sample.extras()


def test_csv_list_cell_that_is_code_is_refused_not_run(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(
        "user_input,retrieved_contexts\nq,\"__import__('os').getcwd()\"\nq2,\"['a']\"\n",
        encoding="utf-8",
    )
    ds = EvaluationDataset.load(path)
    assert len(ds) == 1 and ds[0].retrieved_contexts == ["a"]
    assert ds.errors and "must hold a list" in ds.errors[0].reason
