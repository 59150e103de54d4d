"""Shared shape of ragloop retrievers: a scored ``search`` behind LangChain's BaseRetriever."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from typing import ClassVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from ragloop.errors import ConfigError


def with_score(doc: Document, score: float, retriever: str) -> Document:
    """A copy of ``doc`` carrying its score and the retriever that found it."""
    meta = dict(doc.metadata)
    meta["score"] = float(score)
    meta["retriever"] = retriever
    return Document(id=doc.id or meta.get("id"), page_content=doc.page_content, metadata=meta)


#: chunks per retrieval when nobody says (``Settings.k``)
DEFAULT_K = 5


class ScoredRetriever(BaseRetriever):
    """A retriever whose ``search`` returns (document, score) pairs, best first."""

    k: int = DEFAULT_K
    name: str = "retriever"
    #: ragloop's own retrievers rank by vectors and words, never by a chat model
    #: (``nodes.base.may_call_llm``); an adapter of a caller's retriever says True
    calls_llm: ClassVar[bool] = False

    @abstractmethod
    def search(self, query: str, k: int | None = None) -> list[tuple[Document, float]]:
        """Return up to ``k`` (document, score) pairs, best first."""

    def _check(self, query: str) -> str:
        if not isinstance(query, str) or not query.strip():
            raise ConfigError("the question is empty: pass some text to retrieve for")
        return query

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [with_score(d, s, self.name) for d, s in self.search(self._check(query), self.k)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        # the work is CPU-bound numpy/FAISS; a thread keeps the event loop free
        pairs = await asyncio.to_thread(self.search, self._check(query), self.k)
        return [with_score(d, s, self.name) for d, s in pairs]
