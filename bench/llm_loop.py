"""LLM-mode bench: the loop against naive RAG, both answering with one simulated competent model.

The model (``_simulated_llm.py``) is served on 127.0.0.1 as an OpenAI-compatible server with
a fixed latency, so every request goes through ragloop's real LLM client (reply cap,
retries, structured output). It knows each question's gold passage and nothing else; the
loop never sees it. The question sets are bench/answer_quality.py's (PostgreSQL, Python,
SQLite and bash documentation, bounded indexes, named / paraphrase / natural and
unanswerable questions), or the demo QA set (``--corpora demo``).

Per noise level (0, 10%, 30%: flipped grades, wrong answers), per corpus and pooled, with
bootstrap 95% intervals: kept (a kept context holds the gold passage), cited (a cited one
does), answer hit (the answer holds the gold passage; unanswerable questions excluded),
"not found" on answerable and on unanswerable questions (the result's ``not_found``), LLM
calls per question (mean, and on the happy path: answered after one retrieval), fallbacks
in the path, and wall time. Naive RAG is one hybrid retrieval of k and the same LLM answer
step (one call).

    python bench/llm_loop.py [--corpora pg,py,sqlite,bash|demo] [--limit 30] [--natural 40]
                             [--latency 0.02] [--noise 0,0.1,0.3] [--rows out.jsonl]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import _newdocs  # noqa: E402
import _pgdocs  # noqa: E402
import _pydocs  # noqa: E402
from _demo import demo_pipeline, qa_rows, reference_sources  # noqa: E402
from _loopbench import bench_pipeline  # noqa: E402
from _quality_measure import bootstrap, holds_gold  # noqa: E402
from _simulated_llm import Gold, SimulatedLLM, first_sentence, holds, quote  # noqa: E402
from _simulated_llm import unanswerable as unanswerable_gold  # noqa: E402
from answer_quality import corpus, unanswerable_questions  # noqa: E402

from ragloop.llm.faults import with_llm_retries  # noqa: E402
from ragloop.nodes.answer import answer_step  # noqa: E402
from ragloop.nodes.base import search, to_item  # noqa: E402
from ragloop.pipeline import Pipeline  # noqa: E402
from ragloop.providers import get_chat_model  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, reply  # noqa: E402

logging.getLogger("ragloop").setLevel(logging.ERROR)
REAL = ("pg", "py", "sqlite", "bash")


@dataclass(frozen=True)
class Case:
    """One question: what the model knows (``gold``) and how the bench scores an outcome.

    ``in_item(context)``: a context (text and source) holds the gold passage, ``None`` for
    a question with no passage (general knowledge, unanswerable); ``in_answer(text)``: the
    answer states it.
    """

    kind: str
    gold: Gold
    in_item: Callable[[dict[str, Any]], bool] | None
    in_answer: Callable[[str], bool]

    @property
    def question(self) -> str:
        return self.gold.question

    @property
    def unanswerable(self) -> bool:
        return self.kind == "unanswerable"


@dataclass
class Corpus:
    """A question set and a way to build its pipeline around a chat model."""

    name: str
    cases: list[Case]
    pipeline: Callable[[Any], Pipeline]


def demo_corpus(limit: int | None) -> Corpus:
    """The demo QA set over the demo base (general-knowledge questions are drafted)."""
    cases = []
    for row in qa_rows()[:limit] if limit else qa_rows():
        kind, sentence = row["kind"], first_sentence(row.get("reference") or "")
        texts = row.get("reference_contexts") or []
        if kind == "unanswerable":
            cases.append(Case(kind, unanswerable_gold(row["user_input"]), None, lambda _: False))
            continue
        sources = reference_sources(row)
        gold = Gold(
            row["user_input"],
            holds=lambda t, texts=texts: holds(t, texts),
            says=lambda _, s=sentence: s,
            closed_book=row["reference"] if kind == "general" else "",
        )
        in_item = None
        if kind != "general":

            def in_item(c: dict[str, Any], sources=sources, texts=texts) -> bool:
                return c.get("source") in sources or holds(c.get("text", ""), texts)

        cases.append(Case(kind, gold, in_item, lambda a, s=sentence: s.lower() in a.lower()))
    return Corpus("demo", cases, lambda llm: demo_pipeline(llm=llm))


def real_corpus(name: str, limit: int, natural: int, embeddings: str | None) -> Corpus:
    """One of answer_quality.py's corpora: its bounded index and question set."""
    root, work, questions = corpus(name, limit, natural)
    cases = []
    for q in questions:

        def says(text: str, q: Any = q) -> str:
            return quote(text, lambda t: _pgdocs.passage_hit(t, q))

        gold = Gold(q.question, holds=lambda t, q=q: _pgdocs.passage_hit(t, q), says=says)
        cases.append(
            Case(
                q.kind,
                gold,
                lambda c, q=q: _pgdocs.passage_hit(c.get("text", ""), q, c.get("source")),
                lambda a, q=q: holds_gold(a, q),
            )
        )
    for text in unanswerable_questions(name)[:natural]:
        cases.append(Case("unanswerable", unanswerable_gold(text), None, lambda _: False))
    return Corpus(name, cases, lambda llm: bench_pipeline(root, work, embeddings, llm=llm))


