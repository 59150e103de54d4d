"""Settings (environment prefix ``RAGLOOP_``) and the graph Context built from them."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, Strict, TypeAdapter, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ragloop.embeddings.catalogue import DEFAULT_EMBEDDINGS, LOCAL_EMBEDDINGS
from ragloop.errors import ConfigError
from ragloop.plugins.models import embeddings_names
from ragloop.plugins.specs import check_chat_spec
from ragloop.retrievers.registry import check_retriever_names

#: the default retriever order; any registered name is accepted (retrievers/registry.py)
DEFAULT_RETRIEVERS = ("hybrid", "dense", "sparse")  # fused first: best single on real docs
RETRIEVAL_MODES = ("auto", "always", "never")
WEB_MODES = ("auto", "tavily", "corpus", "off")


def _check_spec(value: str, kind: str, offline: tuple[str, ...]) -> str:
    value = value.strip()
    if value in offline or value.startswith("openai:") and len(value) > len("openai:"):
        return value
    allowed = ", ".join(f"'{o}'" for o in offline)
    raise ValueError(f"{kind} must be {allowed} or 'openai:<model>' (got '{value}')")


#: the numeric settings: true/false is no number for them (pydantic would read 1 and 0)
_NUMBERS = (
    "k", "llm_timeout", "llm_max_tokens", "llm_max_retries", "max_iterations", "relevance_keep",
    "relevance_threshold", "recall_threshold", "answer_relevancy_threshold", "temperature",
    "chunk_size", "chunk_overlap",
)  # fmt: skip


class Settings(BaseSettings):
    """Every knob of ragloop; read from ``RAGLOOP_*`` variables by the CLI, never by nodes."""

    model_config = SettingsConfigDict(env_prefix="RAGLOOP_", extra="forbid")

    llm: str = "none"
    embeddings: str = DEFAULT_EMBEDDINGS
    index_dir: Path = Path(".ragloop/index")
    #: the corpus the graph answers from; None = the one the index was built from, else the demo
    corpus_dir: Path | None = None
    data_dir: Path = Path(".ragloop")
    k: int = Field(5, ge=1, le=100)
    retrievers: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_RETRIEVERS)
    )
    #: seconds one LLM request may take; None = no limit
    llm_timeout: float | None = Field(60.0, gt=0)
    #: cap on tokens an LLM reply may have (a small model otherwise writes to its context end)
    llm_max_tokens: int | None = Field(1024, ge=1)
    #: retries of a failed LLM request by the client (the eval runner retries jobs itself)
    llm_max_retries: int = Field(2, ge=0, le=20)
    #: LLM client profile: auto picks "local" for openai:<model> on a loopback OPENAI_BASE_URL
    llm_profile: Literal["auto", "local", "remote"] = "auto"
    #: how structured replies are asked for: auto (by server), json_schema, json_object, prompt
    llm_structured: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    #: a folder of <name>.toml prompts replacing the built-in ones of the same name
    prompts_dir: Path | None = None
    max_iterations: int = Field(3, ge=0, le=20)
    #: the longest question (characters) a turn takes; longer input is refused with a clear error
    max_question_chars: int = Field(8000, ge=1)
    retrieval: Literal["auto", "always", "never"] = "auto"
    web: Literal["auto", "tavily", "corpus", "off"] = "auto"
    web_corpus_dir: Path | None = None
    #: a context graded below this (0/1/2 scale) is dropped as irrelevant
    relevance_keep: int = Field(1, ge=0, le=2)
    #: mean relevance (0..1) below this makes the verdict "irrelevant"
    relevance_threshold: float = Field(0.5, ge=0.0, le=1.0)
    #: context recall (0..1) below this makes the verdict "incomplete"
    recall_threshold: float = Field(0.6, ge=0.0, le=1.0)
    #: draft answer relevancy below this means retrieval is needed
    answer_relevancy_threshold: float = Field(0.6, ge=0.0, le=1.0)
    #: T of the answer-relevancy softmax the loop reports (DESIGN 5.2): 0.1 strict, 0.5 the mean
    temperature: float = Field(0.5, ge=0.0, le=1.0)
    chunk_size: int = Field(800, ge=100, le=20000)
    chunk_overlap: int = Field(120, ge=0, le=5000)
    judge_mode: Literal["standard", "second_response"] = "standard"
    #: who grades chunks: the LLM when one is set ("auto"), or always the offline judge
    judge: Literal["auto", "offline", "llm"] = "auto"
    #: who writes the answer: the LLM when one is set ("auto"), or always the extractive one
    answer: Literal["auto", "extractive", "llm"] = "auto"
    #: a PostgreSQL URL: chat memory (checkpointer) and traces move there (ragloop.serve)
    database_url: str | None = None

    @field_validator(*_NUMBERS, mode="before")
    @classmethod
    def _no_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):  # pydantic reads true as 1: `k = [true]` would run as k=1
            raise ValueError(f"must be a number, not {str(v).lower()}")
        return v

    @field_validator("llm")
    @classmethod
    def _llm(cls, v: str) -> str:
        return check_chat_spec(v)

    @field_validator("embeddings")
    @classmethod
    def _emb(cls, v: str) -> str:
        return _check_spec(v, "embeddings", (*LOCAL_EMBEDDINGS, *embeddings_names()))

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, v: str | None) -> str | None:
        if v is None or not v.strip():
            return None
        scheme = v.split("://", 1)[0].lower() if "://" in v else ""
        if scheme not in ("postgresql", "postgres"):
            raise ValueError(
                "must be a PostgreSQL URL like postgresql://user:password@host:5432/dbname "
                "(or unset it to keep state in files)"
            )
        return v.strip()

    @field_validator("retrievers", mode="before")
    @classmethod
    def _retrievers(cls, v: Any) -> list[str]:
        return check_retriever_names(v)


def load_settings(**overrides: Any) -> Settings:
    """Build Settings from the environment plus explicit overrides; errors name the setting."""
    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**clean)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"]) or "settings"
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"setting '{name}' (env RAGLOOP_{name.upper()}): {msg}")
        raise ConfigError("; ".join(lines)) from None


#: the settings one run may override: the fields of the graph's LangGraph ``Context`` (same
#: names, defaults and bounds) and the axes an experiment grid may vary
RUN_FIELDS = (
    "retrievers",
    "judge_mode",
    "max_iterations",
    "k",
    "retrieval",
    "relevance_keep",
    "relevance_threshold",
    "recall_threshold",
    "answer_relevancy_threshold",
    "temperature",
)
_CHECKED_CONTEXT_FIELDS = tuple(name for name in RUN_FIELDS if name != "retrievers")


def _default(name: str) -> Any:
    """The default of the setting ``name`` (a list as a tuple): Context repeats none by hand."""
    info = Settings.model_fields[name]
    value = info.get_default(call_default_factory=True)
    return tuple(value) if isinstance(value, list) else value


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
    base = default or Context()
    if ctx is None:
        return base
    if isinstance(ctx, dict):
        return replace(base, **ctx)
    return ctx  # type: ignore[no-any-return]


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
    def from_settings(cls, settings: Settings, **overrides: Any) -> Context:
        """The context for one run: settings first, then explicit overrides."""
        values: dict[str, Any] = {name: getattr(settings, name) for name in RUN_FIELDS}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def context_schema_for(defaults: Context) -> type[Context]:
    """A ``Context`` whose field defaults are ``defaults`` (a server's settings).

    LangGraph builds a run's context from the graph's schema, so a client that sends only
    ``{"k": 2}`` keeps the server's other settings, and the published schema shows them.
    """
    import typing
    from dataclasses import fields, make_dataclass

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
