"""Does ``ragloop calibrate`` on a corpus beat the shipped answer model there?

For each corpus of ``bench/answer_quality.py`` (pg, py, sqlite, bash; the same bounded pages,
index and hand-written questions): the answer model is calibrated on a test set generated
from that corpus's index (``ragloop.calibration.corpus.calibrate``, nothing written into the
index), then the loop runs each hand-written question once and its answer step is rerun on
the same kept contexts with three sentence models:

- ``shipped``: the committed model (fitted on rows of all four corpora, these questions'
  rows among them: partly in-sample here);
- ``loco``: the shipped fit redone without this corpus's rows (leave-one-corpus-out: how the
  shipped weights do on a genre they never saw, which is what a user's corpus is);
- ``self``: the model calibrated on this corpus's generated questions.

Naive hybrid RAG (hybrid top k, the same answer step) is measured with each model too.
Per corpus and pooled: whether the answer holds the gold passage and "not found" on
answerable and unanswerable questions, each with a bootstrap 95% interval, and the paired
differences self - shipped and self - loco (bootstrap over questions, resampled within each
corpus). The generated questions' labelled rows are kept in each corpus's bench folder
(``self_calibration_rows.csv.gz``) for refitting offline. Usage::

    python bench/self_calibration.py [--corpora pg,py,sqlite,bash] [--size 150] [--limit 30]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import _newdocs
import _pgdocs
import _pydocs
from _loopbench import bench_pipeline
from _quality_measure import bootstrap, holds_gold
from answer_quality import corpus, unanswerable_questions

from ragloop.calibration.corpus import calibrate, fit_model
from ragloop.calibration.rows import read_rows, write_rows
from ragloop.config import load_settings
from ragloop.nodes.answer import answer_step
from ragloop.nodes.answer_model import AnswerModel
from ragloop.nodes.base import search, to_item

HERE = Path(__file__).resolve().parent
ROWS = HERE / "data" / "answer_rows.csv.gz"
MODELS = ("shipped", "loco", "self")


def loco_model(name: str, embeddings_model: str) -> AnswerModel:
    """The shipped fit (same rows, split and choices) without corpus ``name``'s rows."""
    rows, sha = read_rows(ROWS)
    others = rows.select(rows.corpus != name)
    return fit_model(others, seed=0, embeddings_model=embeddings_model, baseline=None, sha256=sha)


async def naive_items(pipe: Any, question: str) -> list:
    """Naive hybrid RAG's contexts: the hybrid top k, as bench/answer_quality.py reads them."""
    docs = await search(pipe.deps.retrievers["hybrid"], question, pipe.context.k)
    return [{**to_item(d), "grade": 1} for d in docs]


async def answer_with(pipe: Any, model: AnswerModel, question: str, contexts: list) -> tuple:
    """The answer step over ``contexts`` with ``model`` as the sentence scorer."""
    st = pipe.deps.answerer
    # None: the level the model's own abstention fit chose (as the pipeline answers); a number
    # here would replace it with the sentence-level one
    st.answer_model, st.not_found_below = model, None
    text, _, nf = await answer_step(st, question, contexts, pipe.context)
    return text, nf


async def measure(pipe: Any, models: dict[str, AnswerModel], q: Any, question: str) -> dict:
    """One question: the loop once, then the answer step with each model (loop and naive)."""
    st = pipe.deps.answerer
    shipped, level = st.answer_model, st.not_found_below
    st.answer_model, st.not_found_below = models["shipped"], None
    r = await pipe.arun(question)
    naive = await naive_items(pipe, question)
    row: dict[str, Any] = {"unanswerable": q is None}
    for name, model in models.items():
        text, nf = await answer_with(pipe, model, question, list(r.contexts))
        if name == "shipped":  # the rerun must be what the loop answered
            row["same_as_loop"] = text == r.answer
        ntext, nnf = await answer_with(pipe, model, question, naive)
        row[f"loop_nf_{name}"], row[f"naive_nf_{name}"] = nf, nnf
        if q is not None:
            row[f"loop_gold_{name}"] = holds_gold(text, q)
            row[f"naive_gold_{name}"] = holds_gold(ntext, q)
    st.answer_model, st.not_found_below = shipped, level
    return row