def _holding(case: Case, items: list[dict[str, Any]]) -> bool | None:
    return None if case.in_item is None else any(case.in_item(c) for c in items)


#: ``--max-iterations``: the loop's correction rounds (None: the settings' default)
ROUNDS: int | None = None


async def _loop(pipe: Pipeline, case: Case) -> dict[str, Any]:
    rounds = {} if ROUNDS is None else {"max_iterations": ROUNDS}
    r = await pipe.arun(case.question, **rounds)
    by_id = {c["id"]: c for c in r.contexts}
    cited = [by_id[c["id"]] for c in r.citations if c["id"] in by_id]
    # what the judge kept (the result also carries what was read below the keep grade)
    kept = [c for c in r.contexts if c.get("grade", 0) >= pipe.context.relevance_keep]
    return {
        "kept": _holding(case, kept),
        "cited": _holding(case, cited),
        "hit": case.in_answer(r.answer),
        "nf": bool(r.not_found),
        # the happy path: the judge found enough in the first retrieval (or none was needed)
        "happy": not any(s.get("node") == "correct" for s in r.steps),
        "fallbacks": sum(1 for s in r.steps if str(s.get("node", "")).endswith("-fallback")),
        "stop": r.stop_reason,
        "answer": r.answer,
    }


async def _naive(pipe: Pipeline, case: Case) -> dict[str, Any]:
    """One hybrid retrieval of k, then the loop's answer step (the same LLM answer)."""
    docs = await search(pipe.deps.retrievers["hybrid"], case.question, pipe.context.k)
    items = [{**to_item(d), "grade": 1} for d in docs]
    text, cited, not_found = await answer_step(
        pipe.deps.answerer, case.question, items, pipe.context
    )
    return {
        "kept": _holding(case, items),
        "cited": _holding(case, [items[n - 1] for n in set(cited) if 1 <= n <= len(items)]),
        "hit": case.in_answer(text),
        "nf": bool(not_found),
        "answer": text,
    }


async def run_corpus(
    corpus: Corpus, noises: list[float], latency: float, seed: int = 7
) -> list[dict[str, Any]]:
    """Every question of ``corpus`` through the loop and naive RAG at each noise level."""
    sim = SimulatedLLM([c.gold for c in corpus.cases], seed=seed)
    rows = []
    with FakeOpenAIServer(reply(sim), delay=latency) as server:
        chat = get_chat_model("openai:simulated", env=server.env(), max_retries=0, timeout=30)
        pipe = corpus.pipeline(with_llm_retries(chat, 1))
        try:
            await _ask_every_question(corpus, noises, sim, server, pipe, rows)
        finally:  # the client's pooled connection is bound to this (short-lived) event loop
            await chat.root_async_client.close()
    return rows


async def _ask_every_question(
    corpus: Corpus,
    noises: list[float],
    sim: SimulatedLLM,
    server: FakeOpenAIServer,
    pipe: Any,
    rows: list[dict[str, Any]],
) -> None:
    """Each question of ``corpus`` through the loop and naive RAG at each noise level, its row
    appended to ``rows``."""
    for noise in noises:
        sim.noise = noise
        started = time.perf_counter()
        for case in corpus.cases:
            row: dict[str, Any] = {"corpus": corpus.name, "noise": noise, "kind": case.kind}
            for system, run in (("loop", _loop), ("naive", _naive)):
                before, t0 = server.count(), time.perf_counter()
                out = await run(pipe, case)
                out["calls"] = server.count() - before
                out["wall"] = time.perf_counter() - t0
                row.update({f"{system}_{k}": v for k, v in out.items()})
            row["question"] = case.question
            rows.append(row)
        print(
            f"  {corpus.name} noise {noise:g}: {len(corpus.cases)} questions in "
            f"{time.perf_counter() - started:.0f} s; model calls by step {sim.calls}",
            file=sys.stderr,
            flush=True,
        )
        sim.calls = {}


