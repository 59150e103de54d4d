"""One LLM-client configuration for every command: a profile, then what the user set.

``remote`` suits a hosted API (OpenAI): a minute per request, two retries, a 1024-token
reply cap. ``local`` suits a server on this machine (llama.cpp, Ollama, vLLM): usually one
slot, so a retried request only queues behind the one it abandoned. It has a timeout sized to
outlast an honest request on a CPU (``LOCAL_TIMEOUT``), one retry, no retry after a timeout,
a longer backoff, a 256-token reply cap, compact prompts (no few-shot examples, a short judge
prompt) and one correction round instead of three.
``auto`` picks ``local`` for ``openai:<model>`` with a loopback ``OPENAI_BASE_URL``.
Values the user set (flag, ``RAGLOOP_LLM_*`` environment, experiment spec) win over the
profile's.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal
from urllib.parse import urlsplit

ProfileName = Literal["auto", "local", "remote"]
Structured = Literal["auto", "json_schema", "json_object", "prompt"]


#: seconds per request on a local server: long enough for an honest request on a CPU (a long
#: judge prompt read, then at most the reply cap's tokens under a JSON grammar), since the reply
#: cap, not the timeout, bounds generation; a shorter limit abandons requests that a
#: single-slot server goes on generating while the next one queues (docs/llm.md: measured)
LOCAL_TIMEOUT = 120.0


#: correction rounds on a local server (``max_iterations``)
LOCAL_ROUNDS = 1


@dataclass(frozen=True)
class ClientConfig:
    """How the LLM client behaves: limits, retries, prompt size and structured output."""

    profile: str = "remote"
    #: seconds one request may take in all (None: no limit)
    timeout: float | None = 60.0
    #: retries of a failed request (the eval runner retries its jobs with this number)
    max_retries: int = 2
    #: reply cap in tokens, sent to the server and enforced on the client
    max_tokens: int | None = 1024
    #: prompts without few-shot examples
    compact: bool = False
    #: retry a request that timed out (a single-slot server is still busy with it)
    retry_timeouts: bool = True
    #: first backoff delay in seconds (doubles per attempt)
    base_delay: float = 0.5
    #: how structured replies are asked for: auto picks by server (see ``structured_method``)
    structured: str = "auto"
    #: correction rounds of the loop after the first retrieval (``max_iterations``): each
    #: costs a judge request, and a small model's judge rarely calls the evidence sufficient,
    #: so on a local server every question ran them all (docs/llm.md: measured)
    rounds: int = 3

    def knobs(self) -> dict[str, Any]:
        """The keyword arguments ``get_chat_model`` takes."""
        return {
            "timeout": self.timeout,
            "max_tokens": self.max_tokens,
            "max_retries": self.max_retries,
        }


PROFILES = {
    "remote": ClientConfig(),
    "local": ClientConfig(
        profile="local",
        timeout=LOCAL_TIMEOUT,
        max_retries=1,
        max_tokens=256,
        compact=True,
        retry_timeouts=False,
        base_delay=2.0,
        rounds=LOCAL_ROUNDS,
    ),
}


def host_of(url: str | None) -> str:
    try:
        return (urlsplit(url or "").hostname or "").lower()
    except ValueError:
        return ""


def is_local_url(url: str | None) -> bool:
    """True for a base URL on this machine (localhost or a loopback address)."""
    host = host_of(url)
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or host == "0.0.0.0"
    except ValueError:
        return False


def is_openai_url(url: str | None) -> bool:
    """True for OpenAI's own API (no base URL, or an openai.com / Azure OpenAI host)."""
    host = host_of(url)
    return (
        not url or host == "api.openai.com" or host.endswith((".openai.com", ".openai.azure.com"))
    )


def pick_profile(spec: str, env: Mapping[str, str], requested: str = "auto") -> str:
    """``requested`` unless ``auto``: then ``local`` for openai:<model> on a loopback server."""
    if requested in PROFILES:
        return requested
    if requested != "auto":
        raise ValueError(f"unknown LLM profile '{requested}': use auto, local or remote")
    local = spec.startswith("openai:") and is_local_url(env.get("OPENAI_BASE_URL"))
    return "local" if local else "remote"


def resolve(
    spec: str,
    env: Mapping[str, str],
    *,
    profile: str = "auto",
    **explicit: Any,
) -> ClientConfig:
    """The profile's configuration with every value in ``explicit`` (user-set) applied."""
    known = {f.name for f in fields(ClientConfig)} - {"profile"}
    unknown = set(explicit) - known
    if unknown:
        raise TypeError(f"unknown LLM client settings: {', '.join(sorted(unknown))}")
    base = PROFILES[pick_profile(spec, env, profile)]
    return replace(base, **explicit)


def structured_method(base_url: str | None, requested: str = "auto") -> str:
    """How to ask an OpenAI-compatible server for JSON: its own method, else the prompt.

    ``json_schema`` (OpenAI's structured outputs) for OpenAI; ``json_object`` with the
    schema attached (what llama.cpp's server constrains its grammar with, and vLLM/Ollama
    accept) for any other server; ``prompt`` pastes the schema and parses the reply.
    """
    if requested != "auto":
        return requested
    return "json_schema" if is_openai_url(base_url) else "json_object"
