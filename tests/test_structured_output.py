"""Native structured output first, prompt + parse + repair as the recorded fallback."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ragloop._async import run_sync
from ragloop.errors import ConfigError
from ragloop.eval.judge import Judge, Prompt
from ragloop.eval.prompt import builtin_names, load_prompt
from tests.fakes.fixtures import fake_chat_model
from tests.fakes.openai_server import FakeOpenAIServer


class Verdict(BaseModel):
    verdict: bool
    reason: str


PROMPT = Prompt(
    name="t",
    instruction="Say whether it holds.",
    examples=[({"claim": "x"}, {"verdict": True, "reason": "example"})],
)
REPLY = {"verdict": True, "reason": "it holds"}


def _ask(judge: Judge):
    return run_sync(judge.ask(PROMPT, {"claim": "c"}, Verdict))


def test_a_local_server_is_asked_for_json_object_with_the_schema():
    with FakeOpenAIServer(REPLY) as server:
        result = _ask(Judge(fake_chat_model(server)))
        body = server.chat_requests()[0].body
    assert result.ok and result.method == "json_object" and result.fallback is None
    assert body["response_format"]["type"] == "json_object"
    assert body["response_format"]["schema"]["required"] == ["verdict", "reason"]


def test_json_schema_carries_a_named_schema():
    with FakeOpenAIServer(REPLY) as server:
        result = _ask(Judge(fake_chat_model(server), structured="json_schema"))
        body = server.chat_requests()[0].body
    assert result.method == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Verdict"
    assert "verdict" in body["response_format"]["json_schema"]["schema"]["properties"]


@pytest.mark.parametrize("status", [400, 422])
def test_a_server_that_refuses_it_gets_the_prompt_and_the_fallback_is_recorded(status):
    with FakeOpenAIServer(REPLY, response_formats=(), unsupported_status=status) as server:
        judge = Judge(fake_chat_model(server))
        first, second = _ask(judge), _ask(judge)
        bodies = [r.body for r in server.chat_requests()]
    assert first.ok and first.method == "prompt" and f"HTTP {status}" in first.fallback
    assert second.ok and second.method == "prompt" and second.fallback == first.fallback
    # refused once, then straight to the prompt: 3 requests for 2 asks
    assert ["response_format" in b for b in bodies] == [True, False, False]
    # a local server's (compact) prompt describes the reply by its shape, not the whole schema
    assert '{"verdict": <true|false>, "reason": <string>}' in bodies[1]["messages"][0]["content"]


def test_a_bad_native_reply_is_repaired_by_the_same_method():
    with FakeOpenAIServer() as server:
        server.script("no json here", REPLY)
        result = _ask(Judge(fake_chat_model(server)))
        bodies = [r.body for r in server.chat_requests()]
    assert result.ok and result.method == "json_object" and result.calls == 2
    assert all(b["response_format"]["type"] == "json_object" for b in bodies)


def test_compact_prompts_leave_out_the_examples_and_show_the_reply_shape():
    with FakeOpenAIServer(REPLY) as server:
        _ask(Judge(fake_chat_model(server), compact=True))
        _ask(Judge(fake_chat_model(server), compact=False))
        _ask(Judge(fake_chat_model(server)))  # a server on 127.0.0.1: compact by default
        compact, full, default = (r.body["messages"] for r in server.chat_requests())
    assert "Example input" not in compact[1]["content"] and "Example input" in full[1]["content"]
    # vLLM/Ollama's json_object ignore a schema: the prompt still names every key and kind,
    # in a line, not the schema's ~300 characters of titles and $defs
    assert '{"verdict": <true|false>, "reason": <string>}' in compact[0]["content"]
    assert "JSON schema" in full[0]["content"] and "JSON schema" not in compact[0]["content"]
    assert len(compact[0]["content"]) < len(full[0]["content"])
    assert default == compact


def test_a_scripted_model_without_response_format_uses_the_prompt():
    from tests.fakes.chat import ScriptedChatModel

    judge = Judge(ScriptedChatModel(script=[REPLY]))
    result = _ask(judge)
    assert result.ok and result.method == "prompt" and "takes no response_format" in judge.refused


# -- the graph's judge: keyed by id --------------------------------------------------------


def test_grades_and_claims_are_read_by_id_not_position(wordllama):
    from ragloop.nodes.llm import LLMStrategies
    from ragloop.nodes.offline import OfflineStrategies
    from tests.fakes.chat import ScriptedChatModel

    reply = {  # listed out of order: the ids decide
        "grades": [{"id": "c3", "grade": 0}, {"id": "c1", "grade": 2}, {"id": "c2", "grade": 1}],
        "claims": [{"id": "k2", "supported": False}, {"id": "k1", "supported": True}],
    }
    llm = ScriptedChatModel(script=[reply])
    strategies = LLMStrategies(llm, wordllama, OfflineStrategies(wordllama, None))
    out = run_sync(strategies.assess("q", ["a", "b", "c"], [], ["one", "two"], 1))
    assert out.grades == [2, 1, 0] and out.supported == [True, False]
    prompt = "\n".join(str(m.content) for m in llm.calls[0])
    assert 'id=\\"c1\\"' in prompt and '"id": "k2"' in prompt


def test_the_draft_records_a_refused_native_method_in_the_path(fixture_index, wordllama):
    from tests.test_graph_llm import QUESTION, _pipeline, respond

    with FakeOpenAIServer(response_formats=()) as server:
        server.default.reply = respond
        result = _pipeline(server, fixture_index, wordllama).run(QUESTION)
    fallbacks = [s for s in result.steps if s["node"] == "draft-fallback"]
    assert fallbacks and "refused response_format json_object" in fallbacks[0]["detail"]
    assert result.answer == "A replacement card costs a small fee [1]."


# -- prompts as data -----------------------------------------------------------------------


def test_builtin_prompts_are_data_and_name_no_domain():
    names = builtin_names()
    assert {"draft", "assess", "rewrite", "answer", "testset.question"} <= set(names)
    for name in names:
        text = load_prompt(name).instruction.lower()
        assert "product knowledge base" not in text and "dishwasher" not in text


def test_a_prompt_is_overridden_by_name_from_a_folder(tmp_path):
    (tmp_path / "rewrite.toml").write_text(
        'name = "rewrite"\ninstruction = "Rewrite the query for a legal archive."\n'
    )
    assert load_prompt("rewrite", tmp_path).instruction.startswith("Rewrite the query for a legal")
    assert load_prompt("draft", tmp_path).instruction == load_prompt("draft").instruction


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("name = ", "not valid TOML"),
        ('name = "draft"\n', "needs text keys"),
        ('name = "draft"\ninstruction = "x"\ncode = "import os"\n', "unknown keys code"),
        ('name = "draft"\ninstruction = "x"\n[[examples]]\ninput = 1\n', "examples[0]"),
    ],
)
def test_a_bad_prompt_file_is_an_error_naming_it(tmp_path, text, words):
    (tmp_path / "draft.toml").write_text(text)
    with pytest.raises(ConfigError, match="draft.toml") as raised:
        load_prompt("draft", tmp_path)
    assert words in str(raised.value)


def test_an_unknown_prompt_name_lists_the_known_ones():
    with pytest.raises(ConfigError, match="assess"):
        load_prompt("nope")
