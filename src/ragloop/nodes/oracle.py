"""An oracle judge: the same graph, but grades come from knowing where the gold passage is.

Running the loop with it measures the policy alone (what the corrective steps can reach when
every grade is right); with ``flip`` > 0 a share of the grades is wrong, deterministically,
to show how the policy degrades with a noisy judge. Everything but ``assess`` is the wrapped
strategies' own, and the signals the policy reads are the wrapped judge's observations.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ragloop.nodes.base import Assessment

Gold = Callable[[str, str], bool]  # (question, judged chunk text) -> holds the gold passage


class OracleStrategies:
    """Wraps strategies; ``gold`` decides each grade (2 gold, 0 not), ``flip`` the noise."""

    def __init__(self, inner: Any, gold: Gold, flip: float = 0.0, seed: int = 0):
        if not 0.0 <= flip <= 1.0:
            raise ValueError(f"flip must be within [0, 1]; got {flip!r}")
        self.inner = inner
        self.gold = gold
        self.flip = flip
        self.seed = seed
        self.name = f"oracle(flip={flip:g})"

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def _flipped(self, question: str, text: str) -> bool:
        if self.flip <= 0.0:
            return False
        key = f"{self.seed}\x00{question}\x00{text}".encode()
        draw = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64
        return draw < self.flip

    def grade(self, question: str, text: str) -> int:
        """2 when the text holds the gold passage, else 0; flipped for a ``flip`` share."""
        right = self.gold(question, text)
        return 2 if right != self._flipped(question, text) else 0

    async def assess(
        self, question: str, candidates: list[str], kept: list[str], claims: list[str], keep: int
    ) -> Assessment:
        seen = await self.inner.assess(question, candidates, kept, claims, keep)
        grades = [self.grade(question, t) for t in candidates]
        pool = [g for g in grades if g >= keep] + [self.grade(question, t) for t in kept]
        found = any(g == 2 for g in pool)
        return Assessment(
            grades,
            [found] * len(claims),
            recall=1.0 if found else 0.0,
            evidence=[g / 2 for g in grades],
            signals=dict(seen.signals),
        )