#: (label, value of a row or None to leave it out, rows: "a" answerable / "u" unanswerable)
METRICS: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("kept: loop", lambda r: r["loop_kept"], "a"),
    ("cited: loop", lambda r: r["loop_cited"], "a"),
    ("read: naive (hybrid@k)", lambda r: r["naive_kept"], "a"),
    ("cited: naive", lambda r: r["naive_cited"], "a"),
    ("answer hit: loop", lambda r: r["loop_hit"], "a"),
    ("answer hit: naive", lambda r: r["naive_hit"], "a"),
    ("answer hit: loop - naive", lambda r: float(r["loop_hit"]) - float(r["naive_hit"]), "a"),
    ("not found, answerable: loop", lambda r: r["loop_nf"], "a"),
    ("not found, answerable: naive", lambda r: r["naive_nf"], "a"),
    ("not found, unanswerable: loop", lambda r: r["loop_nf"], "u"),
    ("not found, unanswerable: naive", lambda r: r["naive_nf"], "u"),
    ("LLM calls/q: loop", lambda r: r["loop_calls"], "*"),
    ("LLM calls/q: loop happy path", lambda r: r["loop_calls"] if r["loop_happy"] else None, "*"),
    ("LLM calls/q: naive", lambda r: r["naive_calls"], "*"),
    ("wall s/q: loop", lambda r: r["loop_wall"], "*"),
    ("wall s/q: naive", lambda r: r["naive_wall"], "*"),
]


def _values(rows: list[dict[str, Any]], key: Callable, which: str) -> list[float]:
    picked = [r for r in rows if which == "*" or (r["kind"] == "unanswerable") == (which == "u")]
    return [float(v) for v in map(key, picked) if v is not None]


def _cell(groups: list[list[float]]) -> str:
    flat = [x for g in groups for x in g]
    if not flat:
        return f"{'-':>21}"
    lo, hi = bootstrap(groups)
    return f"{statistics.mean(flat):>6.3f} [{lo:.2f},{hi:.2f}]".rjust(21)


def _ratio(rows: list[dict[str, Any]], who: str) -> float:
    kept = sum(bool(r[f"{who}_kept"]) for r in rows if r[f"{who}_kept"] is not None)
    cited = sum(bool(r[f"{who}_cited"]) for r in rows if r[f"{who}_cited"] is not None)
    return cited / kept if kept else float("nan")


def report(rows: list[dict[str, Any]], latency: float) -> None:
    """Per noise level: each metric per corpus and pooled, then the issue's targets."""
    names = list(dict.fromkeys(r["corpus"] for r in rows))
    for noise in dict.fromkeys(r["noise"] for r in rows):
        at = {n: [r for r in rows if r["noise"] == noise and r["corpus"] == n] for n in names}
        print(f"\nnoise {noise:g} (latency {latency:g} s per LLM request); mean [bootstrap 95%]")
        print(f"{'':<32}" + "".join(f"{c:>21}" for c in [*names, "pooled"]))
        counts = [
            f"{sum(r['kind'] != 'unanswerable' for r in rs)}/"
            f"{sum(r['kind'] == 'unanswerable' for r in rs)}"
            for rs in [*at.values(), [r for rs in at.values() for r in rs]]
        ]
        print(f"{'questions (answerable/unans.)':<32}" + "".join(f"{c:>21}" for c in counts))
        for label, key, which in METRICS:
            groups = [_values(at[n], key, which) for n in names]
            cells = [_cell([g]) for g in groups] + [_cell(groups)]
            print(f"{label:<32}" + "".join(cells))
        pooled = [r for rs in at.values() for r in rs]
        for who in ("loop", "naive"):
            ratios = [_ratio(at[n], who) for n in names] + [_ratio(pooled, who)]
            print(f"{f'cited / kept: {who}':<32}" + "".join(f"{x:>21.2f}" for x in ratios))
        happy = [r["loop_calls"] for r in pooled if r["loop_happy"]]
        fallbacks = [sum(r["loop_fallbacks"] for r in at[n]) for n in names]
        print(f"{'fallbacks in the path: loop':<32}" + "".join(f"{x:>21}" for x in fallbacks))
        print(
            f"{'happy path share / max calls':<32}"
            + "".join(f"{_happy(at[n]):>21}" for n in names)
            + f"{_happy(pooled):>21}"
        )
        for n in names:
            stops: dict[str, int] = {}
            for r in at[n]:
                stops[r["loop_stop"]] = stops.get(r["loop_stop"], 0) + 1
            print(f"  {n} stop reasons: {stops}")
        targets(at, noise, happy)


