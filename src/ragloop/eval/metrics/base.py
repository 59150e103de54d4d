"""The one metric base class: name, columns, range, ``ascore`` and a loop-safe ``score``."""

from __future__ import annotations

import asyncio
import importlib
import math
import pkgutil
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from ragloop._async import run_sync
from ragloop.errors import MissingColumnsError, RagloopError, unknown_name
from ragloop.eval.schema import MultiTurnSample, Sample, SingleTurnSample, to_sample

NAN = float("nan")

#: every concrete metric class, by its ``name`` (filled by ``Metric.__init_subclass__``)
REGISTRY: dict[str, type[Metric]] = {}


@dataclass
class MetricResult:
    """A score with the reason behind it; ``value`` is NaN when it could not be measured."""

    value: float
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return not math.isnan(self.value)

    def __float__(self) -> float:
        return float(self.value)


def nan(reason: str, **details: Any) -> MetricResult:
    """An unmeasured result: NaN with the reason it could not be computed."""
    return MetricResult(NAN, reason, dict(details))


class Metric(ABC):
    """Base of every metric.

    Subclasses set ``name``, ``required_columns``, ``output_type`` and ``value_range`` and
    implement ``_ascore``. ``ascore`` checks the columns (raising ``MissingColumnsError``)
    and turns any unexpected failure into NaN with a reason, so one sample never kills a run.
    """

    name: ClassVar[str]
    required_columns: ClassVar[tuple[str, ...]] = ()
    output_type: ClassVar[Literal["continuous", "discrete", "binary"]] = "continuous"
    value_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    needs_llm: ClassVar[bool] = False
    needs_embeddings: ClassVar[bool] = False
    #: True: multi-turn samples only; False: single-turn only; None: both (RAGAS rubrics)
    multi_turn: ClassVar[bool | None] = False
    #: other names the metric is found by (old ragloop names)
    aliases: ClassVar[tuple[str, ...]] = ()
    #: picked by ``evaluate`` when no metric is named and the columns allow it
    in_defaults: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and not getattr(cls, "__abstractmethods__", None):
            REGISTRY[cls.name] = cls
            for alias in cls.__dict__.get("aliases", ()):
                REGISTRY[alias] = cls

    def __init__(
        self,
        *,
        llm: BaseChatModel | None = None,
        embeddings: Embeddings | None = None,
        **params: Any,
    ):
        self.llm = llm
        self.embeddings = embeddings
        for key, value in params.items():
            if not hasattr(self, key):
                raise RagloopError(f"metric '{self.name}' has no parameter '{key}'")
            setattr(self, key, value)
        if self.needs_llm and llm is None:
            raise RagloopError(
                f"metric '{self.name}' needs an LLM: pass llm=... (or --llm SPEC), "
                f"or use an offline metric instead"
            )
        if self.needs_embeddings and embeddings is None:
            raise RagloopError(
                f"metric '{self.name}' needs embeddings: pass embeddings=... "
                "(ragloop.providers.get_embeddings('wordllama') works offline)"
            )

    def missing_columns(self, sample: Sample) -> list[str]:
        """The required columns that are absent (None) in ``sample``.

        An empty string or list is a value, scored the way RAGAS scores it (an exact match
        of two empty strings is 1.0, precision over no contexts 0.0), not a missing column.
        """
        return [col for col in self.required_columns if getattr(sample, col, None) is None]

    def accepts(self, sample: Sample) -> bool:
        """Whether this metric scores samples of ``sample``'s kind (single- or multi-turn)."""
        return self.multi_turn is None or isinstance(sample, MultiTurnSample) == self.multi_turn

    def check(self, sample: Sample | dict[str, Any]) -> Sample:
        """Coerce ``sample`` and raise ``MissingColumnsError`` naming each missing column."""
        sample = to_sample(sample)
        if not self.accepts(sample):
            kind = "multi-turn" if self.multi_turn else "single-turn"
            raise RagloopError(f"metric '{self.name}' scores {kind} samples only")
        missing = self.missing_columns(sample)
        if missing:
            raise MissingColumnsError(self.name, missing)
        return sample

    async def ascore(self, sample: Sample | dict[str, Any]) -> MetricResult:
        """Score one sample; NaN with a reason when it cannot be computed."""
        checked = self.check(sample)
        try:
            result = await self._ascore(checked)
        except (asyncio.CancelledError, MissingColumnsError):
            raise
        except TimeoutError:
            return nan("timeout")
        except Exception as exc:  # noqa: BLE001 - a metric never kills a run
            return nan(f"{type(exc).__name__}: {exc}")
        return result

    def score(self, sample: Sample | dict[str, Any]) -> MetricResult:
        """Sync wrapper of ``ascore``; also works inside a running loop (Jupyter)."""
        return run_sync(self.ascore(sample))

    @abstractmethod
    async def _ascore(self, sample: Any) -> MetricResult:
        """Compute the score for a sample whose columns were checked."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class MultiTurnMetric(Metric, ABC):
    """A metric over ``MultiTurnSample`` (a conversation)."""

    multi_turn: ClassVar[bool | None] = True


class SingleTurnMetric(Metric, ABC):
    """A metric over ``SingleTurnSample``."""

    async def _ascore(self, sample: SingleTurnSample) -> MetricResult:  # type: ignore[override]
        return await self._single_turn_ascore(sample)

    @abstractmethod
    async def _single_turn_ascore(self, sample: SingleTurnSample) -> MetricResult:
        """Score a checked single-turn sample."""


def _load_all() -> None:
    """Import every metric module of this folder (each registers its metrics)."""
    for mod in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not mod.name.startswith("_"):
            importlib.import_module(f"ragloop.eval.metrics.{mod.name}")


def metric_names() -> list[str]:
    """Names of every known metric."""
    _load_all()
    return sorted(REGISTRY)


def get_metric_class(name: str) -> type[Metric]:
    """Look a metric class up by its RAGAS name; unknown names list the known ones."""
    _load_all()
    try:
        return REGISTRY[name]
    except KeyError:
        raise unknown_name("metric", name, list(REGISTRY)) from None


def get_metric(name: str, **kwargs: Any) -> Metric:
    """Build a metric by name with ``llm=``/``embeddings=``/parameters."""
    return get_metric_class(name)(**kwargs)
