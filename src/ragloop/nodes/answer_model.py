"""A fitted sentence scorer for the extractive answer, read from a JSON data file.

``bench/calibrate.py`` fits a logistic regression on labelled sentence rows (does this
sentence hold the passage that answers?) and writes its coefficients with their provenance:
the training data's hash, the split, the seed and the held-out scores. The same file gives the
abstention model: a second logistic regression, on ``question.QUESTION_FEATURES``, of
whether the read passages answer the question at all, with the level below which the offline
answer says the documents do not seem to answer (chosen on the unanswerable questions'
trade-off curve). It comes in two fits: ``judged`` for passages a judge measured (the loop's),
``unjudged`` for passages without evidence (a retriever's top k read as they come). A file
without one falls back to the best sentence's probability against ``not_found_below``.
Nothing read from the file runs code: it is numbers and names, checked on load.
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragloop.errors import ConfigError
from ragloop.nodes.question import QUESTION_FEATURES
from ragloop.nodes.sentences import FEATURES
from ragloop.retrievers.index import KEPT_ACROSS_REBUILDS

#: the shipped model (``bench/calibrate.py`` writes it), fitted on the default embeddings
SHIPPED = "answer_model.json"
#: shipped fits for other embedding models: ``answer_model.<name>.json`` (``bench/calibrate.py
#: --embeddings NAME`` writes one); each serves the embedding model its provenance names
SHIPPED_OTHERS = "answer_model.*.json"
#: the model ``ragloop calibrate`` fitted on an index's own corpus, kept in the index folder
INDEX_MODEL = KEPT_ACROSS_REBUILDS[0]


@dataclass(frozen=True)
class Abstention:
    """P(the read passages answer) = sigmoid(intercept + coef . question features); the
    answer says "not found" below ``level``."""

    coef: dict[str, float]
    intercept: float
    level: float

    def probability(self, features: dict[str, float]) -> float:
        z = self.intercept + sum(w * features.get(f, 0.0) for f, w in self.coef.items())
        return float(1.0 / (1.0 + math.exp(-min(max(z, -30.0), 30.0))))

    def to_dict(self) -> dict[str, Any]:
        return {"coef": self.coef, "intercept": self.intercept, "level": self.level}


@dataclass(frozen=True)
class AnswerModel:
    """Linear sentence scorer: P(sentence answers) = sigmoid(intercept + coef . features), or,
    with ``link="identity"``, the linear score itself (the hand-set weights in this form)."""

    coef: dict[str, float]
    intercept: float
    link: str = "logistic"
    #: the best sentence's probability below which the answer says "not found"
    not_found_below: float = 0.0
    #: a further sentence is quoted only when it reaches this share of the best one
    floor_share: float = 0.7
    #: the question-level abstention fits, "judged" and "unjudged" (see the module docstring)
    abstain: dict[str, Abstention] = field(default_factory=dict)
    #: the judge's evidence level at which a chunk answers alone (grade 2: the loop stops
    #: "sufficient"), fitted on the same rows; None keeps the judge's own level
    stop_level: float | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    def probability(self, rows: np.ndarray) -> np.ndarray:
        """P(answers) of each row of a (sentences x ``FEATURES``) matrix."""
        w = np.array([self.coef.get(f, 0.0) for f in FEATURES], dtype=float)
        z = self.intercept + rows @ w
        if self.link == "identity":
            return z
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "logistic",
            "link": self.link,
            "features": list(FEATURES),
            "coef": self.coef,
            "intercept": self.intercept,
            "not_found_below": self.not_found_below,
            "floor_share": self.floor_share,
            "abstain": {k: v.to_dict() for k, v in self.abstain.items()},
            **({"stop_level": self.stop_level} if self.stop_level is not None else {}),
            "provenance": self.provenance,
        }

    def abstention(self, judged: bool) -> Abstention | None:
        """The abstention fit for judged (or unjudged) passages, if the file has one."""
        return self.abstain.get("judged" if judged else "unjudged")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"answer model: {what} must be a finite number, got {value!r}")
    return float(value)


def _abstention(name: str, data: Any) -> Abstention:
    if name not in ("judged", "unjudged") or not isinstance(data, dict):
        raise ConfigError(
            f"answer model: abstain must map 'judged' / 'unjudged' to fits, got {name!r}"
        )
    coef = data.get("coef")
    if not isinstance(coef, dict) or not set(coef) <= set(QUESTION_FEATURES):
        raise ConfigError(
            f"answer model: abstain[{name}].coef must map names of {list(QUESTION_FEATURES)}"
            " to numbers"
        )
    return Abstention(
        coef={k: _number(v, f"abstain[{name}].coef[{k}]") for k, v in coef.items()},
        intercept=_number(data.get("intercept"), f"abstain[{name}].intercept"),
        level=_number(data.get("level"), f"abstain[{name}].level"),
    )


def from_dict(data: dict[str, Any]) -> AnswerModel:
    """An ``AnswerModel`` from its JSON form; a bad file is a clear error, never code run."""
    if not isinstance(data, dict) or data.get("kind") != "logistic":
        raise ConfigError("answer model: not a logistic model file (kind must be 'logistic')")
    coef = data.get("coef")
    if not isinstance(coef, dict) or not set(coef) <= set(FEATURES):
        raise ConfigError(f"answer model: coef must map names of {list(FEATURES)} to numbers")
    provenance = data.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise ConfigError("answer model: provenance must be an object")
    link = data.get("link", "logistic")
    if link not in ("logistic", "identity"):
        raise ConfigError(f"answer model: link must be 'logistic' or 'identity', got {link!r}")
    floor_share = _number(data.get("floor_share", 0.7), "floor_share")
    if not 0.0 < floor_share <= 1.0:
        raise ConfigError(f"answer model: floor_share must be in (0, 1], got {floor_share}")
    stop = data.get("stop_level")
    if stop is not None and not 0.0 < _number(stop, "stop_level") <= 1.0:
        raise ConfigError(f"answer model: stop_level must be in (0, 1], got {stop}")
    return AnswerModel(
        link=link,
        coef={k: _number(v, f"coef[{k}]") for k, v in coef.items()},
        intercept=_number(data.get("intercept"), "intercept"),
        not_found_below=_number(data.get("not_found_below", 0.0), "not_found_below"),
        floor_share=floor_share,
        abstain={k: _abstention(k, v) for k, v in (data.get("abstain") or {}).items()},
        stop_level=None if stop is None else float(stop),
        provenance=dict(provenance),
    )


def load_model(
    path: str | Path | None = None, embeddings_model: str | None = None
) -> AnswerModel | None:
    """The model in ``path``, else the shipped fit for ``embeddings_model`` (``SHIPPED`` when
    none is named); None when none is shipped, or when the fit was made on another embedding
    model's cosines than ``embeddings_model`` (their scale differs: the hand-set weights, which
    never say "not found", serve instead)."""
    if path is None:
        return _shipped(embeddings_model)
    model = _read(Path(path).read_text(encoding="utf-8"), str(path))
    fitted_on = model.provenance.get("embeddings_model")
    if embeddings_model and fitted_on and fitted_on != embeddings_model:
        return None
    return model


def shipped_files() -> list[str]:
    """Names of the shipped fits: ``SHIPPED`` first, then the other embedding models' fits."""
    data = resources.files("ragloop.data")
    others = sorted(
        ref.name
        for ref in data.iterdir()
        if fnmatch.fnmatch(ref.name, SHIPPED_OTHERS) and ref.is_file()
    )
    main = [SHIPPED] if data.joinpath(SHIPPED).is_file() else []
    return main + [n for n in others if n != SHIPPED]


