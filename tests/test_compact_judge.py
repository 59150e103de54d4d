"""The local profile's compact judge and its round limit: small prompts, replies keyed by id."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloop._async import run_sync
from ragloop.config import Context, load_settings
from ragloop.llm.profile import PROFILES, ClientConfig, resolve
from ragloop.nodes import prompts
from ragloop.nodes.answer_cache import AnswerCache
from ragloop.nodes.base import Deps
from ragloop.nodes.llm import LLMStrategies, compact_assess_model
from ragloop.nodes.offline import OfflineStrategies
from ragloop.pipeline import Pipeline
from ragloop.retrievers.registry import get_retriever
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.embeddings import HashEmbeddings
from tests.fakes.fixtures import fake_chat_model
from tests.fakes.judge import compact_reply
from tests.fakes.openai_server import FakeOpenAIServer

LOCAL = PROFILES["local"]
EMB = HashEmbeddings()


def _strategies(llm, client: ClientConfig = LOCAL) -> LLMStrategies:
    return LLMStrategies(llm, EMB, OfflineStrategies(EMB, None), client=client)


def _prompt_chars(llm: ScriptedChatModel) -> int:
    return sum(len(str(m.content)) for m in llm.calls[0])


def test_the_compact_judge_reads_one_key_per_id_with_kept_contexts_first():
    reply = {"c1": 2, "c2": 0, "c3": "2", "k1": True, "k2": False}  # "2": a small model's text
    llm = ScriptedChatModel(script=[reply])
    out = run_sync(_strategies(llm).assess("q?", ["new a", "new b"], ["kept"], ["one", "two"], 1))
    # c1 is the kept context (shown for the claims, its grade unused); c2, c3 are the new ones
    assert out.grades == [0, 2] and out.supported == [True, False] and out.fallback is None
    human = str(llm.calls[0][1].content)
    assert human.index('id="c1"') < human.index("kept") < human.index('id="c2"')
    assert "k2: two" in human and '\\"' not in human  # plain text: no JSON escaping


def test_a_compact_reply_missing_an_id_is_repaired_then_graded_offline():
    llm = ScriptedChatModel(script=[{"c1": 2}, {"c1": 2, "c2": 1}])  # k1 missing twice
    out = run_sync(_strategies(llm).assess("q?", ["a", "b"], [], ["one"], 1))
    assert len(llm.calls) == 2  # the one repair
    assert "k1" in out.fallback and "graded by the offline judge instead" in out.fallback


def test_the_schema_a_server_constrains_the_reply_with_requires_every_id():
    schema = compact_assess_model(3, 2).model_json_schema()
    assert schema["required"] == ["c1", "c2", "c3", "k1", "k2"]
    assert schema["properties"]["c2"]["enum"] == [0, 1, 2]
    assert schema["properties"]["k1"]["type"] == "boolean" and "$defs" not in schema
    with FakeOpenAIServer({"c1": 1, "k1": True}) as server:
        out = run_sync(_strategies(fake_chat_model(server)).assess("q?", ["a"], [], ["x"], 1))
        body = server.chat_requests()[0].body
    assert out.grades == [1] and out.supported == [True]
    assert body["response_format"]["type"] == "json_object"
    assert body["response_format"]["schema"]["required"] == ["c1", "k1"]


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=1200)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    new=st.lists(_TEXT, min_size=1, max_size=8),
    kept=st.lists(_TEXT, max_size=4),
    claims=st.lists(st.text(min_size=1, max_size=120), min_size=1, max_size=3),
)
def test_the_compact_judge_prompt_is_bounded_and_smaller_than_the_full_one(new, kept, claims):
    question = "How do I clear DK-04 on the Kestrel Dock?"
    compact = ScriptedChatModel(script=["{}"] * 2)  # unusable: the size is what is tested
    full = ScriptedChatModel(script=["{}"] * 2)
    run_sync(_strategies(compact).assess(question, new, kept, claims, 1))
    run_sync(_strategies(full, ClientConfig()).assess(question, new, kept, claims, 1))
    shown = len(new) + len(kept)
    # each context costs at most its trimmed opening plus its tags and its key in the shape
    per_context = prompts.COMPACT_CONTEXT_CHARS + 60
    bound = 600 + len(question) + shown * per_context + sum(len(c) + 30 for c in claims)
    assert _prompt_chars(compact) <= bound
    assert _prompt_chars(compact) < _prompt_chars(full)
    human = str(compact.calls[0][1].content)
    assert re.findall(r'<context id="(c\d+)"', human) == [f"c{n}" for n in range(1, shown + 1)]


def test_the_local_profile_runs_one_correction_round_unless_the_user_sets_more():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_API_KEY": "local"}
    local = load_settings(llm="openai:smollm2")
    assert LOCAL.rounds < PROFILES["remote"].rounds
    assert Context.from_settings(local, env).max_iterations == LOCAL.rounds
    assert Context.from_settings(local, {}).max_iterations == PROFILES["remote"].rounds
    assert Context.from_settings(load_settings(), env).max_iterations == 3  # offline: remote
    chosen = load_settings(llm="openai:smollm2", max_iterations=3)
    assert Context.from_settings(chosen, env).max_iterations == 3  # the user's value stays
    assert Context.from_settings(local, env, max_iterations=2).max_iterations == 2


def _never_enough(body: dict):
    """A local model whose judge grades nothing relevant (as SmolLM2-135M did)."""
    system, human = body["messages"][0]["content"], body["messages"][-1]["content"]
    if system.startswith(prompts.DRAFT.instruction.strip()):
        return {"answer": "I am not sure.", "noncommittal": True, "needs_retrieval": True}
    if system.startswith(prompts.prompts_for(None)["assess.compact"].instruction.strip()):
        return compact_reply(human, 0, False)
    if system.startswith(prompts.REWRITE.instruction.strip()):
        return {"query": "replacement card fee"}
    if system.startswith(prompts.ANSWER_SYSTEM):
        return "I could not find it."
    return {"questions": [{"question": "What?", "noncommittal": True}] * 3}


def test_the_round_limit_reaches_the_graph(fixture_index, wordllama):
    with FakeOpenAIServer() as server:
        server.default.reply = _never_enough
        env = server.env()
        settings = load_settings(llm="openai:fake-model")
        client = resolve(settings.llm, env)
        llm = fake_chat_model(server)
        offline = OfflineStrategies(wordllama, AnswerCache(wordllama))
        retrievers = {
            n: get_retriever(n, fixture_index, k=3) for n in ("dense", "sparse", "hybrid")
        }
        strategies = LLMStrategies(llm, wordllama, offline, client=client)
        deps = Deps(strategies=strategies, retrievers=retrievers)
        result = Pipeline(deps, Context.from_settings(settings, env)).run("replacement card?")
        judged = [s for s in result.steps if s["node"] == "judge"]
    assert client.profile == "local" and client.compact
    assert result.stop_reason == "max_iterations" and result.iterations == LOCAL.rounds
    assert len(judged) == LOCAL.rounds + 1  # the first retrieval, then each round
    assert not [s for s in result.steps if s["node"] == "judge-fallback"]


def test_a_compact_prompt_keeps_each_field_description_under_the_shape():
    from pydantic import BaseModel, Field

    from ragloop.eval.prompt import Prompt

    class Statements(BaseModel):
        statements: list[str] = Field(description="atomic, self-contained statements")

    system = Prompt("s", "Split it.").render({"answer": "a"}, Statements, compact=True)[0]
    assert '{"statements": [<string>, ...]}' in str(system.content)
    assert "- statements: atomic, self-contained statements" in str(system.content)
    assert "JSON schema" not in str(system.content) and '"title"' not in str(system.content)
