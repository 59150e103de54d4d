"""Traditional NLP metrics (RAGAS names): BLEU, ROUGE, exact match, presence, string similarity."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, ClassVar, cast

from ragloop.errors import ConfigError
from ragloop.eval.metrics.base import MetricResult, SingleTurnMetric, nan
from ragloop.eval.schema import SingleTurnSample
from ragloop.text import tokenize


class DistanceMeasure(StrEnum):
    """String distances NonLLMStringSimilarity can use (RAGAS' ``DistanceMeasure``)."""

    LEVENSHTEIN = "levenshtein"
    HAMMING = "hamming"
    JARO = "jaro"
    JARO_WINKLER = "jaro_winkler"


def similarity_fn(measure: DistanceMeasure | str) -> Callable[[str, str], float]:
    """The rapidfuzz normalised-similarity function for ``measure``; ConfigError if unknown."""
    from rapidfuzz.distance import Hamming, Jaro, JaroWinkler, Levenshtein

    try:
        key = DistanceMeasure(measure)
    except ValueError:
        known = ", ".join(m.value for m in DistanceMeasure)
        raise ConfigError(f"unknown distance_measure {measure!r}; use one of: {known}") from None
    table = {
        DistanceMeasure.LEVENSHTEIN: Levenshtein,
        DistanceMeasure.HAMMING: Hamming,
        DistanceMeasure.JARO: Jaro,
        DistanceMeasure.JARO_WINKLER: JaroWinkler,
    }
    return table[key].normalized_similarity


def string_similarity(a: str, b: str, measure: DistanceMeasure | str = "levenshtein") -> float:
    """Normalised string similarity in [0, 1] (1 - normalised distance), via rapidfuzz."""
    return float(similarity_fn(measure)(a, b))


class _ResponseReferenceMetric(SingleTurnMetric):
    """Shared shape of the metrics that compare ``response`` with ``reference``."""

    required_columns: ClassVar[tuple[str, ...]] = ("response", "reference")

    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        return self._compute(str(sample.response), str(sample.reference))

    @abstractmethod
    def _compute(self, response: str, reference: str) -> MetricResult:
        """Score one response against its reference."""


def _bleu(value: float) -> float:
    return min(1.0, max(0.0, value / 100.0))


class BleuScore(_ResponseReferenceMetric):
    """RAGAS ``bleu_score``, number for number: both texts split on ". ", then corpus BLEU.

    RAGAS passes the response sentences as hypotheses and each reference sentence as a
    reference stream of one line; sacrebleu pairs them line by line, so in effect only
    the first response sentence is scored (against every reference sentence). That is
    RAGAS's behaviour and kept here under its name; ``sentence_bleu_score`` scores the
    whole response. ``kwargs`` go to sacrebleu (``{"tokenize": "char"}`` for CJK text).
    """

    name = "bleu_score"
    kwargs: dict[str, Any] | None = None

    def _compute(self, response: str, reference: str) -> MetricResult:
        from sacrebleu import corpus_bleu

        hyps = response.split(". ")
        refs = [[sentence] for sentence in reference.split(". ")]
        bleu = corpus_bleu(hyps, refs, **(self.kwargs or {}))
        return MetricResult(_bleu(bleu.score), details={"bleu": str(bleu)})

    def corpus_score(self, samples: Sequence[SingleTurnSample | dict[str, Any]]) -> MetricResult:
        """Corpus BLEU over many samples (n-gram counts pooled before the geometric mean)."""
        from sacrebleu import corpus_bleu

        checked = [cast(SingleTurnSample, self.check(s)) for s in samples]  # single-turn only
        if not checked:
            return nan("no samples to score")
        hyps = [str(s.response) for s in checked]
        refs = [[str(s.reference) for s in checked]]
        bleu = corpus_bleu(hyps, refs, **(self.kwargs or {}))
        return MetricResult(_bleu(bleu.score), details={"bleu": str(bleu)})


class SentenceBleuScore(BleuScore):
    """ragloop's corrected BLEU: sentence BLEU of the whole response against the reference."""

    name = "sentence_bleu_score"
    in_defaults = False

    def _compute(self, response: str, reference: str) -> MetricResult:
        from sacrebleu import sentence_bleu

        bleu = sentence_bleu(response, [reference], **(self.kwargs or {}))
        return MetricResult(_bleu(bleu.score), details={"bleu": str(bleu)})


class _UnicodeTokenizer:
    """rouge-score tokenizer that keeps non-ASCII words (its default drops them)."""

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text)


