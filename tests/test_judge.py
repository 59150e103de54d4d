"""The judge helper: JSON extraction, one repair, counters, temperature, errors that propagate."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from ragloop.eval.judge import Judge, Prompt, json_candidates, parse_reply
from tests.fakes.chat import ScriptedChatModel


class Rating(BaseModel):
    rating: int = Field(ge=0, le=2)
    reason: str = ""


class Items(BaseModel):
    items: list[str]


PROMPT = Prompt(
    name="test.rating",
    instruction="Rate the text from 0 to 2.",
    examples=[({"text": "good"}, {"rating": 2, "reason": "fine"})],
)


def ask(llm: BaseChatModel, model: type[BaseModel] = Rating, **kwargs: Any):
    judge = Judge(llm)
    return judge, asyncio.run(judge.ask(PROMPT, {"text": "héllo ✓ 日本"}, model, **kwargs))


def test_prompt_renders_instruction_schema_examples_and_input():
    system, human = PROMPT.render({"text": "héllo ✓"}, Rating)
    assert system.content.startswith("Rate the text from 0 to 2.")
    schema = json.dumps(Rating.model_json_schema(), ensure_ascii=False)
    assert schema in system.content
    assert '"good"' in human.content and '"rating": 2' in human.content
    assert human.content.rstrip().endswith("Output:")
    assert "héllo ✓" in human.content  # unicode kept, not escaped


def test_plain_json_reply_is_validated():
    judge, res = ask(ScriptedChatModel(script=['{"rating": 1, "reason": "ok"}']))
    assert res.ok and res.output == Rating(rating=1, reason="ok")
    assert res.error is None and res.calls == 1


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"rating": 2}\n```',
        '```\n{"rating": 2}\n```',
        'Sure! Here is my rating:\n```json\n{"rating": 2}\n```\nHope that helps.',
        'My verdict is {"rating": 2} and that is final.',
        '<think>maybe {"rating": 0}? no.</think>{"rating": 2}',
    ],
)
def test_fenced_or_wrapped_json_is_accepted_without_repair(reply):
    llm = ScriptedChatModel(script=[reply])
    _, res = ask(llm)
    assert res.ok and res.output.rating == 2
    assert len(llm.calls) == 1


def test_first_json_value_that_fits_the_schema_wins():
    text = 'I considered {"score": 9} but settled on {"rating": 1}.'
    output, error = parse_reply(text, Rating)
    assert output == Rating(rating=1) and error is None


def test_bare_list_fills_a_single_list_field():
    _, res = ask(ScriptedChatModel(script=['["a", "b"]']), Items)
    assert res.output == Items(items=["a", "b"])


def test_json_candidates_skips_values_nested_in_earlier_ones():
    assert json_candidates('{"a": {"b": 1}} then [2]') == [{"a": {"b": 1}}, [2]]


def test_one_repair_fixes_a_bad_reply():
    llm = ScriptedChatModel(script=['{"rating": 7}', '{"rating": 1}'])
    judge, res = ask(llm)
    assert res.ok and res.output.rating == 1
    assert res.calls == 2 and judge.calls == 2
    repair = llm.calls[1]
    assert isinstance(repair[-2], AIMessage) and repair[-2].content == '{"rating": 7}'
    assert "rating" in repair[-1].content and "less than or equal to 2" in repair[-1].content


def test_second_failure_gives_no_output_and_the_parse_error():
    llm = ScriptedChatModel(script=["I'd rather not say.", '{"rating": "high"}'])
    _, res = ask(llm)
    assert res.output is None and not res.ok
    assert res.calls == 2 and len(llm.calls) == 2  # exactly one repair, never more
    assert "test.rating" in res.error and "rating" in res.error
    assert res.replies == ["I'd rather not say.", '{"rating": "high"}']


def test_no_json_at_all_is_reported():
    _, res = ask(ScriptedChatModel(script=["nothing here"]))
    assert res.output is None and "no JSON" in res.error


def test_check_failure_triggers_the_repair():
    def two_items(output: Items) -> None:
        if len(output.items) != 2:
            raise ValueError("need 2 items")

    llm = ScriptedChatModel(script=['{"items": ["a"]}', '{"items": ["a", "b"]}'])
    _, res = ask(llm, Items, check=two_items)
    assert res.ok and res.output.items == ["a", "b"] and res.calls == 2
    assert "need 2 items" in llm.calls[1][-1].content


def test_network_errors_propagate_without_repair():
    def boom(messages: list[BaseMessage]) -> str:
        raise ConnectionError("server unreachable")

    llm = ScriptedChatModel(script=[boom])
    with pytest.raises(ConnectionError):
        ask(llm)
    assert len(llm.calls) == 1


class SlowModel(BaseChatModel):
    """Never answers in time; cancellable."""

    @property
    def _llm_type(self) -> str:
        return "slow"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        raise NotImplementedError

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        await asyncio.sleep(30)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="{}"))])


def test_timeout_propagates():
    judge = Judge(SlowModel(), timeout=0.01)
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(judge.ask(PROMPT, {"text": "x"}, Rating))
    assert judge.calls == 0


def test_counters_add_calls_and_tokens_across_concurrent_asks():
    llm = ScriptedChatModel(script=['{"rating": 2}'], tokens_per_call=7)
    judge = Judge(llm)

    async def many() -> list:
        return await asyncio.gather(
            *(judge.ask(PROMPT, {"text": str(i)}, Rating) for i in range(25))
        )

    results = asyncio.run(many())
    assert all(r.ok for r in results)
    assert judge.calls == 25 and len(llm.calls) == 25
    assert judge.input_tokens == 25 * 7 and judge.output_tokens == 25 * 7
    assert judge.usage() == {"calls": 25, "input_tokens": 175, "output_tokens": 175}


def test_repair_tokens_are_counted_on_result_and_judge():
    llm = ScriptedChatModel(script=["oops", '{"rating": 0}'], tokens_per_call=5)
    judge, res = ask(llm)
    assert (res.input_tokens, res.output_tokens) == (10, 10)
    assert (judge.input_tokens, judge.output_tokens) == (10, 10)


def test_temperature_is_bound_to_zero_on_models_that_have_one():
    llm = ChatOpenAI(model="gpt-4o-mini", api_key="sk-test", temperature=0.7)
    judge = Judge(llm)
    assert judge.llm.temperature == 0.0
    assert llm.temperature == 0.7  # the caller's model is left alone
    assert Judge(llm, temperature=0.3).llm.temperature == 0.3


@pytest.mark.parametrize("model", ["o3-mini", "gpt-5-mini"])
def test_reasoning_models_keep_their_default_temperature(model):
    llm = ChatOpenAI(model=model, api_key="sk-test")
    assert Judge(llm).llm is llm


def test_models_without_temperature_are_used_as_they_are():
    llm = ScriptedChatModel(script=['{"rating": 1}'])
    assert Judge(llm).llm is llm
