"""Command-line flags made from the settings schema, never declared by hand.

A command names the settings it takes (``@setting_flags("llm", *RUN_FLAGS)``); each becomes
an option whose flag, type, choices and help (with its environment variable and default)
come from ``ragloop.config.Settings``. Every such option defaults to None, meaning "keep the
environment's value or the setting's default", so no default is written twice. The command
receives what the user gave as ``flags``: a dict of setting name to value, to hand to
``load_settings``, which checks it like any setting (errors name the setting and its
variable). Adding a setting to ``RUN_FIELDS`` gives ask, chat, eval and experiment its flag.
"""

from __future__ import annotations

import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import typer

from ragloop.config import RUN_FIELDS, Settings, bounds_text, default_text, env_var, flags_of

F = TypeVar("F", bound=Callable[..., Any])

#: the per-run settings (the graph's Context, the experiment grid's axes)
RUN_FLAGS = RUN_FIELDS
#: the LLM client's knobs
LLM_FLAGS = ("llm_timeout", "llm_max_tokens", "llm_max_retries")
#: the parameter the decorated command receives the given settings in
GIVEN = "flags"
_PREFIX = "setting__"


@functools.cache
def _cli_type(name: str) -> type:
    """The type typer parses a setting's flag as (a choice of a ``Literal`` becomes an Enum)."""
    annotation = Settings.model_fields[name].annotation
    options = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(options) == 1:
        annotation = options[0]
    if typing.get_origin(annotation) is Literal:
        values = [str(v) for v in typing.get_args(annotation)]
        return enum.Enum(name, {v: v for v in values}, type=str)  # type: ignore[return-value]
    if typing.get_origin(annotation) is list:  # retrievers: "a,b,c", split by the setting
        return str
    if annotation in (int, float, str, Path):
        return annotation  # type: ignore[return-value]
    raise TypeError(f"setting '{name}' has a type the command line cannot take: {annotation}")


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def flag_help(name: str, text: str | None = None, *, env: bool = True) -> str:
    """The help of a setting's flag: what it does, its environment variable, bounds, default.

    ``env`` False: the command reads the setting from this flag only; a command's own
    ``text`` then says what happens without it (``eval --embeddings`` has its own default).
    """
    what = text or Settings.model_fields[name].description or name
    bounds = f"{bounds_text(name)}; " if bounds_text(name) else ""
    if env:
        return f"{what} ({env_var(name)}; {bounds}default {default_text(name)})"
    if text:
        return f"{what} (this flag only, not {env_var(name)})"
    return f"{what} (this flag only, not {env_var(name)}; default {default_text(name)})"


def option(name: str, text: str | None = None, *, env: bool = True) -> tuple[type, Any]:
    """(type, typer option) for the setting ``name``; ``text`` replaces its description;
    ``env`` False: the command reads this setting from its flag only (help says so)."""
    kind = _cli_type(name)
    metavar = "a,b" if typing.get_origin(Settings.model_fields[name].annotation) is list else None
    info = typer.Option(
        None,
        *flags_of(name),
        help=flag_help(name, text, env=env),
        show_default=False,
        metavar=metavar,
    )
    return kind | None, info  # type: ignore[return-value]


def setting_flags(
    *names: str, help: Mapping[str, str] | None = None, flag_only: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """Give a command one option per setting in ``names`` (see the module docstring).

    ``help`` replaces a setting's description for this command (``--llm`` of ``eval`` is the
    judge model); the environment variable and default are still added. ``flag_only``: the
    settings this command takes from its flag alone, not from the environment.
    """
    texts = dict(help or {})
    unknown = [n for n in [*names, *texts, *flag_only] if n not in Settings.model_fields]
    if unknown:
        raise TypeError(f"no such setting: {', '.join(unknown)}")

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        if GIVEN not in signature.parameters:
            raise TypeError(f"{fn.__name__} must take a '{GIVEN}' parameter")
        hints = typing.get_type_hints(fn)
        params = [p for p in signature.parameters.values() if p.name != GIVEN]
        annotations = {p.name: hints[p.name] for p in params if p.name in hints}
        for name in dict.fromkeys(names):
            kind, info = option(name, texts.get(name), env=name not in flag_only)
            param = _PREFIX + name
            params.append(
                inspect.Parameter(
                    param, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind
                )
            )
            annotations[param] = kind

        @functools.wraps(fn)
        def command(*args: Any, **kwargs: Any) -> Any:
            given = {
                key.removeprefix(_PREFIX): _plain(kwargs.pop(key))
                for key in list(kwargs)
                if key.startswith(_PREFIX)
            }
            return fn(*args, **kwargs, **{GIVEN: {k: v for k, v in given.items() if v is not None}})

        command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = annotations
        return command  # type: ignore[return-value]

    return decorate


def commands_with(app: typer.Typer, setting: str) -> list[str]:
    """The commands of ``app`` that take ``setting`` as a flag, in order of name."""
    commands: dict[str, Any] = getattr(typer.main.get_command(app), "commands", {})
    return sorted(
        name
        for name, command in commands.items()
        if any(p.name == _PREFIX + setting for p in command.params)
    )


def settings_table(app: typer.Typer) -> str:
    """The settings table of docs/configuration.md, made from the schema and ``app``'s commands."""
    rows = [
        "| setting | environment | flag | default | what it does |",
        "|---|---|---|---|---|",
    ]
    for name, info in Settings.model_fields.items():
        commands = commands_with(app, name)
        flag = f"`{'`, `'.join(flags_of(name))}` ({', '.join(commands)})" if commands else ""
        what = str(info.description).replace("<", "\\<")  # <model> is no HTML tag
        bounds = f" ({bounds_text(name)})" if bounds_text(name) else ""
        rows.append(
            f"| `{name}` | `{env_var(name)}` | {flag} | `{default_text(name)}` | {what}{bounds} |"
        )
    return "\n".join(rows) + "\n"
