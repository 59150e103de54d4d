"""ragloop: a self-correcting RAG pipeline on LangGraph with evaluation built in."""

__version__ = "0.1.0"