def _happy(rows: list[dict[str, Any]]) -> str:
    calls = [r["loop_calls"] for r in rows if r["loop_happy"]]
    return f"{len(calls) / len(rows):.2f} / {max(calls) if calls else '-'}" if rows else "-"


def targets(at: dict[str, list[dict[str, Any]]], noise: float, happy: list[int]) -> None:
    """Issue 28's targets at this noise level (reported, not asserted)."""
    print("targets:")
    pooled = [r for part in at.values() for r in part]
    for name, rs in [*at.items(), ("pooled", pooled)]:
        groups = [_values(at[n], METRICS[6][1], "a") for n in at] if name == "pooled" else None
        diff = _values(rs, METRICS[6][1], "a")
        if not diff:
            continue
        lo, hi = bootstrap(groups or [diff])
        mean = statistics.mean(diff)
        if noise == 0:
            ok = "ok" if mean >= 0.05 else "MISS"
            need = "loop - naive >= +0.05"
        else:
            ok = "ok" if mean >= 0 else ("within noise" if hi >= 0 else "MISS")
            need = "loop no worse than naive"
        ratio = _ratio(rs, "loop")
        cited = f"cited/kept {ratio:.2f}"
        if noise == 0:
            cited += f" ({'ok' if ratio >= 0.95 else 'MISS'} >= 0.95)"
        print(
            f"  {name:<7} answer hit loop - naive {mean:+.3f} [{lo:+.2f},{hi:+.2f}]"
            f" ({need}: {ok}); {cited}"
        )
    if happy:
        print(
            f"  happy path: at most {max(happy)} LLM calls, mean {statistics.mean(happy):.2f}"
            f" ({'ok' if max(happy) <= 4 else 'MISS'} <= 4)"
        )


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=",".join(REAL), help="pg,py,sqlite,bash or demo")
    ap.add_argument("--limit", type=int, default=30, help="named and paraphrase questions each")
    ap.add_argument("--natural", type=int, default=40, help="natural / unanswerable cap")
    ap.add_argument("--embeddings", default=None)
    ap.add_argument("--latency", type=float, default=0.02, help="seconds per LLM request")
    ap.add_argument("--noise", default="0,0.1,0.3")
    ap.add_argument("--seed", type=int, default=7, help="the simulated model's noise seed")
    ap.add_argument("--rows", default="", help="write every question's row here (JSON lines)")
    ap.add_argument("--report-from", default="", help="print the report of a --rows file")
    ap.add_argument("--max-iterations", type=int, default=None, help="the loop's correction rounds")
    args = ap.parse_args()
    global ROUNDS
    ROUNDS = args.max_iterations
    if args.report_from:
        lines = Path(args.report_from).read_text(encoding="utf-8").splitlines()
        report([json.loads(line) for line in lines if line.strip()], args.latency)
        return 0
    noises = [float(x) for x in args.noise.split(",")]
    rows: list[dict[str, Any]] = []
    for name in args.corpora.split(","):
        if name == "demo":
            corpus = demo_corpus(args.limit)
        else:
            try:
                corpus = real_corpus(name, args.limit, args.natural, args.embeddings)
            except (_pgdocs.PgDocsMissing, _pydocs.PyDocsMissing, _newdocs.DocsMissing) as exc:
                print(f"{name}: skipped ({exc})")
                continue
        rows += await run_corpus(corpus, noises, args.latency, args.seed)
    if args.rows:
        Path(args.rows).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if rows:
        report(rows, args.latency)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
