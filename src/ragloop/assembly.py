"""Assembling the models and roles a pipeline or a runner uses, from the settings.

``llm_client`` resolves the LLM client configuration (profile, then what the user set);
``chat_model_for`` / ``judge_model_for`` build the chat model for the loop / for a runner that
retries its jobs itself; ``roles_for`` picks each role's implementation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ragloop.config import Settings, profile_field
from ragloop.errors import ConfigError
from ragloop.llm.faults import with_llm_retries
from ragloop.llm.profile import ClientConfig, resolve
from ragloop.llm.retry import RetryPolicy
from ragloop.nodes.llm import LLMStrategies
from ragloop.providers import get_chat_model

#: the settings that configure the LLM client, and the profile field each one sets
_CLIENT_FIELDS = {
    name: field for name in Settings.model_fields if (field := profile_field(name)) is not None
}


def llm_client(settings: Settings, env: Mapping[str, str]) -> ClientConfig:
    """The LLM client configuration of ``settings``: its profile, then what the user set.

    A value counts as set when it came from a flag, a ``RAGLOOP_LLM_*`` variable or a
    spec (pydantic's ``model_fields_set``); an unset one takes the profile's value.
    """
    explicit = {
        option: getattr(settings, name)
        for name, option in _CLIENT_FIELDS.items()
        if name in settings.model_fields_set
    }
    return resolve(settings.llm, env, profile=settings.llm_profile, **explicit)


def chat_model_for(settings: Settings, env: Mapping[str, str] | None = None) -> Any:
    """The chat model ``settings.llm`` names, configured by its profile and what the user set.

    Retries are ragloop's own (``RetryingChatModel``, with the profile's backoff), so the
    SDK's are off; None offline.
    """
    model, client = judge_model_for(settings, env)
    return with_llm_retries(
        model,
        client.max_retries,
        retry_timeouts=client.retry_timeouts,
        base_delay=client.base_delay,
    )


def judge_model_for(settings: Settings, env: Mapping[str, str] | None = None) -> tuple[Any, Any]:
    """The chat model for a runner that retries its jobs itself, and the client configuration.

    The client makes one attempt per job attempt (no SDK retries, no ``RetryingChatModel``);
    the runner applies ``client.max_retries``, ``client.timeout`` and the profile's backoff.
    """
    env = os.environ if env is None else env
    client = llm_client(settings, env)
    return get_chat_model(settings.llm, env=env, **{**client.knobs(), "max_retries": 0}), client


def runner_options(client: Any) -> dict[str, Any]:
    """The evaluation runner's limits from an LLM client configuration (timeout, retries)."""
    return {
        "timeout": client.timeout,
        "max_retries": client.max_retries,
        "retry": RetryPolicy(
            max_retries=client.max_retries,
            base_delay=client.base_delay,
            retry_timeouts=client.retry_timeouts,
        ),
    }


def roles_for(
    settings: Settings,
    model: Any,
    emb: Any,
    offline: Any,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Each role's implementation: the LLM's where a model is set, unless ``settings.judge`` /
    ``settings.answer`` pick the offline judge / extractive answer (or ask for the LLM's)."""
    picks = (("judge", settings.judge), ("answer", settings.answer))
    wants_llm = [name for name, value in picks if value == "llm"]
    if model is None:
        if wants_llm:
            raise ConfigError(
                f"{' and '.join(wants_llm)}='llm' needs a chat model: set RAGLOOP_LLM "
                "(e.g. openai:gpt-4o-mini) or choose the offline one"
            )
        return {"strategies": offline}
    llm = LLMStrategies(
        model,
        emb,
        offline=offline,
        client=llm_client(settings, os.environ if env is None else env),
        prompts_dir=settings.prompts_dir,
    )
    return {
        "strategies": llm,
        "judge": offline if settings.judge == "offline" else llm,
        "answerer": offline if settings.answer == "extractive" else llm,
    }
