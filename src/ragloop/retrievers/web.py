"""Web search for the correct step: Tavily when a key is set, else an offline "web" corpus.

The bundled web corpus belongs to the demo base; other corpora get a web source only when
the user configures one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from langchain_core.documents import Document

from ragloop.errors import ConfigError, ProviderError
from ragloop.retrievers.base import DEFAULT_K, ScoredRetriever, with_score


class WebSearch(Protocol):
    """Anything that turns a query into web documents (treated as untrusted data)."""

    name: str

    def search(self, query: str, k: int = DEFAULT_K) -> list[Document]: ...

    async def asearch(self, query: str, k: int = DEFAULT_K) -> list[Document]: ...


def _mark_web(doc: Document) -> Document:
    meta = dict(doc.metadata)
    meta["origin"] = "web"
    return Document(id=doc.id, page_content=doc.page_content, metadata=meta)


class TavilyWebSearch:
    """Tavily's /search through tavily-python; ``api_base_url`` lets tests use a local fake."""

    name = "tavily"
    calls_llm = False  # an HTTP search, no chat model

    def __init__(
        self,
        api_key: str,
        api_base_url: str | None = None,
        client: Any = None,
        timeout: float = 20.0,
    ):
        if not api_key:
            raise ProviderError("TAVILY_API_KEY is empty: export it or use the web corpus")
        from ragloop.extras import require

        TavilyClient = require("web").TavilyClient  # noqa: N806 - the client class

        kwargs: dict[str, Any] = {"api_key": api_key}
        if api_base_url:
            kwargs["api_base_url"] = api_base_url
        self._client = client or TavilyClient(**kwargs)
        self.timeout = timeout  # a hanging server costs this much, then the web is skipped

    def search(self, query: str, k: int = DEFAULT_K) -> list[Document]:
        try:
            data = self._client.search(query, max_results=k, timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - the client's errors may echo the key
            raise ProviderError(f"Tavily search failed ({type(exc).__name__})") from None
        docs = []
        for n, item in enumerate(data.get("results", [])[:k]):
            url = str(item.get("url") or f"tavily-result-{n}")
            text = str(item.get("content") or "")
            if not text.strip():
                continue
            meta = {
                "id": f"web:{url}",
                "source": url,
                "title": str(item.get("title") or url),
                "score": float(item.get("score") or 0.0),
                "retriever": "web",
                "origin": "web",
            }
            docs.append(Document(id=meta["id"], page_content=text, metadata=meta))
        return docs

    async def asearch(self, query: str, k: int = DEFAULT_K) -> list[Document]:
        return await asyncio.to_thread(self.search, query, k)


class CorpusWebSearch:
    """Offline stand-in for the web: a retriever over the bundled "web" corpus."""

    name = "web-corpus"
    calls_llm = False

    def __init__(self, retriever: ScoredRetriever):
        self.retriever = retriever

    def search(self, query: str, k: int = DEFAULT_K) -> list[Document]:
        if not query.strip():
            raise ConfigError("the web query is empty")
        return [_mark_web(with_score(d, s, "web")) for d, s in self.retriever.search(query, k)]

    async def asearch(self, query: str, k: int = DEFAULT_K) -> list[Document]:
        return await asyncio.to_thread(self.search, query, k)


def tavily_from_env(env: Mapping[str, str]) -> TavilyWebSearch | None:
    """Tavily when ``TAVILY_API_KEY`` is set (``TAVILY_API_BASE_URL`` optional), else None."""
    key = env.get("TAVILY_API_KEY")
    if not key:
        return None
    return TavilyWebSearch(key, api_base_url=env.get("TAVILY_API_BASE_URL"))


def web_corpus_folder(
    mode: str, configured: str | Path | None, demo: bool, demo_folder: Path
) -> Path | None:
    """The offline "web" folder to search, or None: the bundled one serves the demo only.

    On any other corpus the web is searched only when the user configured it (a Tavily key,
    or ``web_corpus_dir``); ``web=corpus`` without a folder there is an error saying so.
    """
    if configured:
        folder = Path(configured)
        if not folder.is_dir():
            raise ConfigError(
                f"web corpus folder not found: {folder} (set RAGLOOP_WEB_CORPUS_DIR to a folder)"
            )
        return folder
    if demo:
        return demo_folder if demo_folder.is_dir() else None
    if mode == "corpus":
        raise ConfigError(
            "web=corpus needs a folder for this corpus: set RAGLOOP_WEB_CORPUS_DIR (the "
            "bundled web corpus belongs to the demo base)"
        )
    return None
