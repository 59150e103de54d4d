"""Test sets from the user's own corpus: QA rows in RAGAS columns, tagged by kind.

::

    from ragloop.testset import generate, write_rows

    ts = generate("docs/", 100, seed=0)            # offline; llm="openai:gpt-4o-mini" for an LLM
    write_rows(ts.rows, "qa.jsonl")               # refuses to replace a file (force=True does)

Each row has ``user_input``, ``reference``, ``reference_contexts`` (chunk texts exactly as the
index holds them), ``reference_context_ids`` (their chunk ids), ``synthesizer_name`` (RAGAS's
names: ``single_hop_specific_query_synthesizer``, ``multi_hop_specific_query_synthesizer``,
``multi_hop_abstract_query_synthesizer``, plus ``single_hop_paraphrased_query_synthesizer``
and ``single_hop_unanswerable_query_synthesizer``), ``kind`` (specific, paraphrased,
multi_passage, abstract, unanswerable), ``query_style`` (PERFECT_GRAMMAR, WEB_SEARCH_LIKE,
MISSPELLED), ``query_length`` (short, medium, long) and, with personas, ``persona_name``.
Unanswerable rows have no reference contexts; their ``absent_terms`` are the words an
answer would need (a version, a platform, a neighbouring name), none of which the corpus
holds. No question shares more than 30% of its word 4-grams with its passages
(``ragloop.testset.checks``); user documentation: ``docs/testsets.md``.

How the offline questions are made is in ``ragloop.testset.offline``; passages are taken
round-robin over documents and, inside a document, over its sections; near-identical
questions (rapidfuzz ratio >= 90) are dropped and counted; a kind the corpus cannot fill is
named in ``Testset.notes``, never left silently empty.
"""

from __future__ import annotations

from ragloop.testset.generate import DEFAULT_MIX, Testset, generate, quotas
from ragloop.testset.offline import KINDS
from ragloop.testset.personas import Persona
from ragloop.testset.write import write_rows

__all__ = ["DEFAULT_MIX", "KINDS", "Persona", "Testset", "generate", "quotas", "write_rows"]
