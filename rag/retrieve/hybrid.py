"""Hybrid retrieval: dense (Chroma) + BM25 chunk rankings, fused per paper by reciprocal rank.

`HybridSearcher.search` is the core; `PaperRetriever` wraps it as a LangChain retriever that
returns one `Document` per paper.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.embed.base import Embedder
from rag.embed.factory import make_embedder
from rag.errors import PaperTalkError
from rag.records import STATUSES, PaperHit, Passage
from rag.settings import Settings
from rag.store.chroma import PaperStore, StoreLayout
from rag.store.lexical import LexicalIndex, open_lexical_index
from rag.text.authors import author_matches
from rag.text.names import query_names
from rag.text.terms import tokenize

MAX_PASSAGES = 3
RARE_SHARE = 0.002  # a name counts when at most this share of chunks contains it
KEPT_QUERY_VECTORS = 8


@dataclass(frozen=True)
class SearchFilters:
    """Paper filters: exact status, an author's name (accents, initials and name order aside;
    rag/text/authors.py), title keyword (case-insensitive)."""

    status: str | None = None
    author: str | None = None
    title: str | None = None
    paper_ids: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.status is not None and self.status.lower() not in STATUSES:
            raise PaperTalkError(
                f"unknown status {self.status!r}: use one of {', '.join(STATUSES)}"
            )

    @property
    def active(self) -> bool:
        return bool(self.status or self.author or self.title or self.paper_ids is not None)

    def allows(self, paper: dict[str, Any], paper_id: str = "") -> bool:
        if self.paper_ids is not None and paper_id not in self.paper_ids:
            return False
        if self.status and paper.get("status", "") != self.status.lower():
            return False
        if self.author and not any(
            author_matches(self.author, a) for a in paper.get("authors", [])
        ):
            return False
        return not (self.title and self.title.casefold() not in paper.get("title", "").casefold())


class HybridSearcher:
    """Searches one store: dense and BM25 chunk candidates, fused and grouped by paper."""

    def __init__(
        self, store: PaperStore, lexical: LexicalIndex, embedder: Embedder, settings: Settings
    ) -> None:
        self.store = store
        self.lexical = lexical
        self.embedder = embedder
        self.settings = settings
        # A question's search and the answer's later similarity checks embed the same text:
        # the last few query vectors are kept.
        self._query_vectors: dict[str, np.ndarray] = {}

    def search(
        self, query: str, k: int | None = None, filters: SearchFilters | None = None
    ) -> list[PaperHit]:
        query = " ".join(query.split())
        if not query:
            raise PaperTalkError("empty query: ask something about the papers")
        k = k or self.settings.top_k
        table = self.lexical.table
        allowed_papers: set[str] | None = None
        if filters and filters.active:
            allowed_papers = {pid for pid, p in table.papers.items() if filters.allows(p, pid)}
            if not allowed_papers:
                return []

        rankings: list[tuple[list[tuple[str, float]], float]] = []
        if self.settings.dense_weight:
            rankings.append(
                (self._dense(query, allowed_papers, filters), self.settings.dense_weight)
            )
        if self.settings.bm25_weight:
            rankings.append((self._lexical(query, allowed_papers), self.settings.bm25_weight))
            # Each rare name in the query gets its own BM25 ranking, so a question about two
            # named methods finds both even when the rest of its words favour one.
            for terms in self._rare_name_terms(query):
                names = self._lexical(" ".join(terms), allowed_papers)
                if names:
                    rankings.append((names, self.settings.name_weight))
        return self._fuse(rankings, k)

    def paper_hit(self, paper_id: str, score: float = 0.0) -> PaperHit:
        """A hit for a paper found other than by search: all its chunks as passages."""
        table = self.lexical.table
        passages = [
            Passage(table.ids[i], table.texts[i], table.starts[i], table.ends[i])
            for i in self.lexical.rows_of(paper_id)
        ]
        return self._hit(paper_id, score, passages)

    def _hit(
        self, paper_id: str, score: float, passages: list[Passage], similarity: float = 0.0
    ) -> PaperHit:
        meta = self.lexical.table.papers[paper_id]
        return PaperHit(
            paper_id=paper_id,
            title=meta["title"],
            authors=list(meta["authors"]),
            url=meta["url"],
            status=meta["status"],
            score=score,
            passages=passages,
            pmlr_url=meta.get("pmlr_url", ""),
            dense_similarity=similarity,
            venue=meta.get("venue", ""),
        )

    def paper_similarities(self, query: str, paper_ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of the query to each paper: its best chunk, from stored vectors
        (every paper gets one, not only those among the nearest chunks)."""
        query_vector = self.query_vector(query)
        best: dict[str, float] = {pid: 0.0 for pid in paper_ids}
        for pid, vectors in self._chunk_vectors(paper_ids).items():
            best[pid] = max(best[pid], *(float(v @ query_vector) for v in vectors))
        return best

    def query_vector(self, query: str) -> np.ndarray:
        """The embedding of `query` (whitespace-normalised), kept for the next few calls."""
        key = " ".join(query.split())
        vector = self._query_vectors.get(key)
        if vector is None:
            vector = np.asarray(self.embedder.embed_query(key), dtype=np.float32)
            vector.setflags(write=False)  # shared by the callers that ask for it
            if len(self._query_vectors) >= KEPT_QUERY_VECTORS:
                self._query_vectors.pop(next(iter(self._query_vectors)))
            self._query_vectors[key] = vector
        return vector

    def paper_vectors(self, paper_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Each paper's embedding: the normalised mean of its stored chunk vectors (papers with
        none stored are left out)."""
        out = {}
        for pid, vectors in self._chunk_vectors(paper_ids).items():
            mean = np.mean(vectors, axis=0)
            norm = float(np.linalg.norm(mean))
            if norm > 0:
                out[pid] = (mean / norm).astype(np.float32)
        return out

    def _chunk_vectors(self, paper_ids: Sequence[str]) -> dict[str, list[np.ndarray]]:
        """The stored vectors of each paper's chunks (papers with none stored are left out)."""
        table = self.lexical.table
        rows = [i for pid in dict.fromkeys(paper_ids) for i in self.lexical.rows_of(pid)]
        stored = self.store.vectors([table.ids[i] for i in rows])
        chunks: dict[str, list[np.ndarray]] = {}
        for i in rows:
            vector = stored.get(table.ids[i])
            if vector is not None:
                chunks.setdefault(table.paper_ids[i], []).append(vector)
        return chunks

    def _rare_name_terms(self, query: str) -> list[list[str]]:

        df = self.lexical.df
        limit = max(3, RARE_SHARE * len(self.lexical.table))
        out = []
        for name in query_names(query):
            terms = [t for t in tokenize([name])[0] if 0 < df.get(t, 0) <= limit]
            if terms and terms not in out:
                out.append(terms)
        return out

    # Candidate lists: (chunk id, score), best first -----------------------------------------
    def _dense(
        self, query: str, allowed: set[str] | None, filters: SearchFilters | None
    ) -> list[tuple[str, float]]:
        vector = self.query_vector(query)
        n = min(self.settings.candidates, max(1, len(self.lexical.table)))
        where: dict[str, Any] | None = None
        if allowed is not None and filters is not None:
            if filters.author or filters.title or filters.paper_ids is not None:
                where = {"paper_id": {"$in": sorted(allowed)}}
            else:
                where = {"status": filters.status.lower()} if filters.status else None
        return self.store.query(vector, n, where)

    def _lexical(self, query: str, allowed: set[str] | None) -> list[tuple[str, float]]:
        table = self.lexical.table
        scores = self.lexical.scores(query)
        if not len(scores):
            return []
        if allowed is not None:
            mask = np.fromiter((pid in allowed for pid in table.paper_ids), bool, len(scores))
            scores = np.where(mask, scores, 0.0)
        n = min(self.settings.candidates, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(table.ids[i], float(scores[i])) for i in top if scores[i] > 0]

    # Fusion ----------------------------------------------------------------------------------
    def _fuse(
        self, rankings: list[tuple[list[tuple[str, float]], float]], k: int
    ) -> list[PaperHit]:
        table = self.lexical.table
        rrf_k = self.settings.rrf_k
        paper_score: dict[str, float] = {}
        chunk_score: dict[str, float] = {}
        best_similarity: dict[str, float] = {}
        dense = rankings[0][0] if self.settings.dense_weight else []
        for ranking, weight in rankings:
            seen_papers: set[str] = set()
            for rank, (chunk_id, _score) in enumerate(ranking, start=1):
                row = self.lexical.row(chunk_id)
                if row is None:  # stored after the index was built: ignored until refresh
                    continue
                chunk_score[chunk_id] = chunk_score.get(chunk_id, 0.0) + weight / (rrf_k + rank)
                paper_id = table.paper_ids[row]
                if paper_id not in seen_papers:
                    seen_papers.add(paper_id)
                    paper_rank = len(seen_papers)
                    paper_score[paper_id] = paper_score.get(paper_id, 0.0) + weight / (
                        rrf_k + paper_rank
                    )
        for chunk_id, similarity in dense:
            row = self.lexical.row(chunk_id)
            if row is not None:
                pid = table.paper_ids[row]
                best_similarity[pid] = max(best_similarity.get(pid, -1.0), similarity)

        ranked = sorted(paper_score.items(), key=lambda item: (-item[1], item[0]))[:k]
        passages: dict[str, list[Passage]] = {pid: [] for pid, _ in ranked}
        for chunk_id, score in sorted(chunk_score.items(), key=lambda item: -item[1]):
            row = self.lexical.row(chunk_id)
            assert row is not None
            pid = table.paper_ids[row]
            if pid in passages and len(passages[pid]) < MAX_PASSAGES:
                passages[pid].append(
                    Passage(chunk_id, table.texts[row], table.starts[row], table.ends[row], score)
                )
        return [
            self._hit(paper_id, score, passages[paper_id], best_similarity.get(paper_id, 0.0))
            for paper_id, score in ranked
        ]


def open_searcher(settings: Settings, embedder: Embedder | None = None) -> HybridSearcher:
    """A searcher over the store the settings point at (the store must exist).

    The embedding model loads in a background thread while Chroma starts (both take about a
    second from a cold process, and the model load runs outside the GIL).
    """
    layout = StoreLayout.for_settings(settings)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(make_embedder, settings) if embedder is None else None
        store = PaperStore.open(settings, layout, create=False)
        lexical = open_lexical_index(settings.home, store)
        embedder = pending.result() if pending is not None else embedder
    assert embedder is not None
    return HybridSearcher(store, lexical, embedder, settings)
