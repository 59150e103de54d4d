"""Chat with memory over the graph, service traces, and the weak spots they reveal."""

from ragloop.chat.condense import HeuristicCondenser, LLMCondenser, Turn, heuristic_condense
from ragloop.chat.session import ChatSession
from ragloop.chat.traces import Trace, TraceStore, record_turn, redact

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
