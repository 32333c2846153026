"""Papers like a given one: nearest by paper vector (cosine), the paper itself excluded."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rag.errors import PaperTalkError
from rag.explore.vectors import PaperVectors
from rag.retrieve.hybrid import HybridSearcher
from rag.text.authors import fold


@dataclass(frozen=True)
class SimilarPaper:
    paper_id: str
    title: str
    url: str
    similarity: float


def find_paper(searcher: HybridSearcher, id_or_title: str) -> str:
    """The paper with this id, or whose (folded) title equals, or uniquely contains, the text."""
    papers = searcher.lexical.table.papers
    wanted = id_or_title.strip()
    if wanted in papers:
        return wanted
    folded = fold(wanted)
    if not folded:
        raise PaperTalkError("give a paper id or a title")
    exact = [pid for pid, p in papers.items() if fold(p["title"]) == folded]
    if len(exact) == 1:
        return exact[0]
    partial = sorted(pid for pid, p in papers.items() if folded in fold(p["title"]))
    if len(partial) == 1:
        return partial[0]
    if partial:
        shown = "; ".join(papers[p]["title"] for p in partial[:3])
        raise PaperTalkError(
            f"{len(partial)} papers match {wanted!r} (e.g. {shown}): be more precise"
        )
    raise PaperTalkError(f"no paper with id or title {wanted!r}")


def similar_papers(
    searcher: HybridSearcher, vectors: PaperVectors, paper_id: str, k: int = 5
) -> list[SimilarPaper]:
    """The `k` papers nearest to `paper_id`, best first (itself excluded)."""
    if paper_id not in vectors.paper_ids:
        raise PaperTalkError(f"no paper with id {paper_id!r}")
    scores = vectors.matrix @ vectors.matrix[vectors.row(paper_id)]
    order = np.argsort(-scores, kind="stable")
    papers = searcher.lexical.table.papers
    out = []
    for i in order:
        other = vectors.paper_ids[int(i)]
        if other == paper_id:
            continue
        out.append(
            SimilarPaper(other, papers[other]["title"], papers[other]["url"], float(scores[i]))
        )
        if len(out) >= k:
            break
    return out
