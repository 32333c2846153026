"""One vector per paper, from the chunk vectors the store already holds (no re-embedding): the
normalised mean of its chunks' vectors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rag.retrieve.hybrid import HybridSearcher


@dataclass(frozen=True)
class PaperVectors:
    paper_ids: list[str]  # sorted
    matrix: np.ndarray  # (papers, dimension), rows L2-normalised

    def row(self, paper_id: str) -> int:
        return self.paper_ids.index(paper_id)


def paper_vectors(searcher: HybridSearcher) -> PaperVectors:
    """Every paper's vector, in paper id order."""
    table = searcher.lexical.table
    stored = searcher.store.vectors(table.ids)
    sums: dict[str, np.ndarray] = {}
    for chunk_id, paper_id in zip(table.ids, table.paper_ids, strict=True):
        vector = stored.get(chunk_id)
        if vector is not None:
            sums[paper_id] = sums[paper_id] + vector if paper_id in sums else vector.copy()
    ids = sorted(sums)
    if not ids:
        return PaperVectors([], np.zeros((0, 0), dtype=np.float32))
    matrix = np.stack([sums[i] for i in ids]).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return PaperVectors(ids, matrix)
