"""The index in PostgreSQL: chunks with their dense vectors and a full-text (tsvector) column.

Dense vectors go into pgvector's ``vector`` column when the extension can be created (then
``<#>`` ranks them in SQL); otherwise — Debian bookworm ships no pgvector package and
ragloop builds nothing from source — they are stored as float32 ``bytea`` and each process
loads them once per index version into an exact FAISS inner-product index (the same ranking
as the file index; Postgres stays the one copy every replica reads). Sparse search is Postgres
full-text search: a stored ``tsvector`` with a GIN index, queried with the question's words
OR-ed and ranked by ``ts_rank_cd``. A rebuild replaces an index in one transaction, so
readers see the old or the new one, never half of each.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import numpy as np
from langchain_core.documents import Document

from ragloop.retrievers.base import DEFAULT_K, ScoredRetriever

__all__ = ["PgDenseRetriever", "PgIndexStore", "PgSparseRetriever", "or_query"]

_TABLES = """
CREATE TABLE IF NOT EXISTS ragloop_indexes (
    name TEXT PRIMARY KEY, version BIGINT NOT NULL, dim INTEGER NOT NULL,
    chunks INTEGER NOT NULL, vector_kind TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ragloop_chunks (
    index_name TEXT NOT NULL, pos INTEGER NOT NULL, id TEXT NOT NULL, text TEXT NOT NULL,
    metadata JSONB NOT NULL, {vector_col},
    tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    PRIMARY KEY (index_name, pos)
);
CREATE INDEX IF NOT EXISTS ragloop_chunks_tsv ON ragloop_chunks USING GIN (tsv);
"""
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def or_query(text: str) -> str:
    """A ``to_tsquery`` text that matches any of the question's words (quoted, OR-ed)."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(text))
    return " | ".join(f"'{w}'" for w in words)


class PgIndexStore:
    """One database's ragloop indexes (by name); pgvector when available, else bytea."""

    def __init__(self, url: str, name: str = "default") -> None:
        import psycopg

        self.url, self.name = url, name
        with psycopg.connect(url, autocommit=True) as conn:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                self.vector_kind = "pgvector"
            except psycopg.Error:
                self.vector_kind = "bytea"
            col = "embedding vector" if self.vector_kind == "pgvector" else "embedding BYTEA"
            conn.execute(_TABLES.format(vector_col=f"{col} NOT NULL"))
        self._lock = threading.Lock()
        self._pool: Any = None
        self._matrix: tuple[int, Any] | None = None

    def connect(self) -> Any:
        """A pooled connection (context manager): one search must not pay for a new one."""
        if self._pool is None:
            from psycopg_pool import ConnectionPool

            with self._lock:
                if self._pool is None:
                    self._pool = ConnectionPool(self.url, min_size=1, max_size=4, open=True)
        return self._pool.connection()

    def close(self) -> None:
        """Close the pool (a store is otherwise open for the life of the process)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def write(self, chunks: list[Document], vectors: np.ndarray) -> int:
        """Replace the index ``name`` with ``chunks`` and their unit ``vectors`` (atomic)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        with self.connect() as conn, conn.transaction():
            # one writer per index name at a time (two replicas seeding it at once)
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"ragloop:{self.name}"])
            row = conn.execute(
                "SELECT version FROM ragloop_indexes WHERE name = %s FOR UPDATE", [self.name]
            ).fetchone()
            version = (row[0] if row else 0) + 1
            conn.execute("DELETE FROM ragloop_chunks WHERE index_name = %s", [self.name])
            cols = "index_name, pos, id, text, metadata, embedding"
            with conn.cursor().copy(f"COPY ragloop_chunks ({cols}) FROM STDIN") as copy:
                for pos, (doc, vec) in enumerate(zip(chunks, vectors, strict=True)):
                    emb: Any = (
                        "[" + ",".join(f"{x:.7g}" for x in vec) + "]"
                        if self.vector_kind == "pgvector"
                        else vec.tobytes()
                    )
                    meta = json.dumps(doc.metadata, ensure_ascii=False, default=str)
                    copy.write_row([self.name, pos, str(doc.id), doc.page_content, meta, emb])
            conn.execute(
                "INSERT INTO ragloop_indexes (name, version, dim, chunks, vector_kind) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET "
                "version = EXCLUDED.version, dim = EXCLUDED.dim, chunks = EXCLUDED.chunks, "
                "vector_kind = EXCLUDED.vector_kind",
                [self.name, version, int(vectors.shape[1]), len(chunks), self.vector_kind],
            )
        return version

    def version(self) -> int:
        with self.connect() as conn:
            row = conn.execute(
                "SELECT version FROM ragloop_indexes WHERE name = %s", [self.name]
            ).fetchone()
        return int(row[0]) if row else 0

    def _docs(self, conn: Any, positions: list[int]) -> dict[int, Document]:
        rows = conn.execute(
            "SELECT pos, id, text, metadata FROM ragloop_chunks "
            "WHERE index_name = %s AND pos = ANY(%s)",
            [self.name, positions],
        ).fetchall()
        return {p: Document(id=i, page_content=t, metadata=dict(m)) for p, i, t, m in rows}

    def dense(self, vector: np.ndarray, k: int) -> list[tuple[Document, float]]:
        """The ``k`` chunks with the largest inner product with the unit ``vector``."""
        q = np.asarray(vector, dtype=np.float32)
        with self.connect() as conn:
            if self.vector_kind == "pgvector":
                lit = "[" + ",".join(f"{x:.7g}" for x in q) + "]"
                rows = conn.execute(
                    "SELECT pos, -(embedding <#> %s::vector) FROM ragloop_chunks "
                    "WHERE index_name = %s ORDER BY embedding <#> %s::vector LIMIT %s",
                    [lit, self.name, lit, k],
                ).fetchall()
                hits = [(int(p), float(s)) for p, s in rows]
            else:
                flat = self._load_matrix(conn)
                if flat.ntotal == 0:
                    return []
                scores, top = flat.search(q[None, :], min(k, flat.ntotal))
                hits = [(int(p), float(v)) for p, v in zip(top[0], scores[0], strict=True)]
            docs = self._docs(conn, [p for p, _ in hits])
        return [(docs[p], s) for p, s in hits if p in docs]

    def _load_matrix(self, conn: Any) -> Any:
        """The vectors as an exact FAISS inner-product index, reloaded when the version moves."""
        import faiss

        row = conn.execute(
            "SELECT version, dim FROM ragloop_indexes WHERE name = %s", [self.name]
        ).fetchone()
        if row is None:
            return faiss.IndexFlatIP(1)
        version, dim = int(row[0]), int(row[1])
        with self._lock:
            if self._matrix is None or self._matrix[0] != version:
                rows = conn.execute(
                    "SELECT embedding FROM ragloop_chunks WHERE index_name = %s ORDER BY pos",
                    [self.name],
                ).fetchall()
                data = b"".join(bytes(r[0]) for r in rows)
                flat = faiss.IndexFlatIP(dim)
                flat.add(np.frombuffer(data, dtype=np.float32).reshape(-1, dim))
                self._matrix = (version, flat)
            return self._matrix[1]

    def sparse(self, query: str, k: int) -> list[tuple[Document, float]]:
        """Full-text search: chunks matching any word of ``query``, best ``ts_rank_cd`` first."""
        text = or_query(query)
        if not text:
            return []
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT pos, ts_rank_cd(tsv, q) AS r FROM ragloop_chunks, "
                "to_tsquery('english', %s) AS q WHERE index_name = %s AND tsv @@ q "
                "ORDER BY r DESC, pos LIMIT %s",
                [text, self.name, k],
            ).fetchall()
            docs = self._docs(conn, [int(p) for p, _ in rows])
        return [(docs[int(p)], float(r)) for p, r in rows if int(p) in docs]


