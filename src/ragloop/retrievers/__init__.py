"""Retrieval: corpus loading, dense/sparse/hybrid retrievers, web search, persisted index."""
