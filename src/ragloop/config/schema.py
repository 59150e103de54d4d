"""The settings schema: every knob, its default, bounds, help, environment variable and flags.

Everything else is derived from it: the graph's per-run ``Context`` (``ragloop.config.context``),
the experiment grid's axes (``RUN_FIELDS``) and the command-line flags (``ragloop.cli.flags``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ragloop.documents.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from ragloop.embeddings.catalogue import DEFAULT_EMBEDDINGS, LOCAL_EMBEDDINGS
from ragloop.errors import ConfigError
from ragloop.eval.metrics import DEFAULT_TEMPERATURE
from ragloop.llm.profile import PROFILES
from ragloop.plugins.models import embeddings_names
from ragloop.plugins.specs import check_chat_spec
from ragloop.retrievers.base import DEFAULT_K
from ragloop.retrievers.registry import check_retriever_names

#: the ``llm`` value that means no chat model: every step runs offline
OFFLINE_LLM = "none"

#: the default retriever order; any registered name is accepted (retrievers/registry.py)
DEFAULT_RETRIEVERS = ("hybrid", "dense", "sparse")  # fused first: best single on real docs
ENV_PREFIX = "RAGLOOP_"
#: the LLM client's defaults are the remote profile's (llm/profile.py), not copies of them
_REMOTE = PROFILES["remote"]


def _flags(*names: str) -> dict[str, Any]:
    """Schema extra naming a setting's command-line flags (default: ``--`` + dashed name)."""
    return {"flags": list(names)}


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
    """Every knob of ragloop; read from ``RAGLOOP_*`` variables by the CLI, never by nodes.

    Each field's ``description`` is its help text (CLI ``--help``, docs/configuration.md);
    ``json_schema_extra={"flags": [...]}`` names its command-line flags where they are not
    ``--`` + the name with dashes. Which commands show which flags: ``ragloop.cli.flags``.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid")

    llm: str = Field(
        OFFLINE_LLM,
        description="the chat model: none (offline), openai:<model>, any provider:<model> "
        "LangChain knows, or a registered name",
    )
    embeddings: str = Field(
        DEFAULT_EMBEDDINGS,
        description="minilm, wordllama, openai:<model> or a registered name; an index answers "
        "only with the embeddings it was built with",
    )
    index_dir: Path = Field(
        Path(".ragloop/index"),
        description="where the index lives",
        json_schema_extra=_flags("--index"),
    )
    corpus_dir: Path | None = Field(
        None,
        description="the documents answers come from (unset: the folder the index was built from)",
        json_schema_extra=_flags("--corpus"),
    )
    data_dir: Path = Field(Path(".ragloop"), description="chat memory, traces and caches")
    k: int = Field(
        DEFAULT_K, ge=1, le=100, description="chunks per retrieval", json_schema_extra=_flags("-k")
    )
    retrievers: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_RETRIEVERS),
        description="the retrievers the loop may use, first one first (comma-separated; any "
        "registered name)",
    )
    llm_timeout: float | None = Field(
        _REMOTE.timeout,
        gt=0,
        description="seconds one LLM request may take",
        json_schema_extra={**_flags("--timeout"), "profile": "timeout"},
    )
    llm_max_tokens: int | None = Field(
        _REMOTE.max_tokens,
        ge=1,
        description="most tokens one LLM reply may have (a small model otherwise writes to the "
        "end of its context)",
        json_schema_extra={**_flags("--max-tokens"), "profile": "max_tokens"},
    )
    llm_max_retries: int = Field(
        _REMOTE.max_retries,
        ge=0,
        le=20,
        description="retries of a failed LLM request by the client (the eval runner retries "
        "its jobs itself)",
        json_schema_extra={**_flags("--max-retries"), "profile": "max_retries"},
    )
    llm_profile: Literal["auto", "local", "remote"] = Field(
        "auto",
        description="LLM client profile: auto picks local for openai:<model> on a loopback "
        "OPENAI_BASE_URL",
    )
    llm_structured: Literal["auto", "json_schema", "json_object", "prompt"] = Field(
        _REMOTE.structured,  # type: ignore[arg-type]
        description="how structured replies are asked for: auto (by server), json_schema, "
        "json_object or prompt",
        json_schema_extra={"profile": "structured"},
    )
    prompts_dir: Path | None = Field(
        None, description="a folder of <name>.toml prompts replacing the built-in ones"
    )
    max_iterations: int = Field(
        _REMOTE.rounds,
        ge=0,
        le=20,
        description="hard cap on corrective loops",
        json_schema_extra={"profile": "rounds"},
    )
    max_question_chars: int = Field(
        8000,
        ge=1,
        description="the longest question (characters) a turn takes; longer input is refused",
    )
    retrieval: Literal["auto", "always", "never"] = Field(
        "auto", description="auto (decide from the draft), always or never"
    )
    web: Literal["auto", "tavily", "corpus", "off"] = Field(
        "auto",
        description="auto (Tavily with a key, else the bundled web corpus for the demo base), "
        "tavily, corpus or off",
    )
    web_corpus_dir: Path | None = Field(None, description="a folder that stands in for web search")
    relevance_keep: int = Field(
        1, ge=0, le=2, description="a chunk graded below this (0/1/2) is dropped"
    )
    relevance_threshold: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="mean relevance (0-1) under this makes the verdict irrelevant",
    )
    recall_threshold: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="context recall (0-1) under this makes the verdict incomplete",
    )
    answer_relevancy_threshold: float = Field(
        0.6, ge=0.0, le=1.0, description="a draft scoring under this needs retrieval"
    )
    temperature: float = Field(
        DEFAULT_TEMPERATURE,
        ge=0.0,
        le=1.0,
        description="strictness T of the answer-relevancy softmax the loop reports (0.1 "
        "strict, 0.5 the mean, 1.0 lenient); not the model's sampling temperature",
    )
    chunk_size: int = Field(
        DEFAULT_CHUNK_SIZE, ge=100, le=20000, description="characters per chunk"
    )
    chunk_overlap: int = Field(
        DEFAULT_CHUNK_OVERLAP,
        ge=0,
        le=5000,
        description="characters shared by neighbouring chunks",
    )
    judge_mode: Literal["standard", "second_response"] = Field(
        "standard",
        description="standard, or second_response (also judge an intermediate answer against "
        "the reference)",
    )
    judge: Literal["auto", "offline", "llm"] = Field(
        "auto",
        description="who grades chunks: auto (the model when llm is set, else offline), "
        "offline or llm",
    )
    answer: Literal["auto", "extractive", "llm"] = Field(
        "auto",
        description="who writes the answer: auto, extractive (offline, also beside an LLM "
        "judge) or llm",
    )
    database_url: str | None = Field(
        None,
        description="a PostgreSQL URL: chat memory, traces, the index and the evaluation cache "
        "move there",
    )

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
