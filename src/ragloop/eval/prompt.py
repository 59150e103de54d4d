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


@dataclass
class Prompt:
    """A judge prompt as data: an instruction, few-shot (input, output) pairs and a name."""

    name: str
    instruction: str
    examples: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)

    def render(
        self,
        inputs: dict[str, Any],
        output_model: type[BaseModel],
        *,
        schema: bool = True,
        examples: bool = True,
    ) -> list[BaseMessage]:
        """Messages asking for one JSON object matching ``output_model``.

        ``schema=False`` leaves the schema out (the server constrains the reply to it);
        ``examples=False`` leaves the few-shot examples out (compact prompts).
        """
        system = self.instruction.strip()
        if schema:
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
    unknown = set(data) - {"name", "instruction", "examples", "description"}
    if unknown:
        raise ConfigError(f"prompt file {where}: unknown keys {', '.join(sorted(unknown))}")
    return Prompt(name=name, instruction=instruction, examples=examples)


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
