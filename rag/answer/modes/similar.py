"""Similar mode: the papers closest to one the question names ("papers similar to X"), by the
cosine similarity of their paper vectors (rag/explore/similar.py), each quoted and cited."""

from __future__ import annotations

from collections.abc import Iterator

from rag.answer.modes.base import ModeInput, ModeTools
from rag.answer.modes.listing import approach, list_papers
from rag.records import AnswerEvent, PaperHit
from rag.retrieve.hybrid import SearchFilters

# Papers listed after the one asked about.
SIMILAR = 8


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    if len(inp.named) != 1:
        yield inp.refuse("the question does not name one paper of the collection")
        return
    similarity = dict(tools.similar_to(inp.named[0], SIMILAR))
    wanted = [inp.named[0], *similarity]
    by_id = {h.paper_id: h for h in tools.papers_by(SearchFilters(paper_ids=frozenset(wanted)))}
    hits = [by_id[pid] for pid in wanted if pid in by_id]
    if len(hits) < 2 or hits[0].paper_id != inp.named[0]:
        yield inp.refuse("no other paper of the collection to compare it with")
        return
    source = hits[0]

    def lead(hit: PaperHit) -> str:
        if hit.paper_id == inp.named[0]:
            return "(asked about) "
        return f"(similarity {similarity[hit.paper_id]:.2f}) "

    header = (
        f"The {len(hits) - 1} papers closest to “{source.title}” (cosine similarity of the "
        "papers' embeddings), after the paper itself:"
    )
    yield from list_papers(inp, tools, hits, header, approach, lead)
