"""Compute the RAGAS 0.4.3 conformance fixture (tests/conformance/ragas_0_4_3.json).

Runs in its own virtualenv, never in ragloop's (RAGAS 0.4.3 imports only with
langchain-community<0.4):

    python3.11 -m venv /tmp/ragas-venv
    /tmp/ragas-venv/bin/pip install ragas==0.4.3 'langchain-community<0.4' \
        sacrebleu rouge-score rapidfuzz
    RAGAS_DO_NOT_TRACK=true /tmp/ragas-venv/bin/python scripts/ragas_conformance.py

Non-LLM metrics are scored on generated rows (multi-sentence, unicode, empty,
punctuation-only). LLM metrics are scored under fixed verdicts: a LangChain fake chat
model replies with scripted JSON in RAGAS's own output schema, in the order RAGAS asks;
the fixture keeps the verdicts in a neutral form so ragloop's test can script its own
judge with the same decisions. Embeddings are a hashed bag of words, the same algorithm
as tests/fakes/embeddings.py, so both libraries see identical vectors.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import math
import os
import random
import re
import sys
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "conformance" / "ragas_0_4_3.json"
SEED = 20260113
N_ROWS = 320

# --------------------------------------------------------------------------- embeddings


class HashEmbeddings(Embeddings):
    """Each lowercase word maps to a fixed random unit vector; a text is their normalised sum."""

    dim = 64
    _word_re = re.compile(r"\w+", re.UNICODE)

    def _word(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        vec = np.random.default_rng(seed).standard_normal(self.dim)
        return vec / np.linalg.norm(vec)

    def _embed(self, text: str) -> list[float]:
        vec = np.zeros(self.dim)
        for word in self._word_re.findall(text.lower()):
            vec += self._word(word)
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else vec).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


# --------------------------------------------------------------------------- text rows

_POOLS = {
    "en": (
        "the cat sat on mat river flows into ocean capital city of "
        "France is Paris engine runs fast light travels through space water boils "
        "at degrees sea level Marie Curie won prize in 1903 bridges span "
        "rivers trains arrive late"
    ),
    "ko": "서울은 한국의 수도이다 강물이 바다로 흐른다 고양이가 매트 위에 앉았다",
    "ru": "Москва столица России река течёт в море кошка сидит на коврике",
    "mix": "café naïve Zürich São Paulo 東京 北京 ß straße élan fiancée 😀 ✓",
}
WORDS = {lang: text.split() for lang, text in _POOLS.items()}
PUNCT = ["", " ", "...", "?!", ". . .", "—", "!!!", ".", "  \n ", "…", ";:,"]


def sentence(rng: random.Random, lang: str) -> str:
    words = rng.choices(WORDS[lang], k=rng.randint(2, 9))
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def passage(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.08:
        return rng.choice(PUNCT)
    lang = rng.choices(["en", "ko", "ru", "mix"], weights=[6, 1, 1, 1])[0]
    n = rng.randint(1, 4)
    sep = rng.choice([". ", ". ", ". ", ".", "\n", "! ", " . "])
    text = sep.join(sentence(rng, lang) for _ in range(n))
    return text + rng.choice(["", ".", "!", "?", " "])


def mutate(rng: random.Random, text: str) -> str:
    """A related text: same, case-changed, truncated, extended, shuffled or word-edited."""
    choice = rng.randrange(7)
    if choice == 0:
        return text
    if choice == 1:
        return text.lower() if rng.random() < 0.5 else text.upper()
    if choice == 2:
        return text[: max(0, len(text) // 2)]
    if choice == 3:
        return text + ". " + passage(rng)
    words = text.split()
    if choice == 4:
        rng.shuffle(words)
    elif words:
        words[rng.randrange(len(words))] = rng.choice(WORDS["en"])
    return " ".join(words)


def make_rows(rng: random.Random, n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        reference = passage(rng)
        related = rng.random() < 0.6
        response = mutate(rng, reference) if related else passage(rng)
        if i % 23 == 0:
            response = ""
        if i % 29 == 0:
            reference = ""
        if i % 31 == 0:
            response, reference = reference, reference
        refs = [passage(rng) for _ in range(rng.randint(0, 3))]
        retrieved = [mutate(rng, r) if rng.random() < 0.5 else passage(rng) for r in refs]
        retrieved += [passage(rng) for _ in range(rng.randint(0, 2))]
        rng.shuffle(retrieved)
        rows.append(
            {
                "user_input": sentence(rng, "en") + "?",
                "response": response,
                "reference": reference,
                "retrieved_contexts": retrieved,
                "reference_contexts": refs,
            }
        )
    return rows


# --------------------------------------------------------------------------- RAGAS running


def legacy(module: str, cls: str) -> Any:
    return getattr(importlib.import_module(f"ragas.metrics.{module}"), cls)


def run(coro: Any) -> float | None:
    """Await a RAGAS score; an exception or NaN is recorded as null (unmeasured)."""
    try:
        value = asyncio.run(coro)
    except Exception:  # noqa: BLE001 - RAGAS' evaluate() turns these into NaN too
        return None
    value = float(value)
    return None if math.isnan(value) else value


def single(row: dict[str, Any]) -> Any:
    from ragas.dataset_schema import SingleTurnSample

    return SingleTurnSample(**row)


NONLLM: list[tuple[str, dict[str, Any], str, str, dict[str, Any]]] = [
    # (ragloop name, ragloop params, ragas module, ragas class, ragas params)
    ("bleu_score", {}, "_bleu_score", "BleuScore", {}),
    ("rouge_score", {}, "_rouge_score", "RougeScore", {}),
    (
        "rouge_score",
        {"rouge_type": "rouge1", "mode": "precision"},
        "_rouge_score",
        "RougeScore",
        {"rouge_type": "rouge1", "mode": "precision"},
    ),
    (
        "rouge_score",
        {"rouge_type": "rouge1", "mode": "recall"},
        "_rouge_score",
        "RougeScore",
        {"rouge_type": "rouge1", "mode": "recall"},
    ),
    ("exact_match", {}, "_string", "ExactMatch", {}),
    ("string_present", {}, "_string", "StringPresence", {}),
    ("non_llm_string_similarity", {}, "_string", "NonLLMStringSimilarity", {}),
    ("non_llm_context_recall", {}, "_context_recall", "NonLLMContextRecall", {}),
    (
        "non_llm_context_precision_with_reference",
        {},
        "_context_precision",
        "NonLLMContextPrecisionWithReference",
        {},
    ),
]
MEASURES = ["hamming", "jaro", "jaro_winkler"]


def nonllm_section(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.metrics._string import DistanceMeasure

    cases = list(NONLLM)
    for m in MEASURES:
        cases.append(
            (
                "non_llm_string_similarity",
                {"distance_measure": m},
                "_string",
                "NonLLMStringSimilarity",
                {"distance_measure": DistanceMeasure(m)},
            )
        )
    out = []
    for name, params, module, cls, rparams in cases:
        metric = legacy(module, cls)(**rparams)
        values = [run(metric.single_turn_ascore(single(r))) for r in rows]
        out.append({"metric": name, "params": params, "expected": values})
    emb = LangchainEmbeddingsWrapper(HashEmbeddings())
    sim_cls = legacy("_answer_similarity", "SemanticSimilarity")
    for threshold in (None, 0.0, 0.5):
        metric = sim_cls(embeddings=emb, threshold=threshold)
        values = [run(metric.single_turn_ascore(single(r))) for r in rows]
        params = {} if threshold is None else {"threshold": threshold}
        out.append({"metric": "semantic_similarity", "params": params, "expected": values})
    return out


# --------------------------------------------------------------------------- tool calls


TOOLS = ["retrieve", "web_search", "rewrite_query", "calculator"]


def tool_call(rng: random.Random) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for key in rng.sample(["query", "k", "retriever", "lang"], rng.randint(0, 3)):
        args[key] = rng.choice(["paris", "Paris", 3, "3", "dense", "bm25", "ko", ["a", "b"]])
    return {"name": rng.choice(TOOLS), "args": args}


def make_conversations(rng: random.Random, n: int) -> list[dict[str, Any]]:
    convs = []
    for _ in range(n):
        messages: list[dict[str, Any]] = []
        made: list[dict[str, Any]] = []
        for _turn in range(rng.randint(1, 3)):
            messages.append({"type": "human", "content": sentence(rng, "en") + "?"})
            calls = [tool_call(rng) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
            if calls:
                messages.append({"type": "ai", "content": "", "tool_calls": calls})
                messages.append({"type": "tool", "content": passage(rng)})
                made += calls
            messages.append({"type": "ai", "content": passage(rng)})
        ref_kind = rng.randrange(5)
        if ref_kind == 0:
            reference = [dict(c) for c in made]
        elif ref_kind == 1:
            reference = list(reversed(made))
        elif ref_kind == 2:
            reference = made[:-1] if made else []
        else:
            reference = [tool_call(rng) if rng.random() < 0.5 else c for c in made]
            if rng.random() < 0.3:
                reference.append(tool_call(rng))
        convs.append({"user_input": messages, "reference_tool_calls": reference})
    return convs


def multi(conv: dict[str, Any]) -> Any:
    from ragas.dataset_schema import MultiTurnSample
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    kinds = {"human": HumanMessage, "ai": AIMessage, "tool": ToolMessage}
    messages = []
    for m in conv["user_input"]:
        calls = m.get("tool_calls")
        extra = {"tool_calls": [ToolCall(**c) for c in calls]} if calls else {}
        messages.append(kinds[m["type"]](content=m["content"], **extra))
    refs = conv.get("reference_tool_calls")
    return MultiTurnSample(
        user_input=messages,
        reference=conv.get("reference"),
        reference_topics=conv.get("reference_topics"),
        reference_tool_calls=[ToolCall(**c) for c in refs] if refs is not None else None,
    )


def tool_section(convs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    acc = legacy("_tool_call_accuracy", "ToolCallAccuracy")
    for strict in (True, False):
        metric = acc(strict_order=strict)
        values = [run(metric.multi_turn_ascore(multi(c))) for c in convs]
        params = {} if strict else {"strict_order": False}
        out.append({"metric": "tool_call_accuracy", "params": params, "expected": values})
    f1 = legacy("_tool_call_f1", "ToolCallF1")()
    values = [run(f1.multi_turn_ascore(multi(c))) for c in convs]
    out.append({"metric": "tool_call_f1", "params": {}, "expected": values})
    return out


# --------------------------------------------------------------------------- LLM metrics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ragas_conformance_llm import CountingFake, llm_cases, ragas_replies  # noqa: E402


def llm_section() -> list[dict[str, Any]]:
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.run_config import RunConfig

    emb = LangchainEmbeddingsWrapper(HashEmbeddings())
    out = []
    for case in llm_cases(random.Random(SEED + 1)):
        replies = ragas_replies(case)
        fake = CountingFake(responses=replies or ["{}"])
        llm = LangchainLLMWrapper(fake)
        metric = case["build"](llm, emb)
        metric.init(RunConfig())  # what ragas.evaluate() does before scoring
        sample = multi(case["sample"]) if case.get("multi_turn") else single(case["sample"])
        scorer = metric.multi_turn_ascore if case.get("multi_turn") else metric.single_turn_ascore
        value = run(scorer(sample))
        out.append(
            {
                "metric": case["metric"],
                "params": case.get("params", {}),
                "sample": case["sample"],
                "verdicts": case["verdicts"],
                "expected": value,
                "ragas_llm_calls": fake.calls,
            }
        )
    return out


def main() -> None:
    import ragas

    if ragas.__version__ != "0.4.3":
        sys.exit(f"this fixture is for ragas 0.4.3; found {ragas.__version__}")
    rng = random.Random(SEED)
    rows = make_rows(rng, N_ROWS)
    convs = make_conversations(rng, N_ROWS)
    fixture = {
        "ragas_version": ragas.__version__,
        "generator": "scripts/ragas_conformance.py",
        "seed": SEED,
        "rows": rows,
        "nonllm": nonllm_section(rows),
        "conversations": convs,
        "tool_calls": tool_section(convs),
        "llm": llm_section(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(fixture, ensure_ascii=False, indent=None) + "\n", encoding="utf-8")
    tmp.replace(OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
