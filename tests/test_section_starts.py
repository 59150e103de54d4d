"""A later chunk of a long section leads the loop back to the section's first chunk."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_core.documents import Document

from ragloop.config import Context
from ragloop.documents import chunk_document, parse_text
from ragloop.nodes.base import Deps
from ragloop.pipeline import Pipeline
from ragloop.retrievers.sections import SectionStarts
from tests.fakes.strategies import ScriptedStrategies

PAGE = (
    "# Widgets\n\n## widgets.count\n\n"
    "Return the number of widgets on the shelf, counting the ones on hold.\n\n"
    + "\n\n".join(
        f"Detail {i}: the count is cached for {i} seconds between calls." for i in range(12)
    )
    + "\n\n## widgets.clear\n\nRemove every widget from the shelf."
)


def chunks() -> list[Document]:
    doc = parse_text(PAGE, Path("widgets.md"))
    return chunk_document(doc, "widgets.md", chunk_size=200, chunk_overlap=0)


def test_every_later_chunk_of_a_section_maps_to_its_first_chunk():
    found = chunks()
    count = [c for c in found if c.metadata["title"].endswith("widgets.count")]
    assert len(count) >= 3  # the long section was cut
    starts = SectionStarts(found)
    assert starts.start_of(str(count[0].id)) is None  # it starts the section
    for later in count[1:]:
        assert starts.start_of(str(later.id)) is count[0]
    clear = next(c for c in found if c.metadata["title"].endswith("widgets.clear"))
    assert starts.start_of(str(clear.id)) is None
    # chunks without ragloop's metadata (a plug-in store) map to nothing
    assert len(SectionStarts([Document(page_content="x", id="a"), Document(page_content="y")])) == 0


class LaterChunkRetriever:
    """Finds only the last chunk of the long section (its details, not its definition)."""

    name = "sparse"

    def __init__(self, chunk: Document):
        self.chunk = chunk

    async def asearch(self, query: str, k: int = 5) -> list[Document]:
        return [self.chunk]


def test_the_loop_reads_the_start_of_a_section_it_found_the_end_of():
    # before: only the retrieved detail chunk reached the judge and the answer, so "what does
    # widgets.count do?" was answered from "Detail 11: the count is cached ..."
    found = chunks()
    count = [c for c in found if c.metadata["title"].endswith("widgets.count")]
    deps = Deps(
        strategies=ScriptedStrategies(["sufficient"]),
        retrievers={"sparse": LaterChunkRetriever(count[-1])},
        section_starts=SectionStarts(found),
    )
    result = asyncio.run(Pipeline(deps, Context(retrievers=("sparse",))).arun("widgets.count?"))
    ids = [c["id"] for c in result.contexts]
    assert str(count[0].id) in ids and str(count[-1].id) in ids
    start = next(c for c in result.contexts if c["id"] == str(count[0].id))
    assert start["retriever"] == "sparse" and "Return the number of widgets" in start["text"]
    retrieve = next(s for s in result.steps if s["node"] == "retrieve")
    assert "the start of 1 section(s) they continue" in retrieve["detail"]