class PgDenseRetriever(ScoredRetriever):
    """Dense retrieval from the Postgres index (query embedded by the index's embeddings)."""

    store: Any
    embeddings: Any
    name: str = "pg_dense"

    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        return self.store.dense(np.asarray(self.embeddings.embed_query(query)), k or self.k)


class PgSparseRetriever(ScoredRetriever):
    """Full-text retrieval from the Postgres index."""

    store: Any
    name: str = "pg_sparse"

    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        return self.store.sparse(query, k or self.k)


def index_rows(index: Any) -> tuple[list[Document], np.ndarray]:
    """The chunks of a ragloop ``Index`` with their unit vectors read back from FAISS."""
    store = index.faiss
    n = int(store.index.ntotal)
    matrix = store.index.reconstruct_n(0, n) if n else np.zeros((0, 1), dtype=np.float32)
    by_id = {str(c.id): c for c in index.chunks}
    docs = [by_id[store.index_to_docstore_id[i]] for i in range(n)]
    return docs, np.asarray(matrix, dtype=np.float32)


def write_index(url: str, index: Any, name: str = "default") -> PgIndexStore:
    """Mirror a built ragloop ``Index`` into Postgres (no re-embedding); returns the store."""
    store = PgIndexStore(url, name)
    store.write(*index_rows(index))
    return store


def pg_retrievers(store: PgIndexStore, embeddings: Any, k: int = DEFAULT_K) -> dict[str, Any]:
    """``pg_dense``, ``pg_sparse`` and ``pg_hybrid`` (RRF of the two) over ``store``."""
    from ragloop.retrievers.hybrid import HybridRetriever

    dense = PgDenseRetriever(store=store, embeddings=embeddings, k=k)
    sparse = PgSparseRetriever(store=store, k=k)
    fetch = max(k, 20)
    hybrid = HybridRetriever(
        dense=PgDenseRetriever(store=store, embeddings=embeddings, k=fetch),
        sparse=PgSparseRetriever(store=store, k=fetch),
        weights=(1.0, 1.0),
        fetch_k=fetch,
        k=k,
        name="pg_hybrid",
    )
    return {"pg_dense": dense, "pg_sparse": sparse, "pg_hybrid": hybrid}
