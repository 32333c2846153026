"""The hybrid searcher as a LangChain `BaseRetriever`: what the answering chain retrieves with,
and what users compose in their own LangChain code.

One Document per paper, best first: its best passages as content, the paper's fields (and the
passages with their offsets in the abstract) as metadata. `k` and `filters` can be given per
call: `retriever.invoke(query, k=3, filters=SearchFilters(status="oral"))`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from rag.records import PaperHit, Passage
from rag.retrieve.hybrid import HybridSearcher, SearchFilters, open_searcher
from rag.settings import Settings


class PaperRetriever(BaseRetriever):
    """Returns one Document per paper, best first, with its passages and metadata."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    searcher: HybridSearcher
    k: int = 5
    filters: SearchFilters | None = None

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        filters: SearchFilters | None = None,
    ) -> list[Document]:
        hits = self.searcher.search(query, k or self.k, filters or self.filters)
        return [hit_to_document(hit) for hit in hits]


def open_retriever(settings: Settings, *, k: int | None = None) -> PaperRetriever:
    """A retriever over the store `settings` point at (the store must exist)."""
    return PaperRetriever(searcher=open_searcher(settings), k=k or settings.passages)


def hit_to_document(hit: PaperHit) -> Document:
    """A LangChain Document for one paper hit (best passages as content)."""
    return Document(
        page_content="\n".join(p.text for p in hit.passages),
        metadata={
            "paper_id": hit.paper_id,
            "title": hit.title,
            "authors": list(hit.authors),
            "url": hit.url,
            "status": hit.status,
            "score": hit.score,
            "pmlr_url": hit.pmlr_url,
            "venue": hit.venue,
            "dense_similarity": hit.dense_similarity,
            "passages": [
                {
                    "chunk_id": p.chunk_id,
                    "text": p.text,
                    "start": p.start,
                    "end": p.end,
                    "score": p.score,
                }
                for p in hit.passages
            ],
        },
    )


def document_to_hit(document: Document) -> PaperHit:
    """The paper hit a Document of this retriever stands for."""
    meta: dict[str, Any] = document.metadata
    return PaperHit(
        paper_id=meta["paper_id"],
        title=meta["title"],
        authors=list(meta["authors"]),
        url=meta["url"],
        status=meta["status"],
        score=float(meta["score"]),
        passages=[Passage(**p) for p in meta["passages"]],
        pmlr_url=meta.get("pmlr_url", ""),
        dense_similarity=float(meta.get("dense_similarity", 0.0)),
        venue=meta.get("venue", ""),
    )