class RougeScore(_ResponseReferenceMetric):
    """RAGAS ``rouge_score``: rouge-score with Porter stemming and its default tokenizer.

    That tokenizer keeps ASCII letters and digits only, so Korean or Russian words count
    for nothing and such texts score 0.0, as in RAGAS; ``rouge_score_unicode`` (or
    ``tokenizer="unicode"``) keeps every word.
    """

    name = "rouge_score"
    rouge_type: str = "rougeL"
    mode: str = "fmeasure"
    tokenizer: str = "default"

    _TYPES: ClassVar[tuple[str, ...]] = ("rouge1", "rouge2", "rougeL")
    _MODES: ClassVar[tuple[str, ...]] = ("fmeasure", "precision", "recall")

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        if self.rouge_type not in self._TYPES:
            allowed = ", ".join(self._TYPES)
            raise ConfigError(f"rouge_type must be one of {allowed}; got {self.rouge_type!r}")
        if self.mode not in self._MODES:
            raise ConfigError(f"mode must be one of {', '.join(self._MODES)}; got {self.mode!r}")
        if self.tokenizer not in ("default", "unicode"):
            raise ConfigError(f"tokenizer must be 'default' or 'unicode'; got {self.tokenizer!r}")
        from rouge_score import rouge_scorer, tokenizers

        self._tok: Any = (
            tokenizers.DefaultTokenizer(use_stemmer=True)
            if self.tokenizer == "default"
            else _UnicodeTokenizer()
        )
        self._scorer = rouge_scorer.RougeScorer([self.rouge_type], tokenizer=self._tok)

    def _compute(self, response: str, reference: str) -> MetricResult:
        score = self._scorer.score(reference, response)[self.rouge_type]
        reason = None
        if not self._tok.tokenize(reference) and tokenize(reference):
            reason = "no ASCII word in the reference (RAGAS tokenizer); see rouge_score_unicode"
        return MetricResult(float(getattr(score, self.mode)), reason, details=score._asdict())


class UnicodeRougeScore(RougeScore):
    """ragloop's corrected ROUGE: every word counts, whatever its script."""

    name = "rouge_score_unicode"
    tokenizer: str = "unicode"
    in_defaults = False


class ExactMatch(_ResponseReferenceMetric):
    """1.0 when the response equals the reference character for character, else 0.0."""

    name = "exact_match"
    output_type = "binary"

    def _compute(self, response: str, reference: str) -> MetricResult:
        return MetricResult(float(response == reference))


class StringPresence(_ResponseReferenceMetric):
    """1.0 when the reference occurs verbatim in the response (case-sensitive), else 0.0."""

    name = "string_present"
    output_type = "binary"

    def _compute(self, response: str, reference: str) -> MetricResult:
        return MetricResult(float(reference in response))


class NonLLMStringSimilarity(_ResponseReferenceMetric):
    """1 - normalised string distance (rapidfuzz) between response and reference."""

    name = "non_llm_string_similarity"
    distance_measure: DistanceMeasure | str = DistanceMeasure.LEVENSHTEIN

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._similarity = similarity_fn(self.distance_measure)  # validates the name early

    def _compute(self, response: str, reference: str) -> MetricResult:
        return MetricResult(float(self._similarity(reference, response)))
