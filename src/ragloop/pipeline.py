"""Assemble and run the graph: settings -> models, index, web search -> compiled graph."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from ragloop._async import run_sync
from ragloop.assembly import chat_model_for, roles_for
from ragloop.config import Context, Settings, load_settings
from ragloop.errors import ConfigError
from ragloop.graph.builder import build_graph, recursion_limit
from ragloop.graph.result import RunResult
from ragloop.nodes.base import Deps, may_call_llm
from ragloop.nodes.condense import HeuristicCondenser, LLMCondenser
from ragloop.retrievers.sections import SectionStarts
from ragloop.state import State


class CallCounter(BaseCallbackHandler):
    """Counts chat-model calls and tokens of one run (LangChain callbacks).

    It reads LLM events only, so chain, retriever and custom events are not sent to it:
    dispatching them for every node cost the offline loop about 8% of its latency.
    """

    ignore_chain = True
    ignore_retriever = True
    ignore_custom_event = True
    ignore_agent = True

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0

    # a request counts once it reached the server: a refused connection is no LLM call
    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        from ragloop.llm.faults import never_sent

        self.calls += int(getattr(error, "requests", 0 if never_sent(error) else 1))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.calls += int((response.llm_output or {}).get("ragloop_requests", 1))
        for gens in response.generations:
            for gen in gens:
                usage = getattr(getattr(gen, "message", None), "usage_metadata", None) or {}
                self.tokens += int(usage.get("total_tokens", 0))


def run_config(deps: Deps, ctx: Context, counter: CallCounter) -> dict[str, Any]:
    """A run's LangGraph config: its step limit, and ``counter`` as the callback only when a
    part of the run may call a chat model (``may_call_llm``; else the count is 0 uncounted)."""
    config: dict[str, Any] = {"recursion_limit": recursion_limit(ctx.max_iterations)}
    if may_call_llm(deps, ctx.retrievers):
        config["callbacks"] = [counter]
    return config


class Pipeline:
    """A compiled graph with its dependencies and default context."""

    def __init__(self, deps: Deps, context: Context, checkpointer: Any = None, model: str = "none"):
        self.deps = deps
        self.context = context
        self.model = model
        # the full state: a RunResult carries the contexts, actions and draft as well
        self.graph = build_graph(deps, checkpointer=checkpointer, output_schema=State)
        #: what it answers from (corpus, index, web), filled in by ``build_pipeline``
        self.sources: dict[str, str] = {}

    def describe_sources(self) -> str:
        """One line naming the corpus, index and web source in use (for headers and ``ask``)."""
        if not self.sources:
            return "sources: supplied by the caller"
        return " · ".join(f"{k} {v}" for k, v in self.sources.items())

    async def arun(
        self,
        question: str,
        *,
        reference: str | None = None,
        reference_contexts: list[str] | None = None,
        thread_id: str | None = None,
        **overrides: Any,
    ) -> RunResult:
        """Answer one question; ``overrides`` replace fields of the context for this run."""
        if not isinstance(question, str) or not question.strip():
            raise ConfigError("the question is empty: ask something")
        ctx = replace(self.context, **overrides) if overrides else self.context
        counter = CallCounter()
        config = run_config(self.deps, ctx, counter)
        if thread_id:
            config["configurable"] = {"thread_id": thread_id}
        started = time.perf_counter()
        state = await self.graph.ainvoke(
            {
                "question": question.strip(),
                "reference": reference,
                "reference_contexts": reference_contexts or [],
            },
            config=config,
            context=ctx,
        )
        result = RunResult.from_state(
            state,
            llm_calls=counter.calls,
            tokens=counter.tokens,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        # the graph clears the per-turn inputs when the turn ends; the result keeps this run's
        result.reference = reference
        result.reference_contexts = list(reference_contexts or [])
        return result

    def run(self, question: str, **kwargs: Any) -> RunResult:
        """Sync ``arun`` (also inside a running event loop)."""
        return run_sync(self.arun(question, **kwargs))


def build_pipeline(
    settings: Settings | None = None,
    *,
    env: Mapping[str, str] | None = None,
    llm: Any = None,
    embeddings: Any = None,
    corpus_dir: str | Path | None = None,
    web_corpus_dir: str | Path | None = None,
    checkpointer: Any = None,
    demo: bool = False,
    force: bool = False,
    **context: Any,
) -> Pipeline:
    """The default pipeline: index (built or reused), web search, strategies by ``settings.llm``.

    The corpus is ``corpus_dir``, ``settings.corpus_dir`` or the one the index was built from;
    ``demo`` answers from the bundled demo base; ``force`` lets an index of another corpus or
    chunking be replaced. LLM faults are retried with the runner's policy (``LLMError`` last).
    """
    from ragloop.data import WEB_DIR
    from ragloop.embeddings import model_id
    from ragloop.nodes.answer_cache import demo_cache_for, is_demo_index
    from ragloop.nodes.answer_model import model_for_index
    from ragloop.nodes.lines import choose_profile, corpus_boilerplate
    from ragloop.nodes.memo import index_vectors
    from ragloop.nodes.offline import OfflineStrategies
    from ragloop.nodes.offline_judge import calibration_for
    from ragloop.nodes.vocabulary import common_words
    from ragloop.providers import describe_model, get_embeddings
    from ragloop.retrievers.index import open_index
    from ragloop.retrievers.registry import LazyRetrievers, get_retriever
    from ragloop.retrievers.sparse import chunk_counts, page_titles
    from ragloop.retrievers.web import CorpusWebSearch, tavily_from_env, web_corpus_folder
    from ragloop.sources import choose_corpus, describe

    settings = settings or load_settings()
    env = os.environ if env is None else env
    emb = embeddings or get_embeddings(settings.embeddings, env=env)
    model = llm if llm is not None else chat_model_for(settings, env)
    corpus = choose_corpus(settings, corpus_dir, demo=demo)  # never a silent demo fallback
    index = open_index(
        corpus,
        settings.index_dir,
        emb,
        settings.embeddings,
        chunk_size=settings.chunk_size,
        chunk_overlap=settings.chunk_overlap,
        force=force,
    )
    # every registered retriever is selectable per run (server context); configured ones now
    retrievers = LazyRetrievers(index, k=settings.k, eager=tuple(settings.retrievers))
    web: Any = None
    if settings.web in ("auto", "tavily"):
        web = tavily_from_env(env)
        if web is None and settings.web == "tavily":
            raise ConfigError(
                "web=tavily needs TAVILY_API_KEY; export it or set RAGLOOP_WEB=corpus"
            )
    demo_corpus = is_demo_index(index)  # demo artefacts (web corpus, answer cache) serve it only
    if web is None and settings.web in ("auto", "corpus"):
        web_dir = web_corpus_folder(
            settings.web, web_corpus_dir or settings.web_corpus_dir, demo_corpus, WEB_DIR
        )
        if web_dir is not None:
            web_index = open_index(
                web_dir,
                Path(settings.index_dir).with_name(Path(settings.index_dir).name + "-web"),
                emb,
                settings.embeddings,
                chunk_size=settings.chunk_size,
                chunk_overlap=settings.chunk_overlap,
                id_prefix="web/",
                force=True,  # a derived folder ragloop keeps beside the index
            )
            web = CorpusWebSearch(get_retriever("hybrid", web_index, k=settings.k))
            web.folder = web_dir  # type: ignore[attr-defined]
    cache = demo_cache_for(index, emb)
    profile, profile_why = choose_profile([c.page_content for c in index.chunks])
    # the index's own calibration (`ragloop calibrate`) when it fits these embeddings
    answer_model, answer_model_why = model_for_index(settings.index_dir, model_id(emb))
    judge_calibration = calibration_for(settings.embeddings)
    stop = answer_model.stop_level if answer_model is not None else None
    if stop is not None:  # the judge's "sufficient" level, fitted with the answer model
        judge_calibration = judge_calibration.with_values(grade2=stop)
    counts, n_chunks = chunk_counts(index.bm25)
    offline = OfflineStrategies(
        emb,
        cache,
        calibration=judge_calibration,
        known_vectors=index_vectors(index),  # the judge reads chunk vectors, never re-embeds
        # "PostgreSQL" in a question on its docs names nothing the judge should look for
        common_words=common_words(counts, n_chunks, pages=page_titles(index.chunks)),
        answer_model=answer_model,
        boilerplate=corpus_boilerplate(
            [
                (
                    str(c.metadata.get("source", "")),
                    str(c.metadata.get("title", "")),
                    c.page_content,
                )
                for c in index.chunks
            ]
        ),
        profile=profile,
        vocabulary=counts,  # what the corpus mentions at all: a name it never does is a clue
    )
    deps = Deps(
        **roles_for(settings, model, emb, offline, env),
        retrievers=retrievers,
        web=web,
        common_words=offline.common_words,
        condenser=HeuristicCondenser() if model is None else LLMCondenser(model),
        section_starts=SectionStarts(index.chunks),
        max_question_chars=settings.max_question_chars,
    )
    ctx = Context.from_settings(settings, env, **context)
    pipe = Pipeline(deps, ctx, checkpointer=checkpointer, model=describe_model(model))
    pipe.sources = describe(corpus, Path(settings.index_dir), index, web)
    pipe.sources["answer profile"] = f"{profile} ({profile_why})"
    pipe.sources["answer model"] = answer_model_why
    pipe.sources["judge stop level"] = (
        f"{judge_calibration.grade2:g} ({'fitted' if stop is not None else 'hand-set'})"
    )
    pipe.sources["answer cache"] = (
        f"demo answer cache ({len(cache.questions)} answers)" if cache else "off"
    )
    return pipe
