"""Plain data records shared by every stage: papers, chunks and retrieval hits."""

from __future__ import annotations

from dataclasses import dataclass, field

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
        }


@dataclass(frozen=True)
class Chunk:
    """A window of sentences of one paper's abstract; `start`/`end` are offsets in the abstract."""

    paper_id: str
    index: int
    text: str
    start: int
    end: int


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
