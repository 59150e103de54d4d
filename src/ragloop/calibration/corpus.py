"""``ragloop calibrate INDEX``: fit the answer's sentence model on the index's own corpus.

A test set is generated from the corpus offline (``ragloop.testset``: questions that name
their subject, paraphrased ones and unanswerable near misses, each with the passage it was
read from), the offline loop answers each, the sentences its answer reads are labelled by
whether they hold the reference (``collect``), and the same logistic model the shipped one is
(``fit``) is fitted on 70% of the questions and scored on the rest against the shipped model.
The model and its rows (``calibration_rows.csv.gz``) are written into the index folder,
atomically. With ``use`` the model is ``answer_model.json``, which the answer uses whenever the
index is opened with the embedding model it was fitted with; without it the model is kept as
``answer_model.candidate.json`` and the answer keeps the shipped model. Not using it is the
default because ``bench/self_calibration.py`` found that a fit on generated questions quotes
the gold less often on hand-written questions than the shipped model (the generated
questions' references are a section's first sentences, so the fit learns position, not entry
lines); the held-out comparison the command prints is on generated questions only.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ragloop
from ragloop._async import run_sync
from ragloop.calibration.collect import collect_rows
from ragloop.calibration.fit import MIN_QUESTIONS, fit_rows
from ragloop.calibration.rows import HELD, SentenceRows, held_mask, rows_bytes
from ragloop.config import OFFLINE_LLM, load_settings
from ragloop.embeddings import model_id
from ragloop.errors import ConfigError
from ragloop.nodes.answer_model import INDEX_MODEL, AnswerModel, load_model, model_for_index
from ragloop.nodes.extractive import AnswerWeights
from ragloop.pipeline import build_pipeline
from ragloop.providers import get_embeddings
from ragloop.retrievers.index import KEPT_ACROSS_REBUILDS, read_manifest
from ragloop.safety import atomic_write_bytes, atomic_write_text, folder_lock
from ragloop.testset import generate
from ragloop.testset.offline import PARAPHRASED, SPECIFIC, UNANSWERABLE

ROWS_FILE = KEPT_ACROSS_REBUILDS[1]
#: where a fit goes when it is not put to use (``--use`` not given): kept, never read by the answer
CANDIDATE = KEPT_ACROSS_REBUILDS[2]
#: the kinds generated: single-passage questions (a reference sentence to label by) and
#: unanswerable near misses (they choose the "not found" level)
MIX = {SPECIFIC: 0.45, PARAPHRASED: 0.35, UNANSWERABLE: 0.2}
Progress = Callable[[str, int, int], None]


@dataclass
class Plan:
    """What a calibration of ``index`` reads and writes."""

    index: Path
    corpus: str
    embeddings: str
    embeddings_model: str
    size: int
    seed: int
    in_use: str
    use: bool = False
    writes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": str(self.index),
            "corpus": self.corpus,
            "embeddings": self.embeddings,
            "embeddings_model": self.embeddings_model,
            "questions": self.size,
            "seed": self.seed,
            "answer_model_in_use": self.in_use,
            "use": self.use,
            "writes": self.writes,
        }


def plan(index: str | Path, size: int, seed: int, use: bool = False) -> Plan:
    """Check the index and the request; say what a calibration would do (nothing runs)."""
    if size < 2 * MIN_QUESTIONS:
        raise ConfigError(
            f"--size {size} is too few: calibration needs at least {2 * MIN_QUESTIONS} "
            "questions (a share is held out to score the fit); 150 or more is better"
        )
    folder = Path(index)
    manifest = read_manifest(folder)  # "no index at ...: build one with ..."
    spec = str(manifest.get("embeddings") or "")
    built = str(manifest.get("embeddings_model") or "")
    if not spec or not built:
        raise ConfigError(
            f"the index at {folder} does not record its embedding model (built by an older "
            f"ragloop): rebuild it with `ragloop index CORPUS --out {folder} --force`"
        )
    _, in_use = model_for_index(folder, built)
    return Plan(
        index=folder,
        corpus=str(manifest.get("corpus_dir", "")),
        embeddings=spec,
        embeddings_model=built,
        size=size,
        seed=seed,
        in_use=in_use,
        use=use,
        writes=[str(folder / (INDEX_MODEL if use else CANDIDATE)), str(folder / ROWS_FILE)],
    )


def handset_model() -> AnswerModel:
    """The hand-set ``AnswerWeights`` in the model's form (identity link)."""
    w = AnswerWeights()
    coef = {
        "cosine": 1.0,
        "name_sentence": w.name_sentence,
        "name_heading": w.name_heading,
        "heading_cosine": w.heading_cosine,
        "name_entry": w.name_entry,
        "subject_entry": w.subject_entry,
        "evidence": w.evidence,
    }
    return AnswerModel(coef=coef, intercept=0.0, link="identity")


def worse_than_baseline(scores: dict[str, Any]) -> str:
    """Why a fit should not be put to use, from its held-out scores (``fit_rows``): its best
    sentence held the reference less often than the baseline's (the model the answer uses
    otherwise) on the fit's own held-out questions; "" when it did not, or nothing was scored.

    Generated questions flatter a fit (their references are a section's first sentences), so
    a fit that loses even on them is a fit to keep as a candidate only."""
    best = scores.get("best_sentence_holds_gold", {})
    mine = best.get("model")
    other = next(((k, v) for k, v in best.items() if k != "model"), None)
    if mine is None or other is None or other[1] is None or mine >= other[1]:
        return ""
    return (
        f"on its own held-out questions its best sentence held the reference less often than "
        f"the {other[0]} model's ({mine} < {other[1]})"
    )