def shipped_fit(embeddings_model: str | None) -> tuple[str, AnswerModel] | None:
    """(file name, model) of the shipped fit that serves ``embeddings_model`` (``SHIPPED``
    when None), or None when no shipped fit does."""
    data = resources.files("ragloop.data")
    for name in shipped_files():
        model = _read(data.joinpath(name).read_text(encoding="utf-8"), name)
        fitted_on = model.provenance.get("embeddings_model")
        if not embeddings_model or not fitted_on or fitted_on == embeddings_model:
            return name, model
    return None


def _shipped(embeddings_model: str | None) -> AnswerModel | None:
    found = shipped_fit(embeddings_model)
    return found[1] if found else None


def _read(text: str, where: str) -> AnswerModel:
    try:
        return from_dict(json.loads(text))
    except ValueError as exc:
        raise ConfigError(f"answer model {where}: not JSON ({exc})") from exc


def model_for_index(
    folder: str | Path | None, embeddings_model: str
) -> tuple[AnswerModel | None, str]:
    """(model, which one and why) the answer uses over the index in ``folder``: its own
    calibration (``ragloop calibrate``) when one was fitted with this embedding model, else the
    shipped model when it serves this embedding model, else None (the hand-set weights)."""
    own = Path(folder) / INDEX_MODEL if folder is not None else None
    note = ""
    if own is not None and own.is_file():
        model = load_model(own)
        assert model is not None
        fitted_on = model.provenance.get("embeddings_model")
        if fitted_on == embeddings_model:
            questions = model.provenance.get("questions", "?")
            return model, f"calibrated on this corpus ({own.name}, {questions} questions)"
        note = f"; {own.name} was fitted with embeddings {fitted_on}, not these"
    shipped = load_model(embeddings_model=embeddings_model)
    if shipped is not None:
        return shipped, f"shipped fit{note}"
    return None, f"hand-set weights (no fit for embeddings {embeddings_model}){note}"
