"""Multi-turn metrics (RAGAS names and formulas) and recorded chat threads as conversations."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragloop.chat.threads import load_threads
from ragloop.chat.traces import Trace, TraceStore
from ragloop.cli import app
from ragloop.errors import ConfigError, MissingColumnsError
from ragloop.eval.metrics.base import get_metric
from ragloop.eval.metrics.topic_adherence import adherence
from tests.fakes.chat import ScriptedChatModel
from tests.fakes.embeddings import HashEmbeddings
from tests.metrics_llm_fakes import by_prompt

CHAT = [
    {"type": "human", "content": "What is the capital of France?"},
    {"type": "ai", "content": "", "tool_calls": [{"name": "retrieve", "args": {"query": "fr"}}]},
    {"type": "tool", "content": "Paris is the capital of France."},
    {"type": "ai", "content": "Paris."},
    {"type": "human", "content": "And my bank PIN?"},
    {"type": "ai", "content": "I don't know."},
]


def conversation(**extra):
    return {"user_input": CHAT, **extra}


@pytest.mark.parametrize(
    ("made", "expected", "strict", "value"),
    [
        ([("retrieve", {"query": "fr"})], [("retrieve", {"query": "fr"})], True, 1.0),
        ([("retrieve", {"query": "fr"})], [("retrieve", {"query": "de"})], True, 0.0),
        (
            [("retrieve", {"query": "fr", "k": 3})],
            [("retrieve", {"query": "fr", "k": 4})],
            True,
            0.5,
        ),
        ([("a", {}), ("b", {})], [("b", {}), ("a", {})], True, 0.0),
        ([("a", {}), ("b", {})], [("b", {}), ("a", {})], False, 1.0),
        ([("a", {})], [("a", {}), ("b", {})], True, 0.0),  # names do not align
        ([], [], True, 1.0),
    ],
)
def test_tool_call_accuracy_follows_ragas(made, expected, strict, value):
    messages = [{"type": "human", "content": "q"}]
    if made:
        calls = [{"name": n, "args": a} for n, a in made]
        messages.append({"type": "ai", "content": "", "tool_calls": calls})
    sample = {
        "user_input": messages,
        "reference_tool_calls": [{"name": n, "args": a} for n, a in expected],
    }
    metric = get_metric("tool_call_accuracy", strict_order=strict)
    assert metric.score(sample).value == pytest.approx(value)


def test_tool_call_f1_ignores_order_and_rounds_like_ragas():
    refs = [{"name": "retrieve", "args": {"query": "fr"}}, {"name": "web_search", "args": {}}]
    assert get_metric("tool_call_f1").score(conversation(reference_tool_calls=refs)).value == 0.6667
    with pytest.raises(MissingColumnsError):
        get_metric("tool_call_f1").score(conversation())


def test_adherence_formula_matches_hand_counts():
    answered, on_topic = [True, True, False], [True, False, True]  # TP 1, FP 1, FN 1
    assert adherence(answered, on_topic, "precision") == pytest.approx(0.5)
    assert adherence(answered, on_topic, "recall") == pytest.approx(0.5)
    assert adherence(answered, on_topic, "f1") == pytest.approx(0.5)
    assert adherence([], [], "f1") == 0.0


def test_topic_adherence_takes_three_calls_whatever_the_number_of_topics():
    llm = ScriptedChatModel(
        script=[
            by_prompt(
                {
                    "topic_adherence.topics": {"topics": ["France", "bank PIN", "weather"]},
                    "topic_adherence.refused": {"refused": [False, True, False]},
                    "topic_adherence.classify": {"classifications": [True, False]},  # padded
                }
            )
        ]
    )
    metric = get_metric("topic_adherence", llm=llm, mode="precision")
    res = metric.score(conversation(reference_topics=["geography"]))
    # answered: France (on topic), weather (off topic, padded False): precision 1/2
    assert res.value == pytest.approx(0.5) and len(llm.calls) == 3 == res.details["llm_calls"]


def test_agent_goal_accuracy_compares_with_reference_or_inferred_goal():
    seen = []

    def compare(data):
        seen.append(data["desired_outcome"])
        return {"reason": "ok", "verdict": "1"}

    script = by_prompt(
        {
            "agent_goal_accuracy.workflow": {
                "user_goal": "learn the capital",
                "end_state": "Paris",
            },
            "agent_goal_accuracy.compare": compare,
        }
    )
    llm = ScriptedChatModel(script=[script])
    metric = get_metric("agent_goal_accuracy", llm=llm)
    assert metric.score(conversation(reference="the capital is named")).value == 1.0
    assert metric.score(conversation()).value == 1.0
    assert seen == ["the capital is named", "learn the capital"] and len(llm.calls) == 4
    strict = get_metric("agent_goal_accuracy", llm=llm, mode="with_reference")
    with pytest.raises(MissingColumnsError):
        strict.score(conversation())


def test_domain_specific_rubrics_scores_a_conversation_in_one_call_and_keeps_old_name():
    llm = ScriptedChatModel(script=[{"feedback": "fine", "score": 4}])
    metric = get_metric("rubrics_score", llm=llm)
    assert metric.name == "domain_specific_rubrics"
    assert metric.score(conversation()).value == 4.0 and len(llm.calls) == 1
    assert "Human: What is the capital of France?" in str(llm.calls[0][1].content)


@pytest.mark.parametrize(("shown", "seen"), [(True, True), (False, False), (None, True)])
def test_rubrics_reference_chooses_whether_the_judge_sees_the_reference(shown, seen):
    """False is RAGAS 0.4.3's multi-turn behaviour: the transcript alone is graded."""
    llm = ScriptedChatModel(script=[{"feedback": "fine", "score": 4}])
    params = {} if shown is None else {"rubrics_reference": shown}
    metric = get_metric("domain_specific_rubrics", llm=llm, **params)
    assert metric.score(conversation(reference="Says Paris, declines the PIN.")).value == 4.0
    assert ("declines the PIN" in str(llm.calls[0][1].content)) is seen


