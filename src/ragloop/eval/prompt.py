"""A prompt as data: an instruction and few-shot examples, read from a TOML file by name.

The graph's and the test-set writer's prompts ship as ``ragloop/prompts/<name>.toml``;
a folder of the user's (``RAGLOOP_PROMPTS_DIR``) holding a file of the same name replaces
one. A file is data (``tomllib``): it holds text, never code, and a bad one is an error
naming the file and the key. The typed output model stays with the code that reads the
reply; the schema is rendered from it.
"""

from __future__ import annotations

import functools
import json
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from ragloop.errors import ConfigError

BUILTIN = "prompts"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


@functools.lru_cache(maxsize=256)
def schema_of(output_model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of an output model (built once per model: it is costly)."""
    return output_model.model_json_schema()


@functools.lru_cache(maxsize=256)
def _schema_text(output_model: type[BaseModel]) -> str:
    return json.dumps(schema_of(output_model), ensure_ascii=False)


def shape_of(schema: dict[str, Any], root: dict[str, Any] | None = None) -> str:
    """A one-line sketch of the JSON a schema asks for: ``{"c1": <0|1|2>, "k1": <true|false>}``.

    What a compact prompt shows a small model instead of the schema itself: the keys in order
    and each value's kind, without titles, descriptions or ``$defs`` (the server's grammar,
    where it has one, still gets the whole schema).
    """
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str):
        schema = root.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})
    if "enum" in schema:
        return "<" + "|".join(json.dumps(v) for v in schema["enum"]) + ">"
    if "const" in schema:
        return json.dumps(schema["const"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return "|".join(shape_of(o, root) for o in options)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        items = schema.get("properties", {}).items()
        return "{" + ", ".join(f"{json.dumps(k)}: {shape_of(v, root)}" for k, v in items) + "}"
    if kind == "array":
        return "[" + shape_of(schema.get("items", {}), root) + ", ...]"
    return {"boolean": "<true|false>", "null": "null"}.get(str(kind), f"<{kind or 'value'}>")


def field_notes(schema: dict[str, Any]) -> list[str]:
    """``name: description`` for each described field of a schema (its ``$defs`` too), once."""
    notes: dict[str, str] = {}
    for part in [schema, *schema.get("$defs", {}).values()]:
        for name, spec in part.get("properties", {}).items():
            if isinstance(spec, dict) and spec.get("description"):
                notes.setdefault(name, f"{name}: {spec['description']}")
    return list(notes.values())


@functools.lru_cache(maxsize=256)
def _shape_text(output_model: type[BaseModel]) -> str:
    schema = schema_of(output_model)
    return "\n".join([shape_of(schema), *(f"- {note}" for note in field_notes(schema))])


def _plain_item(value: Any) -> str:
    if isinstance(value, dict) and len(value) == 2 and "id" in value:
        other = next(v for k, v in value.items() if k != "id")
        return f"{value['id']}: {other}"
    if isinstance(value, str):
        return f"- {value.strip()}"
    return json.dumps(value, ensure_ascii=False, default=str)


def plain_inputs(inputs: dict[str, Any]) -> str:
    """Inputs as labelled text blocks, not JSON: text verbatim (no escaped quotes and
    newlines), a list one item a line (``k1: claim`` for an item with an id), empty ones left
    out. Compact prompts use it: a small model reads fewer tokens and plain text."""
    blocks = []
    for key, value in inputs.items():
        if value is None or (isinstance(value, str | list | dict) and not value):
            continue
        if isinstance(value, str):
            body = value.strip()
        elif isinstance(value, list):
            body = "\n".join(_plain_item(v) for v in value)
        else:
            body = json.dumps(value, ensure_ascii=False, default=str)
        blocks.append(f"{key}:\n{body}")
    return "\n\n".join(blocks)


@dataclass
class Prompt:
    """A judge prompt as data: an instruction, few-shot (input, output) pairs and a name."""

    name: str
    instruction: str
    examples: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    #: how the inputs are shown: "json" (one JSON object) or "text" (``plain_inputs``)
    inputs: str = "json"

    def render(
        self,
        inputs: dict[str, Any],
        output_model: type[BaseModel],
        *,
        schema: bool = True,
        examples: bool = True,
        compact: bool = False,
    ) -> list[BaseMessage]:
        """Messages asking for one JSON object matching ``output_model``.

        ``schema=False`` leaves the schema out (the server constrains the reply to it);
        ``examples=False`` leaves the few-shot examples out. ``compact=True`` is the prompt
        for a small local model: no examples, and the reply's shape (``shape_of``) instead of
        the schema. A prompt whose ``inputs`` is "text" shows them as ``plain_inputs``.
        """
        system = self.instruction.strip()
        if compact:
            system += f"\n\nReply with only this JSON object: {_shape_text(output_model)}"
            examples = False
        elif schema:
            system += (
                "\n\nReply with one JSON object that conforms to this JSON schema, and nothing "
                f"else:\n{_schema_text(output_model)}"
            )
        else:
            system += "\n\nReply with one JSON object."
        parts = []
        for example_in, example_out in self.examples if examples else []:
            parts.append(
                f"Example input:\n{_dump(example_in)}\nExample output:\n{_dump(example_out)}"
            )
        if self.inputs == "text":
            parts.append(plain_inputs(inputs))
        else:
            parts.append(f"Input:\n{_dump(inputs)}\nOutput:")
        return [SystemMessage(content=system), HumanMessage(content="\n\n".join(parts))]

    def with_instruction(self, instruction: str) -> Prompt:
        """A copy with another instruction (e.g. rubrics appended)."""
        return replace(self, instruction=instruction)


def _from_toml(text: str, where: str) -> Prompt:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"prompt file {where} is not valid TOML: {exc}") from None
    name, instruction = data.get("name"), data.get("instruction")
    if not isinstance(name, str) or not isinstance(instruction, str) or not instruction.strip():
        raise ConfigError(f"prompt file {where} needs text keys 'name' and 'instruction'")
    examples = []
    for n, example in enumerate(data.get("examples", [])):
        if not isinstance(example, dict) or not all(
            isinstance(example.get(k), dict) for k in ("input", "output")
        ):
            raise ConfigError(f"prompt file {where}: examples[{n}] needs tables input and output")
        examples.append((example["input"], example["output"]))
    unknown = set(data) - {"name", "instruction", "examples", "description", "inputs"}
    if unknown:
        raise ConfigError(f"prompt file {where}: unknown keys {', '.join(sorted(unknown))}")
    inputs = data.get("inputs", "json")
    if inputs not in ("json", "text"):
        raise ConfigError(f'prompt file {where}: inputs must be "json" or "text"')
    return Prompt(name=name, instruction=instruction, examples=examples, inputs=inputs)


def builtin_names() -> list[str]:
    """Names of the prompts that ship with ragloop."""
    folder = resources.files("ragloop").joinpath(BUILTIN)
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def load_prompt(name: str, folder: str | Path | None = None) -> Prompt:
    """The prompt ``name``: ``folder/<name>.toml`` when there is one, else the built-in."""
    if folder is not None:
        path = Path(folder) / f"{name}.toml"
        if path.is_file():
            return _from_toml(path.read_text(encoding="utf-8"), str(path))
    resource = resources.files("ragloop").joinpath(BUILTIN, f"{name}.toml")
    if not resource.is_file():
        known = ", ".join(builtin_names())
        raise ConfigError(f"no prompt named '{name}': the prompts are {known}")
    return _from_toml(resource.read_text(encoding="utf-8"), f"ragloop/{BUILTIN}/{name}.toml")
