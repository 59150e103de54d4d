"""Serving past one process: PostgreSQL as the shared state, LangGraph Server as the engine.

``RAGLOOP_DATABASE_URL`` moves the index (``pgindex``) to Postgres, and with it the chat's
stores (``ragloop.chat.pgtraces``, ``ragloop.chat.pgmemory``), which this layer uses;
``memory`` holds the server's Postgres checkpointers, ``graph`` the graph LangGraph Server
loads, ``dev`` starts ``langgraph dev`` offline, ``cluster`` a throwaway local cluster for
tests and benches. ``serve`` sits above ``chat``: it imports the chat's stores, never the
reverse.
"""