def run_corpus(name: str, args: argparse.Namespace) -> tuple[list[dict], dict[str, Any]]:
    started = time.perf_counter()
    root, work, qs = corpus(name, args.limit, args.natural)
    pipe = bench_pipeline(root, work, args.embeddings)
    pipe.context = replace(pipe.context, retrieval="always")
    if not pipe.sources.get("answer model", "").startswith("shipped"):
        raise SystemExit(f"{name}: the bench index must use the shipped model, not {pipe.sources}")
    spec = load_settings(**({"embeddings": args.embeddings} if args.embeddings else {})).embeddings
    folder = work / f"index-{spec}"
    cal = calibrate(folder, size=args.size, seed=0, write=False)
    # the generated questions' labelled rows, for refitting offline without the loop
    write_rows(cal.rows, work / "self_calibration_rows.csv.gz")
    emb_model = cal.plan.embeddings_model
    shipped = pipe.deps.answerer.answer_model
    models = {"shipped": shipped, "loco": loco_model(name, emb_model), "self": cal.model}
    unans = unanswerable_questions(name)[: args.natural]
    held = cal.model.provenance["held_out"]["best_sentence_holds_gold"]
    print(
        f"{name}: calibrated on {cal.generated} generated questions ({len(cal.rows)} rows, "
        f"{cal.seconds:.0f} s); held out {held}; "
        f"asking {len(qs)} answerable + {len(unans)} unanswerable",
        file=sys.stderr,
    )

    async def all_rows() -> list[dict]:
        out = [await measure(pipe, models, q, q.question) for q in qs]
        return out + [await measure(pipe, models, None, text) for text in unans]

    rows = asyncio.run(all_rows())
    info = {
        "generated": cal.generated,
        "rows": len(cal.rows),
        "held_out": cal.model.provenance["held_out"],
        "seconds": round(time.perf_counter() - started),
    }
    print(f"  {name}: done in {info['seconds']} s", file=sys.stderr)
    return rows, info


def cell(groups: list[list[float]]) -> str:
    flat = [v for g in groups for v in g]
    if not flat:
        return "n/a"
    lo, hi = bootstrap(groups)
    return f"{sum(flat) / len(flat):.3f} [{lo:.2f},{hi:.2f}]"


def report(by: dict[str, list[dict]], infos: dict[str, dict]) -> None:
    names = list(by)
    lines: list[tuple[str, Any, bool]] = []
    for who in ("loop", "naive"):
        for m in MODELS:
            lines.append((f"gold in answer: {who}, {m}", f"{who}_gold_{m}", False))
    for m in MODELS:
        lines.append((f"not found, answerable: loop, {m}", f"loop_nf_{m}", False))
    for m in MODELS:
        lines.append((f"not found, unanswerable: loop, {m}", f"loop_nf_{m}", True))
    for base in ("shipped", "loco"):
        lines.append(
            (f"gold in answer: loop, self - {base}",
             lambda r, b=base: float(r["loop_gold_self"]) - float(r[f"loop_gold_{b}"]), False)
        )  # fmt: skip
        lines.append(
            (f"gold in answer: naive, self - {base}",
             lambda r, b=base: float(r["naive_gold_self"]) - float(r[f"naive_gold_{b}"]), False)
        )  # fmt: skip
        for un in (False, True):
            kind = "unanswerable" if un else "answerable"
            lines.append(
                (f"not found, {kind}: loop, self - {base}",
                 lambda r, b=base: float(r["loop_nf_self"]) - float(r[f"loop_nf_{b}"]), un)
            )  # fmt: skip
    print("self-calibration (answer sentence model); each cell: mean [bootstrap 95% interval]")
    print(f"{'':44}" + "".join(f"{n:>22}" for n in [*names, "pooled"]))
    counts = [
        f"{sum(not r['unanswerable'] for r in by[n])}/{sum(r['unanswerable'] for r in by[n])}"
        for n in names
    ]
    total = [sum(int(c.split("/")[i]) for c in counts) for i in (0, 1)]
    print(f"{'questions (answerable/unans.)':44}" + "".join(f"{c:>22}" for c in counts)
          + f"{total[0]}/{total[1]}".rjust(22))  # fmt: skip
    for label, key, un in lines:
        groups = [
            [float(key(r) if callable(key) else r[key]) for r in by[n] if r["unanswerable"] == un]
            for n in names
        ]
        print(f"{label:44}" + "".join(f"{cell([g]):>22}" for g in groups) + f"{cell(groups):>22}")
    same = sum(r["same_as_loop"] for n in names for r in by[n])
    print(f"  check: the rerun answer step with the shipped model gave the loop's answer on "
          f"{same} of {sum(len(by[n]) for n in names)} questions")  # fmt: skip
    for n in names:
        i = infos[n]
        h = i["held_out"]
        print(
            f"  {n}: calibrated on {i['generated']} ({i['rows']} rows); generated questions held "
            f"out: best sentence holds the reference {h['best_sentence_holds_gold']}, "
            f"not found {h['not_found_held_out']}"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="pg,py,sqlite,bash")
    ap.add_argument("--size", type=int, default=150, help="generated questions to calibrate on")
    ap.add_argument("--limit", type=int, default=30, help="named and paraphrase questions each")
    ap.add_argument("--natural", type=int, default=40, help="natural / unanswerable cap")
    ap.add_argument("--embeddings", default=None)
    args = ap.parse_args()
    by: dict[str, list[dict]] = {}
    infos: dict[str, dict] = {}
    for name in args.corpora.split(","):
        try:
            by[name], infos[name] = run_corpus(name, args)
        except (_pgdocs.PgDocsMissing, _pydocs.PyDocsMissing, _newdocs.DocsMissing) as exc:
            print(f"{name}: skipped ({exc})")
    if by:
        report(by, infos)
    return 0


if __name__ == "__main__":
    sys.exit(main())
