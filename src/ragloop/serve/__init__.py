"""Serving past one process: PostgreSQL as the shared state, LangGraph Server as the engine.

``RAGLOOP_DATABASE_URL`` moves traces (``traces``) and the index (``pgindex``) to Postgres;
``memory`` holds the Postgres checkpointers (chat memory), ``dev`` starts ``langgraph dev``
offline, ``cluster`` a throwaway local cluster for tests and benches.
"""
