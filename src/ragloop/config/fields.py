"""What each setting's schema entry says, read for the code that derives from it: its
default, environment variable, flags, the LLM client profile field it defaults to, and its
default and bounds as people read them (the help text and ``docs/configuration.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragloop.config.schema import ENV_PREFIX, RUN_FIELDS, Settings
from ragloop.llm.profile import PROFILES, pick_profile


def default_of(name: str) -> Any:
    """The default of the setting ``name`` (a list as a tuple): nothing repeats it by hand."""
    info = Settings.model_fields[name]
    value = info.get_default(call_default_factory=True)
    return tuple(value) if isinstance(value, list) else value


def env_var(name: str) -> str:
    """The environment variable of the setting ``name``: ``RAGLOOP_`` + the name in capitals."""
    return ENV_PREFIX + name.upper()


def flags_of(name: str) -> tuple[str, ...]:
    """The command-line flags of the setting ``name``."""
    extra = Settings.model_fields[name].json_schema_extra
    names = extra.get("flags") if isinstance(extra, dict) else None
    return tuple(map(str, names)) if isinstance(names, list) else ("--" + name.replace("_", "-"),)


def profile_field(name: str) -> str | None:
    """The LLM client profile's field a setting defaults to (``llm_timeout`` -> ``timeout``)."""
    extra = Settings.model_fields[name].json_schema_extra
    field_name = extra.get("profile") if isinstance(extra, dict) else None
    return field_name if isinstance(field_name, str) else None


def profile_run_values(settings: Settings, env: Mapping[str, str]) -> dict[str, Any]:
    """The per-run settings the LLM client profile sets and the user left unset.

    ``max_iterations`` is one: the ``local`` profile (``openai:<model>`` on a loopback
    ``OPENAI_BASE_URL``) runs fewer correction rounds. A value from a flag, a variable or a
    spec (pydantic's ``model_fields_set``) is the user's and stays.
    """
    profile = PROFILES[pick_profile(settings.llm, env, settings.llm_profile)]
    return {
        name: getattr(profile, field)
        for name in RUN_FIELDS
        if (field := profile_field(name)) is not None and name not in settings.model_fields_set
    }


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, tuple | list):
        return ",".join(map(str, value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def default_text(name: str) -> str:
    """The default of ``name`` as people read it; an LLM knob names each profile's value."""
    profile = profile_field(name)
    if profile is None:
        return _shown(default_of(name))
    remote = _shown(getattr(PROFILES["remote"], profile))
    local = _shown(getattr(PROFILES["local"], profile))
    return remote if local == remote else f"{remote}, {local} for a local server"


def bounds_text(name: str) -> str:
    """The bounds of a numeric setting as people read them (``1-100``, ``> 0``), or ``""``."""
    low = high = above = None
    for item in Settings.model_fields[name].metadata:
        low = getattr(item, "ge", low)
        high = getattr(item, "le", high)
        above = getattr(item, "gt", above)
    if low is not None and high is not None:
        return f"{_shown(low)}-{_shown(high)}"
    if low is not None:
        return f">= {_shown(low)}"
    return f"> {_shown(above)}" if above is not None else ""