def test_rubrics_reference_must_be_a_bool():
    with pytest.raises(ConfigError, match="rubrics_reference"):
        get_metric("domain_specific_rubrics", llm=ScriptedChatModel(script=[]), rubrics_reference=1)


def test_offline_topic_adherence_uses_embeddings_and_noncommittal_replies():
    table = {
        "What is the capital of France?": [1.0, 0.0],
        "And my bank PIN?": [0.0, 1.0],
        "geography": [1.0, 0.0],
    }
    metric = get_metric("offline_topic_adherence", embeddings=HashEmbeddings(dim=2, table=table))
    res = metric.score(conversation(reference_topics=["geography"]))
    # turn 1 answered + on topic (TP); turn 2 noncommittal + off topic (neither)
    assert res.value == pytest.approx(1.0, abs=1e-6) and res.details["answered"] == [True, False]


def _store(tmp_path):
    store = TraceStore(tmp_path / "traces.sqlite")
    steps = [{"node": "retrieve", "detail": "", "iteration": 0}]
    actions = [{"action": "web", "query": "capital France", "reason": "incomplete"}]
    ctx = [{"id": "c1", "text": "Paris is the capital of France."}]
    store.add(
        Trace(
            "capital of France?",
            "Paris [1].",
            thread="t1",
            contexts=ctx,
            steps=steps,
            actions=actions,
        )
    )
    store.add(Trace("and its river?", "The Seine.", thread="t1"))
    store.add(Trace("hello", "Hi.", thread="t2"))
    return store


def test_recorded_threads_become_conversations_with_tool_calls(tmp_path):
    _store(tmp_path)
    chat_db = tmp_path / "chat.sqlite"
    chat_db.write_bytes(b"")  # the checkpointer file; the trace store beside it is read
    samples = {s.thread_id: s for s in load_threads(tmp_path / "traces.sqlite")}
    t1 = samples["t1"]
    names = [c.name for c in t1.tool_calls()]
    assert names == ["retrieve", "web_search"]
    kinds = [m.type for m in t1.user_input]
    assert kinds == ["human", "ai", "tool", "ai", "human", "ai"]
    assert [m.type for m in samples["t2"].user_input] == ["human", "ai"]


