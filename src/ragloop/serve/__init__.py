"""Serving past one process: PostgreSQL as the shared state, LangGraph Server as the engine.

``RAGLOOP_DATABASE_URL`` moves chat memory (``memory``) and traces (``traces``) to Postgres;
``cluster`` starts a throwaway local cluster for tests and benches.
"""
