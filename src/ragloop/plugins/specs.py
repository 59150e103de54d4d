"""What a chat model spec may be: ``none``, a registered name, or ``provider:model``."""

from __future__ import annotations

from typing import Any

from ragloop.plugins.models import chat_model_names

#: providers LangChain's ``init_chat_model`` understands (each needs its own package)
CHAT_PROVIDERS = (
    "anthropic", "azure_ai", "azure_openai", "bedrock", "bedrock_converse", "cohere",
    "deepseek", "fireworks", "google_anthropic_vertex", "google_genai", "google_vertexai",
    "groq", "huggingface", "ibm", "mistralai", "ollama", "openai", "perplexity", "together",
    "upstage", "xai",
)  # fmt: skip


def check_chat_spec(value: Any) -> str:
    """The spec, stripped, or a ``ValueError`` that lists every accepted form."""
    spec = str(value or "").strip()
    if spec == "none" or spec in chat_model_names():
        return spec
    provider, _, model = spec.partition(":")
    if provider in CHAT_PROVIDERS and model.strip():
        return spec
    registered = ", ".join(chat_model_names()) or "none yet"
    raise ValueError(
        f"llm must be 'none', '<provider>:<model>' (e.g. openai:gpt-4o-mini; providers: "
        f"{', '.join(CHAT_PROVIDERS)}) or a registered chat model (registered: {registered}); "
        f"got '{spec}'"
    )