@dataclass
class Calibration:
    """The outcome: the model written, its rows and how it scored against the shipped one;
    ``not_used``: why a fit asked to be used was kept as a candidate instead ("" if it was
    not)."""

    plan: Plan
    model: AnswerModel
    rows: SentenceRows
    generated: dict[str, int]
    seconds: float
    not_used: str = ""

    @property
    def written(self) -> str:
        """Where the model was written: the model in use, or the candidate file."""
        if self.not_used:
            return str(Path(self.plan.writes[0]).with_name(CANDIDATE))
        return self.plan.writes[0]

    @property
    def used(self) -> bool:
        return self.plan.use and not self.not_used

    def to_dict(self) -> dict[str, Any]:
        p = self.model.provenance
        return {
            **self.plan.to_dict(),
            "model": self.written,
            "used": self.used,
            "not_used": self.not_used,
            "generated": self.generated,
            "rows": len(self.rows),
            "questions_with_rows": self.rows.questions,
            "held_out": p.get("held_out", {}),
            "not_found_below": self.model.not_found_below,
            "floor_share": self.model.floor_share,
            "coef": self.model.coef,
            "intercept": self.model.intercept,
            "seconds": round(self.seconds, 1),
        }


def fit_model(
    rows: SentenceRows,
    *,
    seed: int,
    embeddings_model: str,
    baseline: AnswerModel | None,
    sha256: str,
    extra: dict[str, Any] | None = None,
) -> AnswerModel:
    """The calibrated model of ``rows`` (70/30 question split by ``seed``), with provenance."""
    held = held_mask(rows.qid, seed)
    base = baseline or handset_model()
    fit = fit_rows(
        rows,
        ~held,
        baselines={"shipped" if baseline else "hand-set": lambda x: base.probability(x)},
        held=held,
    )
    return AnswerModel(
        coef=fit.coef,
        intercept=fit.intercept,
        link="logistic",
        not_found_below=fit.not_found_below,
        floor_share=fit.floor_share,
        # "not found" stays the shipped question-level fit's: on generated questions no level
        # tells the answerable from the unanswerable ones (docs/answer-quality.md)
        abstain=dict(baseline.abstain) if baseline else {},
        stop_level=fit.stop_level,
        provenance={
            "training_data": ROWS_FILE,
            "sha256": sha256,
            "rows": len(rows),
            "questions": rows.questions,
            "train_rows": fit.train_rows,
            "held_out_rows": fit.held_rows,
            "split": f"questions by sha1(seed/qid), {HELD:.0%} held out; quotable answerable rows",
            "seed": seed,
            "embeddings_model": embeddings_model,
            "ragloop_version": ragloop.__version__,
            "model": "logistic regression, L2 (C=1), standardised features, Newton (numpy)",
            "features": list(rows.features),
            "held_out": fit.scores,
            "tradeoff_train": [[t, round(a, 3), round(u, 3)] for t, a, u in fit.curve],
            "abstention": "the shipped fit's" if baseline and baseline.abstain else "none",
            **(extra or {}),
        },
    )


def calibrate(
    index: str | Path,
    *,
    size: int = 150,
    seed: int = 0,
    progress: Progress | None = None,
    write: bool = True,
    use: bool = False,
    force: bool = False,
) -> Calibration:
    """Generate, answer, label, fit and (with ``write``) write into the index folder (see the
    module docstring): as ``answer_model.json`` with ``use``, else as the candidate file the
    answer never reads. A fit that did worse than the model in use on its own held-out
    questions (``worse_than_baseline``) is written as the candidate even with ``use``,
    unless ``force``."""
    started = time.perf_counter()
    p = plan(index, size, seed, use)
    # offline whatever the environment sets (RAGLOOP_LLM): the fit is of the offline answer
    settings = load_settings(
        index_dir=p.index, embeddings=p.embeddings, web="off", llm=OFFLINE_LLM,
        judge="offline", answer="extractive",
    )  # fmt: skip
    emb = get_embeddings(settings.embeddings, env={})
    if model_id(emb) != p.embeddings_model:
        raise ConfigError(
            f"the index at {p.index} holds vectors of {p.embeddings_model}, but embeddings "
            f"'{p.embeddings}' load {model_id(emb)} here: rebuild the index"
        )
    ts = generate(
        p.index, size, seed=seed, mix=MIX,
        progress=(lambda d, t: progress("generating questions", d, t)) if progress else None,
    )  # fmt: skip
    if not ts.rows:
        raise ConfigError("no question could be generated from this corpus: " + "; ".join(ts.notes))
    pipe = build_pipeline(settings, env={}, embeddings=emb, retrieval="always")
    rows = run_sync(
        collect_rows(
            pipe, ts.rows, corpus=Path(p.corpus).name or "corpus",
            progress=(lambda d, t: progress("answering", d, t)) if progress else None,
        )
    )  # fmt: skip
    data = rows_bytes(rows)
    model = fit_model(  # raises (and nothing is written) when the rows are too few
        rows,
        seed=seed,
        embeddings_model=p.embeddings_model,
        baseline=load_model(embeddings_model=p.embeddings_model),
        sha256=hashlib.sha256(data).hexdigest(),
        extra={
            "testset": {"size": size, "seed": seed, "kinds": dict(ts.kinds)},
            "corpus_fingerprint": read_manifest(p.index).get("corpus_fingerprint"),
            "fitted_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        },
    )
    why = worse_than_baseline(model.provenance.get("held_out", {})) if use and not force else ""
    done = Calibration(p, model, rows, dict(ts.kinds), time.perf_counter() - started, why)
    if write:
        with folder_lock(p.index):  # a rebuild swaps the folder only under this lock
            atomic_write_bytes(p.index / ROWS_FILE, data)
            atomic_write_text(done.written, json.dumps(model.to_dict(), indent=1) + "\n")
    done.seconds = time.perf_counter() - started
    return done
