"""Functions the reliability tests run in separate processes (forkserver: imports paid once)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"


def _emb() -> Any:
    from ragloop.providers import get_embeddings

    return get_embeddings("wordllama")


def index_writer(folder: str, corpus: str, rounds: int, errors: Any) -> None:
    """Build and swap in an index of ``corpus`` at ``folder``, ``rounds`` times."""
    from ragloop.retrievers.index import build_index

    emb = _emb()
    for _ in range(rounds):
        try:
            build_index(corpus, emb, "wordllama", folder, chunk_size=400, chunk_overlap=50)
        except Exception as exc:  # noqa: BLE001 - reported to the test
            errors.put(f"writer: {type(exc).__name__}: {exc}")


def index_reader(folder: str, stop: Any, errors: Any, loads: Any) -> None:
    """Load the index at ``folder`` until told to stop; every failure is reported."""
    from ragloop.retrievers.index import load_index

    emb = _emb()
    while not stop.is_set():
        try:
            index = load_index(folder, emb, "wordllama")
            if not index.chunks or index.faiss.index.ntotal != len(index.chunks):
                errors.put("reader: an index whose vectors and chunks disagree")
            with loads.get_lock():
                loads.value += 1
        except Exception as exc:  # noqa: BLE001 - reported to the test
            errors.put(f"reader: {type(exc).__name__}: {exc}")
        time.sleep(0.01)


class _SlowDraft:
    """Scripted strategies whose draft takes a while, so turns of two processes overlap."""

    def __new__(cls) -> Any:
        from tests.fakes.strategies import ScriptedStrategies

        class Slow(ScriptedStrategies):
            async def draft(self, question: str, prompt: str | None = None) -> Any:
                await asyncio.sleep(0.05)
                return await super().draft(question, prompt)

        return Slow(["sufficient"])


def chat_turns(db: str, thread: str, who: int, turns: int, errors: Any) -> None:
    """``turns`` turns on ``thread`` of the chat memory ``db``, as one chat process would."""
    from ragloop.chat.session import ChatSession
    from ragloop.config import Context
    from ragloop.nodes.base import Deps
    from ragloop.pipeline import Pipeline
    from tests.fakes.retrieval import ListRetriever

    deps = Deps(strategies=_SlowDraft(), retrievers={"dense": ListRetriever("dense")})
    pipe = Pipeline(deps, Context(retrievers=("dense",)))
    try:
        with ChatSession(pipe, db, thread_id=thread) as session:
            for n in range(turns):
                session.turn(f"question {who}-{n}")
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"chat {who}: {type(exc).__name__}: {exc}")


def trace_writer(path: str, who: int, count: int, errors: Any) -> None:
    """Append ``count`` turns to the trace store at ``path``."""
    from ragloop.chat.traces import Trace, TraceStore

    try:
        store = TraceStore(path)
        for n in range(count):
            store.add(Trace(question=f"q {who}-{n}", answer="a", thread="t"))
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"traces {who}: {type(exc).__name__}: {exc}")


def eval_writer(dataset: str, out: str, cache: str, rounds: int, errors: Any) -> None:
    """Evaluate ``dataset`` and write rows.jsonl/summary.json into the shared ``out``."""
    from ragloop.eval.runner import evaluate

    try:
        for _ in range(rounds):
            result = evaluate(dataset, ["exact_match", "rouge_score"], cache_dir=cache)
            result.write(out)
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"eval: {type(exc).__name__}: {exc}")


def index_forever(folder: str, corpus: str) -> None:
    """Rebuild the index at ``folder`` until killed."""
    from ragloop.retrievers.index import build_index

    emb = _emb()
    while True:
        build_index(corpus, emb, "wordllama", folder, chunk_size=400, chunk_overlap=50)


def eval_forever(dataset: str, out: str, cache: str) -> None:
    """Evaluate and write the results until killed (each round with other row values)."""
    from ragloop.eval.runner import evaluate

    n = 0
    while True:
        n += 1
        result = evaluate(dataset, ["exact_match", "rouge_score"], cache_dir=cache)
        result.notes.append(f"round {n}")
        result.write(out)


def experiment_forever(spec: str, out: str) -> None:
    """Run the experiment spec until killed (cached after the first run: writes dominate)."""
    from ragloop.experiments.experiment import run_experiment

    while True:
        run_experiment(spec, out=out, embeddings=_emb())


def rows_of(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSON Lines file, parsed (a half-written line raises)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def chat_pipeline() -> Any:
    """The scripted pipeline the chat kill tests run (no model, no index)."""
    from ragloop.config import Context
    from ragloop.nodes.base import Deps
    from ragloop.pipeline import Pipeline
    from tests.fakes.retrieval import ListRetriever
    from tests.fakes.strategies import ScriptedStrategies

    deps = Deps(
        strategies=ScriptedStrategies(["sufficient"]), retrievers={"dense": ListRetriever("dense")}
    )
    return Pipeline(deps, Context(retrievers=("dense",)))


def chat_turn_killed(db: str, traces: str, thread: str, point: str) -> None:
    """One whole turn, then a turn killed (SIGKILL, no clean-up) at ``point``.

    ``graph``: inside the graph, before the checkpoint is saved; ``trace``: checkpoint saved,
    trace not yet written; ``after``: both written, killed before the turn returns.
    """
    import os
    import signal

    from ragloop.chat.session import ChatSession
    from ragloop.chat.traces import TraceStore

    store = TraceStore(traces)
    pipe = chat_pipeline()
    with ChatSession(pipe, db, thread_id=thread, traces=store) as session:
        session.turn("question 0")
        die = lambda: os.kill(os.getpid(), signal.SIGKILL)  # noqa: E731
        add = store.add
        if point == "graph":
            draft = pipe.deps.strategies.draft

            async def dying_draft(*args: Any, **kwargs: Any) -> Any:
                die()
                return await draft(*args, **kwargs)

            pipe.deps.strategies.draft = dying_draft  # type: ignore[method-assign]
        elif point == "trace":
            store.add = lambda trace: die()  # type: ignore[method-assign]
        else:

            def add_then_die(trace: Any) -> int:
                add(trace)
                die()
                return 0

            store.add = add_then_die  # type: ignore[method-assign]
        session.turn("question 1")
