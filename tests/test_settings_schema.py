"""One settings schema: flags, environment variables, the run's Context and the grid's axes.

Every per-run setting is a flag of ask, chat, eval and experiment, an environment variable, a
field of the graph's Context and an experiment grid axis, all with the one default the schema
declares; no command or module writes a setting's default a second time.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ragloop.cli import app
from ragloop.cli.flags import settings_table
from ragloop.config import (
    RUN_FIELDS,
    Context,
    Settings,
    default_of,
    default_text,
    env_var,
    flags_of,
    load_settings,
)
from ragloop.experiments.grid import AXES

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ragloop"
RUN_COMMANDS = ("ask", "chat", "eval", "experiment")


def _commands() -> dict[str, Any]:
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _other_value(name: str) -> Any:
    """A valid value of the setting ``name`` that is not its default."""
    info = Settings.model_fields[name]
    default = default_of(name)
    if typing.get_origin(info.annotation) is typing.Literal:
        return next(v for v in typing.get_args(info.annotation) if v != default)
    if isinstance(default, tuple):
        return tuple(reversed(default))
    if isinstance(default, bool):
        raise AssertionError(f"no bool run setting expected: {name}")
    if isinstance(default, int):
        high = next((m.le for m in info.metadata if hasattr(m, "le")), default + 1)
        return default + 1 if default + 1 <= high else default - 1
    return round(default / 2, 3)


def _as_arg(value: Any) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def test_every_run_field_is_a_flag_an_env_var_a_context_field_and_a_grid_axis():
    commands = _commands()
    context_fields = {f.name: f for f in dataclasses.fields(Context)}
    assert set(RUN_FIELDS) == set(AXES) == set(context_fields) - {"correct_order", "prompts"}
    for name in RUN_FIELDS:
        for command in RUN_COMMANDS:
            option = next(p for p in commands[command].params if p.name == f"setting__{name}")
            assert tuple(option.opts) == flags_of(name), (command, name)
            assert option.default is None, (command, name)  # the schema's default decides
            assert env_var(name) in option.help and default_text(name) in option.help
        # one default everywhere: the schema's, the Context's and the settings built from it
        want = default_of(name)
        assert getattr(Context(), name) == want == context_fields[name].default
        assert getattr(Context.from_settings(Settings()), name) == want


@pytest.mark.parametrize("name", RUN_FIELDS)
def test_a_run_flag_and_its_env_var_reach_the_runs_context(name, monkeypatch):
    import ragloop.pipeline

    value = _other_value(name)
    seen: list[Any] = []

    def fake_build_pipeline(settings: Settings, **kwargs: Any) -> Any:
        seen.append(Context.from_settings(settings))
        raise typer.Exit(0)  # the command stops before any work

    monkeypatch.setattr(ragloop.pipeline, "build_pipeline", fake_build_pipeline)
    for command in (["ask", "a question"], ["chat"]):
        flag = flags_of(name)[0]
        out = CliRunner().invoke(app, [*command, flag, _as_arg(value)])
        assert out.exit_code == 0, out.output
        assert getattr(seen.pop(), name) == value, (command, name)
    monkeypatch.setenv(env_var(name), _as_arg(value))
    out = CliRunner().invoke(app, ["ask", "a question"])
    assert out.exit_code == 0, out.output
    assert getattr(seen.pop(), name) == value  # the variable, with no flag given
    assert getattr(load_settings(), name) == (list(value) if isinstance(value, tuple) else value)


def test_no_command_declares_a_setting_flag_by_hand():
    """An option that uses a setting's flag must be the one made from the schema (default
    None); a hand-written ``typer.Option(5, "-k")`` would repeat the default and fails here."""
    owner = {flag: name for name in Settings.model_fields for flag in flags_of(name)}
    found = 0
    for command_name, command in _commands().items():
        for param in command.params:
            for flag in set(param.opts) & set(owner):
                found += 1
                assert param.name == f"setting__{owner[flag]}", (
                    f"ragloop {command_name} declares {flag} by hand: use "
                    f"@setting_flags('{owner[flag]}') (ragloop.cli.flags)"
                )
                assert param.default is None
    assert found > 30  # the check saw the flags it guards


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _named_defaults(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    """(name, default) of every parameter default, keyword argument and assignment."""
    pairs: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            positional = args.posonlyargs + args.args
            tail = positional[len(positional) - len(args.defaults) :]
            pairs += [(a.arg, d) for a, d in zip(tail, args.defaults, strict=True)]
            pairs += [
                (a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d
            ]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            pairs.append((node.target.id, node.value))
        elif isinstance(node, ast.Assign):
            pairs += [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.keyword) and node.arg:
            pairs.append((node.arg, node.value))
    return pairs


def copied_defaults(source: str, path: str) -> list[str]:
    """Where ``source`` writes a setting's default again under the setting's name.

    ``k: int = 5``, ``chunk_size=800`` or ``DEFAULT_K = 5`` each must equal the setting's
    default or behaviour silently drifts; a ``DEFAULT_<NAME>`` constant is allowed only when
    the schema itself reads it (it is then the one place the value is written).
    """
    schema = (SRC / "config" / "schema.py").read_text(encoding="utf-8")
    found = []
    for name, node in _named_defaults(ast.parse(source)):
        setting = name.lower().removeprefix("default_")
        if setting not in Settings.model_fields:
            continue
        value = _literal(node)
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, list):
            value = tuple(value)
        if value != default_of(setting):
            continue
        if name.startswith("DEFAULT_") and name in schema:
            continue  # the constant the schema reads: the one place it is written
        found.append(f"{path}:{node.lineno}: {name} = {value!r} copies setting '{setting}'")
    return found


def test_no_module_copies_a_settings_default():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "config" / "schema.py":
            continue  # where the defaults are declared
        found += copied_defaults(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == []
    # the check finds a copy when there is one
    planted = "def retrieve(question, k: int = 5, *, chunk_size=800):\n    return load(k=5)\n"
    assert len(copied_defaults(planted, "x.py")) == 3


def test_the_configuration_doc_table_is_the_schema():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    start = text.index("\n", text.index("<!-- settings table:")) + 1
    table = text[start : text.index("<!-- end of settings table -->")]
    assert table == settings_table(app), "regenerate it: ragloop settings"
    out = CliRunner().invoke(app, ["settings"])
    assert out.exit_code == 0 and out.output == settings_table(app)


def test_experiment_flags_override_the_specs_settings_and_a_grid_axis_still_varies(tmp_path):
    from ragloop.experiments.spec import load_spec
    from tests.test_cli_conventions import _two_config_spec

    spec = _two_config_spec(tmp_path)  # [settings] llm_max_tokens = 77; [grid] max_iterations
    checked = load_spec(spec, overrides={"k": 3, "max_iterations": 2, "llm_max_tokens": 50})
    assert checked.settings.k == 3 and checked.settings.llm_max_tokens == 50
    assert [c.settings.k for c in checked.configurations] == [3, 3]
    assert [c.context().k for c in checked.configurations] == [3, 3]  # reaches the runs
    assert [c.settings.max_iterations for c in checked.configurations] == [1, 1]  # the grid's
    bad = CliRunner().invoke(app, ["experiment", str(spec), "-q", "-k", "0"])
    assert bad.exit_code == 2 and "command-line flags: setting 'k'" in bad.output
