"""Plain data records shared by every stage: papers, chunks, retrieval hits and answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

STATUSES = ("oral", "spotlight", "poster")


@dataclass(frozen=True)
class Paper:
    """One paper as loaded from a corpus file."""

    id: str
    title: str
    abstract: str
    authors: tuple[str, ...] = ()
    url: str = ""
    pmlr_url: str = ""
    status: str = ""
    title_derived: bool = False
    venue: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "abstract": self.abstract,
            "authors": list(self.authors),
            "url": self.url,
            "pmlr_url": self.pmlr_url,
            "status": self.status,
            "title_derived": self.title_derived,
            "venue": self.venue,
        }


@dataclass(frozen=True)
class Chunk:
    """A window of sentences of one paper's abstract; `start`/`end` are offsets in the abstract."""

    paper_id: str
    index: int
    text: str
    start: int
    end: int


def embedding_text(title: str, chunk_text: str) -> str:
    """The text embedded (and BM25-indexed) for a chunk: the paper title, then the passage."""
    return f"{title}\n{chunk_text}" if title else chunk_text


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk of a paper, with its offsets in the abstract."""

    chunk_id: str
    text: str
    start: int
    end: int
    score: float = 0.0


@dataclass
class PaperHit:
    """One retrieved paper: its metadata, fused score and best passages (best first)."""

    paper_id: str
    title: str
    authors: list[str]
    url: str
    status: str
    score: float
    passages: list[Passage] = field(default_factory=list)
    pmlr_url: str = ""
    dense_similarity: float = 0.0
    venue: str = ""


@dataclass
class Citation:
    n: int
    paper_id: str
    title: str
    authors: list[str]
    url: str
    passage: str
    attributed: bool
    status: str = ""
    pmlr_url: str = ""
    venue: str = ""
    spans: list[tuple[int, int]] = field(default_factory=list)  # passage offsets in abstract
    supporting: list[str] = field(default_factory=list)  # answer sentences citing it

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "paper_id": self.paper_id,
            "title": self.title,
            "authors": self.authors,
            "url": self.url,
            "passage": self.passage,
            "attributed": self.attributed,
        }


@dataclass
class AnswerSentence:
    text: str
    citations: list[int]
    support: str

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "citations": self.citations, "support": self.support}


@dataclass
class Answer:
    question: str
    answer: str
    mode: str
    llm: str
    refused: bool
    citations: list[Citation] = field(default_factory=list)
    sentences: list[AnswerSentence] = field(default_factory=list)
    related: list[PaperHit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    query: str = ""
    error: str | None = None
    extractive: bool = False
    bibtex: str = ""
    refusal_reason: str = ""
    removed: list[str] = field(default_factory=list)  # generated sentences taken out, and why
    closest: dict[str, str] = field(default_factory=dict)  # related paper -> its closest sentence
    # A refused question's parts that the papers do state, answered (cited with `citations`).
    partial: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "mode": self.mode,
            "llm": self.llm,
            "refused": self.refused,
            "refusal_reason": self.refusal_reason,
            "partial": self.partial,
            "removed": list(self.removed),
            "citations": [c.to_json() for c in self.citations],
            "sentences": [s.to_json() for s in self.sentences],
            "related": [
                {
                    "paper_id": h.paper_id,
                    "title": h.title,
                    "closest": self.closest.get(h.paper_id, ""),
                }
                for h in self.related
            ],
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
        }

    @property
    def cited_paper_ids(self) -> list[str]:
        return [c.paper_id for c in self.citations]


@dataclass
class AnswerEvent:
    """`retrieved` (hits known), `token` (a piece of generated text), `final` (the Answer)."""

    kind: Literal["retrieved", "token", "final"]
    text: str = ""
    hits: list[PaperHit] = field(default_factory=list)
    answer: Answer | None = None
