"""The offline judge's evidence score: one number per chunk on one scale, from what it shows.

evidence = semantic part (question vs chunk cosine, mapped to 0..1 per embedding model)
         + sentence part (best sentence's coverage of the question's terms, read with its heading)
         + heading part (the heading path's coverage of the terms),
then, when the question names something, blended with how surely the heading (or the text)
names it. One of the corpus's own words ("PostgreSQL" on its docs: in over a tenth of its
chunks, ``vocabulary.common_words``) counts as neither a name nor a term. Grades: 2 at
``grade2`` and above, 1 at ``grade1``; service-mode recall is the best
evidence in hand, so it is graded, never 0/1.

The numbers are per embedding model. What is used comes from ``judge_calibration.json``
(``bench/judge_fit.py``: a search over the weights on the committed labelled chunk rows,
used only when it also wins on the corpus left out; the drop level ``grade1`` stays the one
below); ``CALIBRATIONS`` below are the weights that fit is measured against, used when the
file has no entry. ``grade2``, the "sufficient"
level, comes from the answer model's fit (``answer_model.stop_level``).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any

import numpy as np

from ragloop.config import Settings
from ragloop.errors import ConfigError
from ragloop.nodes.evidence import Lexical, lexical, question_names, split_heading


@dataclass(frozen=True)
class JudgeCalibration:
    """Weights and thresholds of the evidence score (see the module docstring)."""

    cos_low: float = 0.1  # cosine mapped to semantic 0
    cos_high: float = 0.7  # cosine mapped to semantic 1
    w_semantic: float = 0.5
    w_sentence: float = 0.35
    w_heading: float = 0.15
    w_name: float = 0.5  # share of the score that identifier matches take when there are some
    name_in_text: float = 0.6  # a name only in the text counts this much of one in the heading
    grade2: float = 0.6  # a chunk this evident answers alone: graded 2, and "sufficient"
    grade1: float = 0.15  # below this a chunk is dropped (about 2% of gold chunks are)

    def with_values(self, **values: Any) -> JudgeCalibration:
        """A copy with some numbers changed (the bench's grid search uses this)."""
        return replace(self, **values)


#: the weights ``bench/judge_fit.py`` measures its fit against (and keeps when the fit loses
#: on corpora it never saw); cosines of unrelated text sit higher for some models than others
CALIBRATIONS: dict[str, JudgeCalibration] = {
    # WordLlama's cosines are coarse: a first retrieval stops "sufficient" only on near-certain
    # evidence (grade2), else the loop looks further; chosen on bench/loop_realcorpus.py
    "wordllama": JudgeCalibration(cos_low=0.05, cos_high=0.6, grade2=0.98),
    # grid-searched on the calibration half of bench/loop_realcorpus.py (chunk AUC, and how
    # often the best-evidence chunk holds the passage), checked on the held half
    "minilm": JudgeCalibration(
        cos_low=0.3,
        cos_high=0.75,
        w_semantic=0.3,
        w_sentence=0.25,
        w_heading=0.15,
        w_name=0.3,
        name_in_text=0.3,
        # stop early only when sure; the shipped answer model's fitted stop_level (stopping
        # there loses little gold: ``calibration.fit.stop_level``) replaces this for MiniLM
        grade2=0.85,
        grade1=0.08,  # the demo base's gold chunks sit lower than the PG docs' (0.18 at p2)
    ),
}
#: the recall a chunk at ``grade2`` maps to: read from the ``recall_threshold`` setting's
#: default, so evidence at grade 2 is exactly "sufficient" unless a run asks for more
RECALL_AT_GRADE2: float = Settings.model_fields["recall_threshold"].default


def recall_of(cal: JudgeCalibration, evidence: float) -> float:
    """Graded service-mode recall: ``grade2`` maps to ``RECALL_AT_GRADE2``, 1 to 1."""
    s = min(max(cal.grade2, 1e-6), 1.0 - 1e-6)
    if evidence <= s:
        return RECALL_AT_GRADE2 * max(evidence, 0.0) / s
    return RECALL_AT_GRADE2 + (1 - RECALL_AT_GRADE2) * (min(evidence, 1.0) - s) / (1 - s)


#: the fitted weights per embedding model (``bench/judge_fit.py`` writes them)
CALIBRATION_FILE = "judge_calibration.json"


@functools.cache
def fitted_calibrations() -> dict[str, JudgeCalibration]:
    """The shipped fitted weights by embedding spec name (``CALIBRATION_FILE``); empty when
    no file ships."""
    ref = resources.files("ragloop.data").joinpath(CALIBRATION_FILE)
    if not ref.is_file():
        return {}
    try:
        data = json.loads(ref.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{CALIBRATION_FILE}: not JSON ({exc})") from exc
    return checked_calibrations(data)


def checked_calibrations(data: Any) -> dict[str, JudgeCalibration]:
    """Calibrations from a ``CALIBRATION_FILE``'s contents, checked: each entry's weights are
    numbers in [0, 1] (a cosine bound in [-1, 1], ``cos_low`` below ``cos_high``); the
    ``provenance`` and unknown keys are not read, and ``grade2`` comes from the answer model."""
    if not isinstance(data, dict):
        raise ConfigError(f"{CALIBRATION_FILE}: expected an object of embedding names")
    names = {f.name for f in fields(JudgeCalibration)} - {"grade2"}
    out = {}
    for spec, entry in data.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{CALIBRATION_FILE}: {spec}: expected an object of weights")
        values = {k: v for k, v in entry.items() if k in names}
        bad = [
            k
            for k, v in values.items()
            if isinstance(v, bool)
            or not isinstance(v, int | float)
            or not (-1.0 if k.startswith("cos_") else 0.0) <= v <= 1.0
        ]
        if bad:
            raise ConfigError(f"{CALIBRATION_FILE}: {spec}: bad value for {', '.join(bad)}")
        cal = replace(CALIBRATIONS.get(spec, JudgeCalibration()), **values)
        if cal.cos_low >= cal.cos_high:
            raise ConfigError(f"{CALIBRATION_FILE}: {spec}: cos_low must be below cos_high")
        out[str(spec)] = cal
    return out


def calibration_for(spec: str | None) -> JudgeCalibration:
    """The calibration of an embedding spec ("minilm", "wordllama", "openai:..."): the fitted
    weights shipped for it, else its hand-set ones, else the defaults."""
    if spec:
        fitted = fitted_calibrations()
        for name in (*fitted, *CALIBRATIONS):
            if spec == name or spec.startswith(name + ":"):
                return fitted.get(name) or CALIBRATIONS[name]
    return JudgeCalibration()


@dataclass(frozen=True)
class Evidence:
    """One chunk's evidence: the score, its parts, and the lexical detail behind them."""

    score: float
    semantic: float
    lex: Lexical


def score(cal: JudgeCalibration, has_names: bool, cos: float, lex: Lexical) -> Evidence:
    """The evidence score of one chunk from its cosine and its lexical evidence."""
    span = max(cal.cos_high - cal.cos_low, 1e-6)
    semantic = _unit((cos - cal.cos_low) / span)
    base = cal.w_semantic * semantic + cal.w_sentence * lex.sentence + cal.w_heading * lex.heading
    base /= max(cal.w_semantic + cal.w_sentence + cal.w_heading, 1e-6)
    if has_names and lex.names_heading:
        # every name the question gives counts: "CREATE INDEX" in the heading, not "SQL"
        per_name = [
            max(h, cal.name_in_text * t)
            for h, t in zip(lex.names_heading, lex.names_text, strict=True)
        ]
        base = (1 - cal.w_name) * base + cal.w_name * sum(per_name) / len(per_name)
    return Evidence(_unit(base), semantic, lex)


def _unit(value: float) -> float:
    """``value`` clipped to [0, 1] as ``float(np.clip(value, 0.0, 1.0))`` does (NaN stays
    NaN), without numpy's cost on one number: the judge scores every chunk it reads."""
    return float(min(max(value, 0.0), 1.0))


def grade(cal: JudgeCalibration, value: float) -> int:
    """0/1/2 from an evidence score."""
    return 2 if value >= cal.grade2 else 1 if value >= cal.grade1 else 0


def evidence_of(
    cal: JudgeCalibration,
    question: str,
    texts: list[str],
    q_vec: np.ndarray,
    vecs: np.ndarray,
    common: frozenset[str] = frozenset(),
) -> list[Evidence]:
    """Evidence of each judged text (``heading-path newline body``) given unit vectors; the
    corpus's own words (``common``, see ``vocabulary.common_words``) are not names or terms."""
    has_names = bool(question_names(question, common))
    out = []
    for text, vec in zip(texts, vecs, strict=True):
        heading, body = split_heading(text)
        lex = lexical(question, body, heading, common)
        out.append(score(cal, has_names, float(vec @ q_vec), lex))
    return out


def signals(
    question: str, found: list[Evidence], common: frozenset[str] = frozenset()
) -> dict[str, float]:
    """What the policy reads from one retrieval: did the names, the words, the meaning match?"""
    names = question_names(question, common)
    # the least surely found name: a lexical miss when any name shows nowhere
    per_name = [
        max((max(e.lex.names_heading[i], e.lex.names_text[i]) for e in found), default=0.0)
        for i in range(len(names))
    ]
    return {
        "names": float(len(names)),
        "name_found": min(per_name, default=0.0),
        "terms_found": max((e.lex.sentence for e in found), default=0.0),
        "semantic": max((e.semantic for e in found), default=0.0),
        "evidence": max((e.score for e in found), default=0.0),
    }
