"""LLM calls per sample for answer_relevancy + nv_context_relevance + context_recall + faithfulness.

Runs the four metrics on one sample with 5 contexts against a scripted judge that answers
every prompt well, counts the requests each metric makes and compares the total with what
RAGAS spends (about 8 per sample). Exit code 1 when the total exceeds that budget.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragloop.eval.metrics.base import get_metric  # noqa: E402
from ragloop.eval.schema import SingleTurnSample  # noqa: E402
from tests.fakes.chat import ScriptedChatModel  # noqa: E402
from tests.fakes.embeddings import HashEmbeddings  # noqa: E402
from tests.metrics_llm_fakes import well_formed  # noqa: E402

#: RAGAS requests per sample: strictness=3 question generations, two judges, one
#: attribution call, statements + NLI verdicts
RAGAS_CALLS = {
    "answer_relevancy": 3,
    "nv_context_relevance": 2,
    "context_recall": 1,
    "faithfulness": 2,
}
BUDGET = sum(RAGAS_CALLS.values())

SAMPLE = SingleTurnSample(
    user_input="When was the first Super Bowl played, and where?",
    response="The first Super Bowl was played on January 15, 1967. It took place in Los Angeles.",
    reference="It was played on January 15, 1967, at the Los Angeles Memorial Coliseum.",
    retrieved_contexts=[
        "The First AFL-NFL World Championship Game was played on January 15, 1967.",
        "The game was held at the Los Angeles Memorial Coliseum in Los Angeles, California.",
        "The Green Bay Packers defeated the Kansas City Chiefs 35 to 10.",
        "Tickets cost twelve dollars, and the stadium was not sold out.",
        "The name Super Bowl was adopted for the third championship game in 1969.",
    ],
)


async def main() -> int:
    rows = []
    for name in RAGAS_CALLS:
        llm = ScriptedChatModel(script=[well_formed])
        metric = get_metric(name, llm=llm, embeddings=HashEmbeddings())
        result = await metric.ascore(SAMPLE)
        if not result.measured:
            print(f"{name}: not measured ({result.reason})")
            return 2
        rows.append((name, len(llm.calls), RAGAS_CALLS[name], result.value))
    total = sum(r[1] for r in rows)
    print(f"LLM calls per sample ({len(SAMPLE.retrieved_contexts or [])} contexts)")
    print(f"{'metric':<24}{'ragloop':>9}{'RAGAS':>7}{'score':>9}")
    for name, ours, theirs, value in rows:
        print(f"{name:<24}{ours:>9}{theirs:>7}{value:>9.3f}")
    print(f"{'total':<24}{total:>9}{BUDGET:>7}")
    verdict = "within" if total <= BUDGET else "OVER"
    print(f"{verdict} the RAGAS budget of ~{BUDGET} requests per sample")
    return 0 if total <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
