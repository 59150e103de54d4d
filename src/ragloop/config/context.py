"""Views derived from the settings schema: the graph's per-run ``Context`` and its checks.

``Context`` has one field per ``RUN_FIELDS`` setting (plus ``correct_order`` and ``prompts``),
each taking its default and bounds from ``Settings``; nothing here repeats a default.
"""

from __future__ import annotations

import functools
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, make_dataclass, replace
from typing import Annotated, Any

from pydantic import Field, Strict, TypeAdapter, ValidationError

from ragloop.config.fields import default_of as _default
from ragloop.config.fields import profile_run_values
from ragloop.config.schema import RUN_FIELDS, Settings
from ragloop.errors import ConfigError

_CHECKED_CONTEXT_FIELDS = tuple(name for name in RUN_FIELDS if name != "retrievers")


@functools.cache
def _field_adapter(name: str) -> TypeAdapter[Any]:
    """A validator of one Settings field (type and bounds), strict about bools and NaN."""
    info = Settings.model_fields[name]
    strict = Strict() if info.annotation is int else Field()
    return TypeAdapter(Annotated[info.annotation, *info.metadata, strict])  # type: ignore[arg-type]


#: the corrective actions ``correct_order`` may name (nodes/correct.py)
CORRECT_ACTIONS = ("rewrite", "swap", "web")


def _names_problem(name: str, value: Any) -> str | None:
    """What is wrong with a ``retrievers``/``correct_order`` value, or None (as Settings has it).

    Retriever names are checked against the pipeline's own retrievers when it runs (a caller
    may hand in unregistered ones); here: a non-empty list of names, none twice.
    """
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return "must be a list of names"
    if len(set(value)) != len(value):
        return "must not repeat a name"
    if name == "retrievers" and not value:
        return "must name at least one retriever"
    unknown = [v for v in value if name == "correct_order" and v not in CORRECT_ACTIONS]
    if unknown:
        return f"unknown action '{unknown[0]}'; known actions: {', '.join(CORRECT_ACTIONS)}"
    return None


def context_of(runtime: Any, default: Context | None = None) -> Context:
    """The run's Context. A caller (a server client) that sent none gets ``default`` (the
    server's settings) or the built-in defaults; a dict it sent overrides those fields only."""
    ctx = getattr(runtime, "context", None)
    if ctx is not None and not isinstance(ctx, dict):
        return ctx  # type: ignore[no-any-return]
    # built only when needed: every node reads its context, and a Context checks its fields
    base = default or Context()
    return base if ctx is None else replace(base, **ctx)


@dataclass(frozen=True)
class Context:
    """Plain per-run configuration handed to the graph as its LangGraph context."""

    retrievers: tuple[str, ...] = _default("retrievers")
    k: int = _default("k")
    max_iterations: int = _default("max_iterations")
    retrieval: str = _default("retrieval")
    relevance_keep: int = _default("relevance_keep")
    relevance_threshold: float = _default("relevance_threshold")
    recall_threshold: float = _default("recall_threshold")
    answer_relevancy_threshold: float = _default("answer_relevancy_threshold")
    #: T of the answer-relevancy softmax the loop reports (0.1 strict, 0.5 mean, 1.0 lenient)
    temperature: float = _default("temperature")
    judge_mode: str = _default("judge_mode")
    #: corrective actions to try, in order; empty = by verdict (see nodes/correct.py)
    correct_order: tuple[str, ...] = ()
    prompts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a server context arrives as JSON: a list or "a,b" string becomes the tuple
        problems = []
        for name in ("retrievers", "correct_order"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            problem = _names_problem(name, value)
            if problem:
                problems.append(f"context '{name}' = {value!r}: {problem}")
            elif not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        # per-run overrides (pipe.run(q, max_iterations=200), a server context) are held to
        # the same bounds as Settings: no runaway loops, no inf/NaN thresholds
        for name in _CHECKED_CONTEXT_FIELDS:
            try:
                _field_adapter(name).validate_python(getattr(self, name))
            except ValidationError as exc:
                msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
                problems.append(f"context '{name}' = {getattr(self, name)!r}: {msg}")
        if problems:
            raise ConfigError("; ".join(problems) + " (the same bounds as the settings)")

    @classmethod
    def from_settings(
        cls, settings: Settings, env: Mapping[str, str] | None = None, **overrides: Any
    ) -> Context:
        """The context for one run: settings first (a value the user left unset takes the LLM
        client profile's, picked with ``env``, default ``os.environ``), then explicit
        overrides."""
        values: dict[str, Any] = {name: getattr(settings, name) for name in RUN_FIELDS}
        values.update(profile_run_values(settings, os.environ if env is None else env))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def context_schema_for(defaults: Context) -> type[Context]:
    """A ``Context`` whose field defaults are ``defaults`` (a server's settings).

    LangGraph builds a run's context from the graph's schema, so a client that sends only
    ``{"k": 2}`` keeps the server's other settings, and the published schema shows them.
    """
    hints = typing.get_type_hints(Context)
    spec: list[tuple[str, Any, Any]] = []
    for f in fields(Context):
        value = getattr(defaults, f.name)
        if isinstance(value, dict):
            spec.append(
                (f.name, hints[f.name], field(default_factory=functools.partial(dict, value)))
            )
        else:
            spec.append((f.name, hints[f.name], field(default=value)))
    made = make_dataclass("Context", spec, bases=(Context,), frozen=True)
    made.__doc__ = Context.__doc__
    made.__module__ = Context.__module__
    return made
