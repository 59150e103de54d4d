"""Chat with memory over the graph, service traces, and the weak spots they reveal.

The stores (memory and traces) live here with both backends: SQLite files, or Postgres with a
``database_url`` (``pgmemory``, ``pgtraces``; the [server] extra).
"""

from ragloop.chat.session import ChatSession
from ragloop.chat.traces import Trace, TraceStore, record_turn, redact
from ragloop.nodes.condense import HeuristicCondenser, LLMCondenser, Turn, heuristic_condense

__all__ = [
    "ChatSession",
    "HeuristicCondenser",
    "LLMCondenser",
    "Trace",
    "TraceStore",
    "Turn",
    "heuristic_condense",
    "record_turn",
    "redact",
]
