"""The evaluation runner in process: bad rows, NaN handling, retries, auth, journal, defaults."""

from __future__ import annotations

import asyncio
import json
import math
import random
import sqlite3
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloop.errors import RagloopError, UnknownNameError
from ragloop.eval.cache import Store
from ragloop.eval.metrics.base import MetricResult, SingleTurnMetric, get_metric, nan
from ragloop.eval.prepare import default_metric_names
from ragloop.eval.runner import aevaluate, evaluate
from ragloop.eval.schema import EvaluationDataset
from ragloop.llm.retry import RetryPolicy
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.embeddings import HashEmbeddings
from tests.fakes.fixtures import FAKE_KEY

Fn = Callable[[Any, int], Awaitable[MetricResult]]


class FnMetric(SingleTurnMetric):
    """A test metric whose score comes from ``fn(sample, nth call for this question)``."""

    required_columns = ("user_input",)

    def __init__(self, fn: Fn, label: str = "fn_metric", llm_like: bool = False, **kw: Any):
        super().__init__(**kw)
        self.name = label  # type: ignore[misc]
        self.needs_llm = llm_like  # type: ignore[misc]
        self._fn = fn
        self._calls: Counter[str] = Counter()  # underscore: kept out of the journal fingerprint

    async def _single_turn_ascore(self, sample: Any) -> MetricResult:
        self._calls[sample.user_input] += 1
        return await self._fn(sample, self._calls[sample.user_input])


FnMetric.name = "fn_metric"  # set after creation so this test metric stays out of the registry


class StatusError(Exception):
    """Looks like an HTTP client error: ``status_code`` and ``response.headers``."""

    def __init__(self, status: int, headers: dict[str, str] | None = None, text: str = ""):
        super().__init__(text or f"HTTP {status}")
        self.status_code = status
        self.response = SimpleNamespace(status_code=status, headers=headers or {})


def score_of(value: float) -> Fn:
    async def fn(sample: Any, n: int) -> MetricResult:
        return MetricResult(value, "fixed")

    return fn


def by_length(sample: Any, n: int) -> Awaitable[MetricResult]:
    async def run() -> MetricResult:
        return MetricResult(len(sample.user_input) % 7 / 10, "length")

    return run()


