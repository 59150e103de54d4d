"""One small error hierarchy; every message says how to fix the problem."""

from __future__ import annotations


class RagloopError(Exception):
    """Base of every error ragloop raises on purpose."""


class ConfigError(RagloopError, ValueError):
    """A setting or argument has a value ragloop cannot use."""


class ProviderError(RagloopError):
    """A model or embeddings provider cannot be built (missing key, unknown spec)."""


class CorpusError(RagloopError):
    """A corpus folder is missing, empty or unreadable."""


class IndexError_(RagloopError):
    """A persisted index is missing, stale or built with other settings."""


class UnknownNameError(RagloopError, KeyError):
    """A registry lookup failed; the message lists the known names."""

    def __str__(self) -> str:  # KeyError would wrap the message in quotes
        return str(self.args[0]) if self.args else ""


class MissingColumnsError(RagloopError, ValueError):
    """A sample lacks the columns a metric needs."""

    def __init__(self, metric: str, missing: list[str]):
        self.metric = metric
        self.missing = list(missing)
        cols = ", ".join(missing)
        produced = {"response", "retrieved_contexts"} & set(missing)
        super().__init__(
            f"metric '{metric}' needs column(s) {cols} which the sample lacks or leaves empty: "
            f"add {cols} to the dataset" + (" or run the pipeline first" if produced else "")
        )


class LLMError(RagloopError):
    """The LLM server failed after the retries: the message names it and what to do."""


class DatasetError(RagloopError, ValueError):
    """A dataset file or row cannot be read."""


def unknown_name(kind: str, name: str, known: list[str] | tuple[str, ...]) -> UnknownNameError:
    """Build the error for an unknown registry name, listing the known ones."""
    return UnknownNameError(f"unknown {kind} '{name}'; known {kind}s: {', '.join(sorted(known))}")
