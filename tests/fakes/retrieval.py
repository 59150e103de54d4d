"""In-memory retrievers and web search that record their queries."""

from __future__ import annotations

from langchain_core.documents import Document


class ListRetriever:
    """Returns ``n`` made-up chunks named after itself and the query."""

    def __init__(self, name: str, n: int = 2):
        self.name = name
        self.n = n
        self.queries: list[str] = []

    async def asearch(self, query: str, k: int = 5) -> list[Document]:
        self.queries.append(query)
        return [
            Document(
                id=f"{self.name}:{len(self.queries)}:{i}",
                page_content=f"{self.name} text {i} for {query}",
                metadata={
                    "source": f"{self.name}.md",
                    "retriever": self.name,
                    "score": 1.0 - i / 10,
                },
            )
            for i in range(min(self.n, k))
        ]


class ListWeb(ListRetriever):
    """A web search stand-in."""

    def __init__(self, n: int = 2):
        super().__init__("web", n)
