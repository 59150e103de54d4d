"""Settings (environment prefix ``RAGLOOP_``) and the graph Context built from them.

``schema`` is the one settings schema (``Settings``, ``RUN_FIELDS``); ``fields`` reads what a
setting's entry says (default, variable, flags, bounds); ``context`` derives the graph's
per-run ``Context`` from it. Import any of them from here: ``from ragloop.config import ...``.
"""

from ragloop.config.context import (
    CORRECT_ACTIONS,
    Context,
    context_of,
    context_schema_for,
)
from ragloop.config.fields import (
    bounds_text,
    default_of,
    default_text,
    env_var,
    flags_of,
    profile_field,
)
from ragloop.config.schema import (
    DEFAULT_RETRIEVERS,
    ENV_PREFIX,
    OFFLINE_LLM,
    RUN_FIELDS,
    Settings,
    load_settings,
)

__all__ = [
    "CORRECT_ACTIONS",
    "DEFAULT_RETRIEVERS",
    "ENV_PREFIX",
    "OFFLINE_LLM",
    "RUN_FIELDS",
    "Context",
    "Settings",
    "bounds_text",
    "context_of",
    "context_schema_for",
    "default_of",
    "default_text",
    "env_var",
    "flags_of",
    "load_settings",
    "profile_field",
]
