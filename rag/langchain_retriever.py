"""The hybrid searcher as a LangChain `BaseRetriever` (kept apart: importing langchain is slow)."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from rag.retrieval import HybridSearcher, SearchFilters, hit_to_document


class PaperRetriever(BaseRetriever):
    """Returns one Document per paper, best first, with its passages and metadata."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    searcher: Any
    k: int = 5
    filters: SearchFilters | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        searcher: HybridSearcher = self.searcher
        return [hit_to_document(hit) for hit in searcher.search(query, self.k, self.filters)]