class Sleeps:
    """A RetryPolicy sleep that records the waits and does not wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def rows(n: int, **extra: Any) -> list[dict[str, Any]]:
    return [
        {"user_input": f"question number {i}", "response": f"answer {i}", **extra} for i in range(n)
    ]


def test_nan_never_enters_the_mean_and_reasons_are_grouped():
    values = {"a": 0.2, "bb": math.nan, "ccc": 0.6, "dddd": math.nan, "eeeee": 1.0}

    async def fn(sample: Any, n: int) -> MetricResult:
        v = values[sample.user_input]
        return nan("judge refused: no verdict") if math.isnan(v) else MetricResult(v, "ok")

    result = evaluate([{"user_input": q} for q in values], [FnMetric(fn)], cache=False)
    s = result.metrics["fn_metric"]
    assert s.mean == pytest.approx(0.6)
    assert (s.measured, s.total, s.coverage) == (3, 5, pytest.approx(0.6))
    assert s.nan_reasons == [
        {"kind": "judge refused", "count": 2, "example": "judge refused: no verdict"}
    ]
    assert [r.index for r in result.rows] == [0, 1, 2, 3, 4]
    assert result.rows[1].reasons["fn_metric"] == "judge refused: no verdict"


def _malformed_file(path: Path, n: int = 1000) -> dict[int, str]:
    """Write ``n`` lines, many malformed; return index -> expected reason fragment."""
    rng = random.Random(7)
    expected: dict[int, str] = {}
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            kind = rng.choice(
                ["good"] * 5
                + [
                    "missing",
                    "empty",
                    "huge",
                    "not_json",
                    "types",
                    "array",
                    "blank",
                    "int_contexts",
                ]
            )
            good = {
                "user_input": f"What does code E{i} mean?",
                "response": f"E{i} is a jam.",
                "reference": f"E{i} means a jammed brush.",
                "retrieved_contexts": [f"E{i}: the brush is jammed."],
            }
            line = json.dumps(good)
            if kind == "missing":
                line, expected[i] = json.dumps({**good, "response": None}), "response"
            elif kind == "empty":
                line, expected[i] = json.dumps({**good, "user_input": ""}), "user_input"
            elif kind == "huge":
                big = {**good, "retrieved_contexts": ["jam " * 40_000]}
                line, expected[i] = json.dumps(big), "row too large"
            elif kind == "not_json":
                line, expected[i] = '{"user_input": "cut off', "not valid JSON"
            elif kind == "types":
                line, expected[i] = json.dumps({**good, "response": {"x": 1}}), "invalid row"
            elif kind == "array":
                line, expected[i] = json.dumps([good]), "object/dict"
            elif kind == "blank":
                line, expected[i] = "", "empty line"
            elif kind == "int_contexts":
                line, expected[i] = json.dumps({**good, "retrieved_contexts": 5}), "invalid row"
            fh.write(line + "\n")
    return expected


def test_a_thousand_rows_with_many_malformed_finish_and_every_bad_row_is_reported(tmp_path):
    path = tmp_path / "messy.jsonl"
    expected = _malformed_file(path)
    assert 250 < len(expected) < 750
    names = ["exact_match", "rouge_score", "non_llm_string_similarity", "offline_answer_relevancy"]
    result = evaluate(path, names, cache=False, max_row_chars=100_000)
    assert [r.index for r in result.rows] == list(range(1000))
    reported = {b.index: b.reason for b in result.bad_rows}
    # an empty user_input is a value (RAGAS scores it), not a bad row: NaN for one metric
    bad = {i: fragment for i, fragment in expected.items() if fragment != "user_input"}
    assert set(reported) == set(bad)
    for index, fragment in bad.items():
        assert fragment in reported[index], (index, reported[index])
    good = 1000 - len(expected)
    blank_question = sum(1 for f in expected.values() if f == "user_input")  # bad for one metric
    for name, s in result.metrics.items():
        fit = good if name == "offline_answer_relevancy" else good + blank_question
        assert s.measured == fit, name
        assert s.measured + sum(r["count"] for r in s.nan_reasons) == 1000
        assert s.coverage == pytest.approx(fit / 1000)
    assert result.totals["rows"] == 1000


def test_retryable_failures_back_off_exponentially_then_succeed():
    async def fn(sample: Any, n: int) -> MetricResult:
        if n <= 2:
            raise ConnectionError("connection reset by peer")
        return MetricResult(0.5, "ok")

    sleeps = Sleeps()
    metric = FnMetric(fn)
    result = evaluate(rows(1), [metric], cache=False, retry=RetryPolicy(sleep=sleeps))
    assert result.means() == {"fn_metric": 0.5}
    assert metric._calls["question number 0"] == 3
    assert result.totals["retries"] == 2
    assert len(sleeps.waits) == 2
    assert 0.25 <= sleeps.waits[0] <= 0.5 and 0.5 <= sleeps.waits[1] <= 1.0


def test_retry_after_is_honoured():
    async def fn(sample: Any, n: int) -> MetricResult:
        if n == 1:
            raise StatusError(429, {"retry-after": "3"})
        return MetricResult(1.0, "ok")

    sleeps = Sleeps()
    result = evaluate(rows(1), [FnMetric(fn)], cache=False, retry=RetryPolicy(sleep=sleeps))
    assert result["fn_metric"] == [1.0]
    assert sleeps.waits and max(sleeps.waits) >= 3.0


@pytest.mark.parametrize(
    ("exc", "reason"),
    [(StatusError(400), "request rejected (HTTP 400)"), (ValueError("boom"), "ValueError: boom")],
)
def test_other_errors_are_not_retried(exc, reason):
    async def fn(sample: Any, n: int) -> MetricResult:
        raise exc

    metric = FnMetric(fn)
    result = evaluate(rows(1), [metric], cache=False, retry=RetryPolicy(sleep=Sleeps()))
    assert metric._calls["question number 0"] == 1
    assert result.rows[0].reasons["fn_metric"].startswith(reason)


def test_exhausted_retries_report_the_last_failure():
    async def fn(sample: Any, n: int) -> MetricResult:
        raise StatusError(503)

    metric = FnMetric(fn)
    result = evaluate(
        rows(1),
        [metric],
        cache=False,
        max_retries=2,
        retry=RetryPolicy(max_retries=2, sleep=Sleeps()),
    )
    assert metric._calls["question number 0"] == 3
    assert result.rows[0].reasons["fn_metric"] == "server error (HTTP 503)"


def test_a_hung_job_times_out_as_nan_timeout():
    async def fn(sample: Any, n: int) -> MetricResult:
        await asyncio.sleep(30)
        return MetricResult(1.0)

    metric = FnMetric(fn)
    result = evaluate(
        rows(1),
        [metric],
        cache=False,
        timeout=0.05,
        retry=RetryPolicy(max_retries=1, sleep=Sleeps()),
    )
    assert result.rows[0].reasons["fn_metric"] == "timeout"
    assert math.isnan(result.rows[0].values["fn_metric"])
    assert metric._calls["question number 0"] == 2


def test_auth_failure_is_reported_once_and_later_llm_jobs_are_skipped(caplog):
    async def fn(sample: Any, n: int) -> MetricResult:
        await asyncio.sleep(0.01)
        raise StatusError(401, text=f"Incorrect API key provided: {FAKE_KEY}")

    metric = FnMetric(fn, label="judge", llm_like=True)
    result = evaluate(
        rows(30, reference="answer 1"), [metric, "exact_match"], cache=False, max_concurrency=3
    )
    assert sum(metric._calls.values()) <= 3
    assert len(result.errors) == 1 and "authentication failed (HTTP 401)" in result.errors[0]
    kinds = {r["kind"]: r["count"] for r in result.metrics["judge"].nan_reasons}
    assert kinds["skipped: authentication failed"] >= 27
    assert result.metrics["exact_match"].measured == 30  # non-LLM metrics keep going
    text = json.dumps(result.summary()) + json.dumps(result.to_records()) + caplog.text
    assert FAKE_KEY not in text


def test_finished_jobs_are_journaled_and_a_rerun_resumes(tmp_path):
    metric = FnMetric(by_length)
    first = evaluate(rows(10), [metric], cache_dir=tmp_path)
    assert sum(metric._calls.values()) == 10
    again = evaluate(rows(10), [metric], cache_dir=tmp_path)
    assert sum(metric._calls.values()) == 10  # nothing recomputed
    assert again.totals["resumed"] == 10
    assert json.dumps(again.to_records()) == json.dumps(first.to_records())
    evaluate(rows(10), [metric], cache_dir=tmp_path, resume=False)
    assert sum(metric._calls.values()) == 20


def test_an_unusable_cache_folder_is_a_clear_error_and_odd_results_are_nan(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RagloopError, match="--no-cache"):
        evaluate(rows(1), [FnMetric(by_length)], cache_dir=blocker / "cache")

    async def bare(sample: Any, n: int) -> Any:
        return 0.5  # a float, not a MetricResult

    result = evaluate(rows(1), [FnMetric(bare)], cache=False)
    assert "not a MetricResult" in result.rows[0].reasons["fn_metric"]


def test_a_changed_metric_parameter_is_not_resumed(tmp_path):
    one, two = FnMetric(score_of(0.1)), FnMetric(score_of(0.1))
    two.scale = 2  # a new parameter changes the fingerprint
    evaluate(rows(3), [one], cache_dir=tmp_path)
    result = evaluate(rows(3), [two], cache_dir=tmp_path)
    assert result.totals["resumed"] == 0 and sum(two._calls.values()) == 3


def test_transient_failures_are_not_journaled(tmp_path):
    broken = {"on": True}

    async def fn(sample: Any, n: int) -> MetricResult:
        if broken["on"] and sample.user_input.endswith("1"):
            raise StatusError(503)
        return MetricResult(0.3, "ok")

    metric = FnMetric(fn)
    first = evaluate(rows(3), [metric], cache_dir=tmp_path, max_retries=0)
    assert first.metrics["fn_metric"].measured == 2
    broken["on"] = False
    second = evaluate(rows(3), [metric], cache_dir=tmp_path)
    assert second.metrics["fn_metric"].measured == 3
    assert second.totals["resumed"] == 2


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path):
    async def slow(sample: Any, n: int) -> MetricResult:
        await asyncio.sleep(0.01)
        return MetricResult(0.7, "ok")

    metric = FnMetric(slow)

    async def interrupted() -> int:
        reached = asyncio.Event()
        done: list[int] = []

        def progress(d: int, total: int) -> None:
            done.append(d)
            if d >= 10:
                reached.set()

        task = asyncio.create_task(
            aevaluate(rows(40), [metric], cache_dir=tmp_path, max_concurrency=4, progress=progress)
        )
        await reached.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return max(done)

    finished = asyncio.run(interrupted())
    assert 10 <= finished < 40
    calls_before = sum(metric._calls.values())
    result = evaluate(rows(40), [metric], cache_dir=tmp_path)
    assert result.metrics["fn_metric"].measured == 40
    assert result.totals["resumed"] >= finished
    assert sum(metric._calls.values()) - calls_before == 40 - result.totals["resumed"]


def test_offline_variants_stand_in_for_llm_metrics_without_an_llm():
    data = rows(2, reference="answer 0", retrieved_contexts=["answer 0 is here"])
    result = evaluate(
        data,
        ["answer_relevancy", "context_relevance", "nv_context_relevance", "context_recall"],
        cache=False,
    )
    assert list(result.metrics) == [
        "offline_answer_relevancy",
        "offline_context_relevance",
        "offline_context_recall",
    ]
    notes = " ".join(result.notes)
    assert "answer_relevancy ran as offline_answer_relevancy" in notes
    assert "context_recall ran as offline_context_recall" in notes


def test_llm_only_metric_without_an_llm_is_a_clear_error():
    with pytest.raises(RagloopError, match="needs an LLM"):
        evaluate(rows(1), ["faithfulness"], cache=False)
    with pytest.raises(UnknownNameError, match="known metrics"):
        evaluate(rows(1), ["no_such_metric"], cache=False)


def test_default_metrics_follow_the_columns():
    plain = default_metric_names(EvaluationDataset.from_list(rows(2)), has_llm=False)
    assert "offline_answer_relevancy" in plain
    assert not {"offline_context_recall", "rouge_score", "answer_relevancy"} & set(plain)
    full = EvaluationDataset.from_list(rows(2, reference="r", retrieved_contexts=["c"]))
    names = default_metric_names(full, has_llm=False)
    assert {"offline_context_recall", "offline_context_relevance", "rouge_score"} <= set(names)
    assert default_metric_names(full, has_llm=True)[:3] == [
        "answer_relevancy",
        "nv_context_relevance",
        "context_recall",
    ]


def test_write_gives_a_row_per_input_and_strict_json(tmp_path):
    data = [*rows(3, reference="answer 1"), "not a row"]
    result = evaluate(data, ["exact_match"], cache=False)
    rows_path, summary_path = result.write(tmp_path / "out")
    lines = [json.loads(x) for x in rows_path.read_text().splitlines()]
    assert [x["index"] for x in lines] == [0, 1, 2, 3]
    assert lines[1]["exact_match"] == 1.0 and lines[3]["exact_match"] is None
    assert lines[3]["exact_match.reason"].startswith("bad row:")

    def reject(token: str) -> None:
        raise AssertionError(f"non-standard JSON token {token}")

    summary = json.loads(summary_path.read_text(), parse_constant=reject)
    assert summary["metrics"]["exact_match"]["measured"] == 3
    assert summary["metrics"]["exact_match"]["mean"] == pytest.approx(1 / 3)
    assert summary["bad_rows"]["count"] == 1 and summary["bad_rows"]["rows"][0]["index"] == 3


def test_evaluate_works_inside_a_running_event_loop():
    async def notebook_cell() -> Any:
        return evaluate(rows(2, reference="answer 0"), ["exact_match"], cache=False)

    assert asyncio.run(notebook_cell()).means() == {"exact_match": 0.5}


def test_progress_is_reported_for_every_job():
    seen: list[tuple[int, int]] = []
    evaluate(rows(5), [FnMetric(by_length)], cache=False, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, 5) and seen[-1] == (5, 5) and len(seen) == 6


def test_multi_turn_rows_and_duplicate_metrics_are_handled():
    data = [{"user_input": [{"type": "human", "content": "hi"}]}, {"user_input": "plain"}]
    result = evaluate(data, [FnMetric(by_length), FnMetric(by_length)], cache=False)
    assert list(result.metrics) == ["fn_metric", "fn_metric_2"]
    assert result.bad_rows[0].index == 0 and "single-turn" in result.bad_rows[0].reason
    assert result.metrics["fn_metric_2"].measured == 1


def test_embedding_calls_are_cached_on_disk(tmp_path):
    emb = HashEmbeddings()
    metric = get_metric("semantic_similarity", embeddings=emb)
    data = rows(4, reference="an answer")
    first = evaluate(data, [metric], cache_dir=tmp_path)
    calls = emb.calls
    assert calls > 0 and first.totals["embedding_calls"] > 0
    second = evaluate(data, [metric], cache_dir=tmp_path, resume=False)
    assert emb.calls == calls and second.totals["embedding_calls"] == 0
    assert second.totals["embedding_cache_hits"] > 0
    assert second.means() == first.means()


def test_llm_metrics_count_calls_and_read_the_cache_in_process(tmp_path):
    reply = {"classifications": [{"statement": "s", "reason": "r", "attributed": True}]}
    llm = ScriptedChatModel(script=[reply])
    data = rows(3, reference="answer 0", retrieved_contexts=["answer 0"])
    first = evaluate(data, ["context_recall"], llm, cache_dir=tmp_path)
    assert first.means() == {"context_recall": 1.0}
    assert len(llm.calls) == 3 and first.totals["llm_calls"] == 3
    assert first.totals["input_tokens"] == 30  # ScriptedChatModel reports 10 per call
    again = evaluate(data, ["context_recall"], llm, cache_dir=tmp_path, resume=False)
    assert len(llm.calls) == 3 and again.totals["cache_hits"] == 3
    assert again.means() == first.means()


def test_the_store_runs_in_wal_mode(tmp_path):
    store = Store(tmp_path)
    store.put("x", "k", b"v")
    assert store.get("x", "k") == b"v"
    store.close()
    mode = sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


cells = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.integers(),
    st.lists(st.text(max_size=10)),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
row_strategy = st.one_of(
    st.dictionaries(
        st.sampled_from(
            [
                "user_input",
                "response",
                "reference",
                "retrieved_contexts",
                "question",
                "answer",
                "contexts",
                "extra",
            ]
        ),
        cells,
    ),
    cells,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(row_strategy, max_size=12))
def test_any_rows_finish_and_every_row_is_accounted_for(data):
    result = evaluate(data, ["exact_match", "string_present", FnMetric(by_length)], cache=False)
    assert [r.index for r in result.rows] == list(range(len(data)))
    for s in result.metrics.values():
        assert s.measured + sum(r["count"] for r in s.nan_reasons) == len(data)
        assert s.measured == 0 or 0.0 <= s.mean <= 1.0
    unmeasured = {r.index for r in result.rows if any(math.isnan(v) for v in r.values.values())}
    reported = {b.index for b in result.bad_rows}
    assert reported <= unmeasured
