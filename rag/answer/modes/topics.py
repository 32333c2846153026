"""Topics mode: what the whole collection is about. Its largest topics from the topic map
(rag/explore/topics.py: BERTopic over the stored paper vectors), each with its size and
oral / spotlight / poster counts, and the paper nearest its centre, quoted and cited."""

from __future__ import annotations

from collections.abc import Iterator

from rag.answer.intent import status_in
from rag.answer.modes.base import ModeInput, ModeTools
from rag.answer.modes.listing import approach, list_papers
from rag.explore.topics import NOISE
from rag.records import STATUSES, AnswerEvent, PaperHit
from rag.retrieve.hybrid import SearchFilters

# The largest topics shown (the Map tab and `papertalk topics` show them all).
MAX_TOPICS = 10


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    topics = tools.topic_map()
    found = [t for t in topics.topics if t.id != NOISE and t.top_papers]
    if len(found) < 2:
        yield inp.refuse(f"the {len(topics.assignment)} papers are too few to fall into topics")
        return
    status = status_in(inp.question)  # "Which topic has the most orals?": ranked by those
    ranked = sorted(found, key=lambda t: (-t.statuses.get(status or "", t.size), -t.size, t.id))
    ranked = ranked[:MAX_TOPICS]
    chosen = frozenset(t.top_papers[0] for t in ranked)
    by_id = {h.paper_id: h for h in tools.papers_by(SearchFilters(paper_ids=chosen))}
    hits = [by_id[t.top_papers[0]] for t in ranked if t.top_papers[0] in by_id]
    topic_of = {t.top_papers[0]: t for t in ranked}

    def lead(hit: PaperHit) -> str:
        topic = topic_of[hit.paper_id]
        counts = ", ".join(f"{topic.statuses[s]} {s}" for s in STATUSES if topic.statuses.get(s))
        return f"{topic.label} ({topic.size} papers{'; ' + counts if counts else ''}): "

    which = f"with the most {status} papers" if status else "largest"
    header = (
        f"The {len(topics.assignment):,} papers fall into {len(found)} topics "
        f"({topics.assigned_share:.0%} of them belong to one, the others to none); the "
        f"{len(hits)} {which}, each with the paper nearest its centre (the Map tab shows them "
        "all):"
    )
    yield from list_papers(inp, tools, hits, header, approach, lead)
