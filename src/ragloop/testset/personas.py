"""Personas as RAGAS has them: a name and a role description that conditions the questions.

Offline, a persona decides which passages are asked about: passages are taken in order of
their idf-weighted word overlap with the description (ties keep the balanced order), and
several personas take turns. With an LLM the description is also shown to the model, which
writes the question as that person would ask it. Each row names its ``persona_name``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ragloop.errors import ConfigError
from ragloop.testset.offline import words
from ragloop.testset.passages import Passage


@dataclass(frozen=True)
class Persona:
    """RAGAS's ``Persona(name, role_description)``."""

    name: str
    role_description: str

    @classmethod
    def parse(cls, text: str) -> Persona:
        """``"name: description"`` or a bare description (named after its first words)."""
        name, sep, description = text.partition(":")
        if not sep:
            name, description = " ".join(text.split()[:3]), text
        name, description = name.strip(), description.strip()
        if not description:
            raise ConfigError(
                '--persona needs a description, e.g. "DBA: runs PostgreSQL in production"'
            )
        return cls(name, description)


def by_persona(
    passages: list[Passage], personas: list[Persona], idf: dict[str, float]
) -> Iterator[tuple[Passage, Persona | None]]:
    """Passages in the order the personas would ask about them, each with its persona."""
    if not personas:
        yield from ((p, None) for p in passages)
        return
    orders = []
    for persona in personas:
        wanted = words(persona.role_description)
        score = {p.id: sum(idf.get(w, 0.0) for w in wanted & words(p.text)) for p in passages}
        orders.append(sorted(passages, key=lambda p: -score[p.id]))
    seen: set[str] = set()
    for group in zip(*orders, strict=True):
        for persona, passage in zip(personas, group, strict=True):
            if passage.id not in seen:
                seen.add(passage.id)
                yield passage, persona
