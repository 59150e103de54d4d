"""The runner over real HTTP: ChatOpenAI against the fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import math
import time
from typing import Any

import httpx
import openai
import pytest
from pydantic import BaseModel, Field

from ragloop.eval.judge import Judge, Prompt
from ragloop.eval.metrics._llm import LLMMetric, failed
from ragloop.eval.metrics.base import MetricResult, get_metric
from ragloop.eval.metrics.context_llm import RECALL_PROMPT
from ragloop.eval.runner import aevaluate, evaluate
from ragloop.llm.reply_cap import CappedChatOpenAI
from ragloop.llm.retry import RetryPolicy, classify, redact, retry_after
from ragloop.providers import get_embeddings
from tests.fakes.fixtures import FAKE_KEY, fake_chat_model, openai_server  # noqa: F401
from tests.fakes.openai_server import Behaviour, error, hang, messages_text, reply


class Rating(BaseModel):
    score: float = Field(ge=0.0, le=1.0)


RATE = Prompt(name="test.rate", instruction="Rate from 0 to 1 how well the response answers.")


class OneCall(LLMMetric):
    """A one-call judge metric (two calls only when the reply needs its one repair)."""

    required_columns = ("user_input", "response")
    prompts = {"rate": RATE}  # noqa: RUF012

    async def _single_turn_ascore(self, sample: Any) -> MetricResult:
        res = await self.ask("rate", {"q": sample.user_input, "r": sample.response}, Rating)
        return MetricResult(res.output.score, "rated") if res.ok else failed(res)


OneCall.name = "one_call"  # set after creation so this test metric stays out of the registry


def graded(body: dict[str, Any]) -> dict[str, Any]:
    """A deterministic reply per request: attributions for context_recall, else a score."""
    digest = hashlib.sha256(messages_text(body).encode()).digest()
    if body["messages"][0]["content"].startswith(RECALL_PROMPT.instruction):
        return {
            "classifications": [
                {"statement": "s", "reason": "r", "attributed": True},
                {"statement": "t", "reason": "r", "attributed": digest[0] > 99},
            ]
        }
    return {"score": digest[0] / 255}


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def rows(n: int, tag: str = "") -> list[dict[str, Any]]:
    return [
        {
            "user_input": f"question {tag}{i}?",
            "response": f"answer {i}",
            "reference": f"answer {i}",
            "retrieved_contexts": [f"context {i}"],
        }
        for i in range(n)
    ]


def test_429_with_retry_after_is_retried_and_succeeds(openai_server):  # noqa: F811
    openai_server.script(error(429, headers={"Retry-After": "1"}), reply({"score": 0.8}))
    sleeps = Sleeps()
    metric = OneCall(llm=fake_chat_model(openai_server))
    result = evaluate(rows(1), [metric], cache=False, retry=RetryPolicy(sleep=sleeps))
    assert result.means()["one_call"] == pytest.approx(0.8)
    assert openai_server.count() == 2
    assert max(sleeps.waits) >= 1.0
    assert result.totals["retries"] == 1 and result.totals["llm_calls"] == 2


def test_5xx_is_retried(openai_server):  # noqa: F811
    openai_server.default = reply({"score": 0.4})
    openai_server.script(error(503), error(502))
    result = evaluate(
        rows(1),
        [OneCall(llm=fake_chat_model(openai_server))],
        cache=False,
        retry=RetryPolicy(sleep=Sleeps()),
    )
    assert result.means()["one_call"] == pytest.approx(0.4) and openai_server.count() == 3


def test_401_is_not_retried_and_the_key_never_leaks(openai_server, tmp_path, caplog):  # noqa: F811
    openai_server.default = error(401, lambda body, headers: f"bad key {headers['authorization']}")
    llm = fake_chat_model(openai_server)
    result = evaluate(rows(1), [OneCall(llm=llm)], cache=False)
    assert openai_server.count() == 1
    reason = result.rows[0].reasons["one_call"]
    assert reason.startswith("authentication failed (HTTP 401)")
    many = evaluate(rows(12, "b"), [OneCall(llm=llm)], cache=False, max_concurrency=3)
    assert openai_server.count() <= 1 + 3
    assert len(many.errors) == 1
    kinds = {r["kind"]: r["count"] for r in many.metrics["one_call"].nan_reasons}
    assert kinds["skipped: authentication failed"] >= 9
    rows_path, summary_path = many.write(tmp_path)
    seen = (
        json.dumps(result.summary())
        + json.dumps(many.to_records())
        + caplog.text
        + rows_path.read_text()
        + summary_path.read_text()
    )
    assert FAKE_KEY not in seen
    assert FAKE_KEY in openai_server.requests[0].headers["authorization"]  # it was sent


def test_a_hung_call_times_out_as_nan_timeout(openai_server):  # noqa: F811
    openai_server.script(hang(30))
    result = evaluate(
        rows(1),
        [OneCall(llm=fake_chat_model(openai_server))],
        cache=False,
        timeout=0.3,
        max_retries=0,
    )
    assert math.isnan(result.rows[0].values["one_call"])
    assert result.rows[0].reasons["one_call"] == "timeout"
    assert openai_server.count() == 1


def test_malformed_json_becomes_nan_after_exactly_one_repair(openai_server):  # noqa: F811
    openai_server.default = reply("Sure! I would rate it quite highly.")
    result = evaluate(rows(1), [OneCall(llm=fake_chat_model(openai_server))], cache=False)
    reason = result.rows[0].reasons["one_call"]
    assert math.isnan(result.rows[0].values["one_call"])
    assert "after one repair" in reason and "no JSON object found" in reason
    assert openai_server.count() == 2


def test_a_malformed_http_body_is_reported_not_fatal(openai_server):  # noqa: F811
    openai_server.default = Behaviour(raw=b"<html>gateway hiccup</html>")
    result = evaluate(
        rows(2),
        [OneCall(llm=fake_chat_model(openai_server))],
        cache=False,
        retry=RetryPolicy(sleep=Sleeps()),
    )
    assert result.metrics["one_call"].measured == 0
    assert all(r.reasons["one_call"].startswith("malformed response") for r in result.rows)
    assert openai_server.count() == 2  # not retried


def test_a_warm_rerun_makes_no_request_and_gives_identical_scores(openai_server, tmp_path):  # noqa: F811
    openai_server.default = reply(graded)
    llm = fake_chat_model(openai_server)
    data = rows(8)
    cold = evaluate(data, [OneCall(llm=llm), "context_recall"], llm, cache_dir=tmp_path)
    sent = openai_server.count()
    assert sent >= 8 and cold.totals["llm_calls"] == sent
    warm = evaluate(
        data, [OneCall(llm=llm), "context_recall"], llm, cache_dir=tmp_path, resume=False
    )  # the LLM cache alone, not the journal
    assert openai_server.count() == sent
    assert warm.totals["llm_calls"] == 0 and warm.totals["cache_hits"] == sent
    assert cold.metrics["context_recall"].measured == 8
    assert same(warm.to_records(), cold.to_records())
    resumed = evaluate(data, [OneCall(llm=llm), "context_recall"], llm, cache_dir=tmp_path)
    assert openai_server.count() == sent and resumed.totals["resumed"] == 16
    assert same(resumed.to_records(), cold.to_records())
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert FAKE_KEY.encode() not in stored


def test_the_cache_key_follows_the_judge_temperature(openai_server, tmp_path):  # noqa: F811
    openai_server.default = reply({"score": 0.5})
    llm = fake_chat_model(openai_server)
    evaluate(rows(3), [OneCall(llm=llm)], cache_dir=tmp_path)
    assert openai_server.count() == 3
    warm = OneCall(judge=Judge(llm, temperature=0.7))
    evaluate(rows(3), [warm], cache_dir=tmp_path, resume=False)
    assert openai_server.count() == 6
    assert [r.body["temperature"] for r in openai_server.chat_requests()[3:]] == [0.7] * 3


def test_an_interrupted_run_resumes_and_sends_only_the_missing_requests(openai_server, tmp_path):  # noqa: F811
    openai_server.default = reply(graded)
    openai_server.delay = 0.02
    llm = fake_chat_model(openai_server)

    async def interrupted() -> None:
        reached = asyncio.Event()
        task = asyncio.create_task(
            aevaluate(
                rows(24),
                [OneCall(llm=llm)],
                cache_dir=tmp_path,
                max_concurrency=4,
                progress=lambda done, total: reached.set() if done >= 8 else None,
            )
        )
        await reached.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    first = openai_server.count()
    assert 8 <= first < 24
    # Requests the cancelled run had already written may reach the server after `first` was
    # read (under load they did: 17 == 16), so the resumed run's requests are told apart by a
    # header that is not part of any cache or journal key, never by counting before/after.
    resumed_llm = CappedChatOpenAI(  # what fake_chat_model builds, plus a header
        model="fake-model",
        api_key=FAKE_KEY,
        base_url=openai_server.url,
        timeout=60.0,
        max_retries=0,
        temperature=0.0,
        send_max_tokens=True,
        default_headers={"x-ragloop-test-run": "resumed"},
    )
    result = evaluate(rows(24), [OneCall(llm=resumed_llm)], cache_dir=tmp_path, max_concurrency=4)
    again = sum(
        1 for r in openai_server.chat_requests() if r.headers.get("x-ragloop-test-run") == "resumed"
    )
    assert result.metrics["one_call"].measured == 24
    assert result.totals["resumed"] >= 8
    assert (
        again
        == result.totals["llm_calls"]
        == 24 - result.totals["resumed"] - result.totals["cache_hits"]
    )


def test_the_same_model_works_across_event_loops(openai_server):  # noqa: F811
    openai_server.default = reply({"score": 0.9})
    llm = fake_chat_model(openai_server)
    first = evaluate(rows(2, "a"), [OneCall(llm=llm)], cache=False)
    second = evaluate(rows(2, "b"), [OneCall(llm=llm)], cache=False)  # a new loop, same client
    assert first["one_call"] == second["one_call"] == pytest.approx([0.9, 0.9])


def test_openai_embeddings_over_http_are_cached(openai_server, tmp_path):  # noqa: F811
    emb = get_embeddings("openai:fake-embed", env=openai_server.env(FAKE_KEY))
    data = rows(4)
    first = evaluate(data, [get_metric("semantic_similarity", embeddings=emb)], cache_dir=tmp_path)
    sent = openai_server.count("/v1/embeddings")
    assert sent > 0 and first.metrics["semantic_similarity"].measured == 4
    second = evaluate(
        data, [get_metric("semantic_similarity", embeddings=emb)], cache_dir=tmp_path, resume=False
    )
    assert openai_server.count("/v1/embeddings") == sent
    assert second.means() == first.means()


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return httpx.Response(status, headers=headers or {}, request=request)


def test_openai_errors_are_classified_for_retry():
    req = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    limited = openai.RateLimitError(
        "slow down", response=_response(429, {"retry-after": "2"}), body=None
    )
    assert (classify(limited).kind, classify(limited).retry_after) == ("rate_limited", 2.0)
    auth = openai.AuthenticationError(
        f"key {FAKE_KEY} rejected",
        response=_response(401),
        body={"message": f"Incorrect API key provided: {FAKE_KEY}"},
    )
    failure = classify(auth)
    assert failure.kind == "auth" and not failure.retryable and FAKE_KEY not in failure.reason
    assert classify(openai.InternalServerError("x", response=_response(500), body=None)).retryable
    bad = classify(openai.BadRequestError("too long", response=_response(400), body=None))
    assert bad.kind == "client_error" and not bad.retryable
    assert classify(openai.APITimeoutError(request=req)).reason == "timeout"
    assert classify(openai.APIConnectionError(request=req)).kind == "connection"
    assert classify(httpx.ConnectError("refused")).retryable


def test_retry_after_forms_and_redaction():
    assert (
        retry_after(
            openai.RateLimitError(
                "x", response=_response(429, {"retry-after-ms": "250"}), body=None
            )
        )
        == 0.25
    )
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    waited = retry_after(
        openai.RateLimitError("x", response=_response(429, {"retry-after": later}), body=None)
    )
    assert waited is not None and 25 <= waited <= 31
    text = redact(f"Authorization: Bearer {FAKE_KEY} and api_key={FAKE_KEY} sk-abcdef123456")
    assert FAKE_KEY not in text and "sk-abcdef123456" not in text