def test_ragloop_eval_threads_scores_recorded_conversations(tmp_path):
    _store(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--threads",
            str(tmp_path / "traces.sqlite"),
            "--topics",
            "geography",
            "--metrics",
            "offline_topic_adherence",
            "--no-cache",
            "--quiet",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["offline_topic_adherence"]["measured"] == 2


def test_checkpointer_alone_gives_questions_and_answers(tmp_path):
    import sqlite3
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        question: str
        messages: list
        answer: str

    conn = sqlite3.connect(tmp_path / "chat.sqlite", check_same_thread=False)
    graph = StateGraph(State)
    graph.add_node("answer", lambda s: {"answer": "It is Paris."})
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    messages = [
        {"role": "user", "content": "hi", "standalone": "hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "capital?", "standalone": "capital of France?"},
    ]
    state = {"messages": messages, "question": "capital of France?"}
    graph.compile(checkpointer=SqliteSaver(conn)).invoke(
        state, {"configurable": {"thread_id": "t9"}}
    )
    conn.close()
    (sample,) = load_threads(tmp_path / "chat.sqlite")
    assert sample.thread_id == "t9"
    assert [(m.type, m.content) for m in sample.user_input] == [
        ("human", "hi"),
        ("ai", "Hello."),
        ("human", "capital?"),
        ("ai", "It is Paris."),
    ]


def test_topic_adherence_without_llm_runs_as_its_offline_variant(tmp_path):
    from ragloop.eval.runner import evaluate

    result = evaluate(
        [conversation(reference_topics=["capital of France"])],
        ["topic_adherence"],
        embeddings=HashEmbeddings(),
        cache=False,
    )
    assert "offline_topic_adherence" in result.metrics
    assert any("offline_topic_adherence" in note for note in result.notes)
    assert 0.0 <= result["offline_topic_adherence"][0] <= 1.0


MESSAGES = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["human", "ai"]),
            "content": st.sampled_from(["", "Paris.", "I don't know.", "a question?"]),
            "tool_calls": st.one_of(
                st.none(),
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "name": st.sampled_from(["retrieve", "web_search"]),
                            "args": st.dictionaries(
                                st.sampled_from(["q", "k"]), st.sampled_from(["a", 1]), max_size=2
                            ),
                        }
                    ),
                    max_size=3,
                ),
            ),
        }
    ),
    max_size=6,
)
CALLS = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["retrieve", "web_search"]), "args": st.just({"q": "a"})}
    ),
    max_size=3,
)


@settings(max_examples=80, deadline=None)
@given(messages=MESSAGES, refs=CALLS, strict=st.booleans())
def test_tool_call_metrics_stay_in_range(messages, refs, strict):
    sample = {"user_input": messages, "reference_tool_calls": refs}
    for metric in (
        get_metric("tool_call_accuracy", strict_order=strict),
        get_metric("tool_call_f1"),
    ):
        assert 0.0 <= metric.score(sample).value <= 1.0


def test_ragloop_eval_threads_without_references_or_judge_says_what_to_give(tmp_path):
    _store(tmp_path)
    result = CliRunner().invoke(
        app, ["eval", "--threads", str(tmp_path / "traces.sqlite"), "--no-cache", "--quiet"]
    )
    assert result.exit_code != 0 and "--topics" in result.output


def test_ragloop_eval_threads_picks_offline_topic_adherence_given_topics(tmp_path):
    _store(tmp_path)
    out = tmp_path / "out"
    args = ["eval", "--threads", str(tmp_path / "traces.sqlite"), "--topics", "geography"]
    result = CliRunner().invoke(app, [*args, "--no-cache", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["metrics"]) == ["offline_topic_adherence"]
