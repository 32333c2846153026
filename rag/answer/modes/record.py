"""Where and how a paper appeared: answered from the collection's record of it (venue, review
outcome, proceedings page), not from the abstract, and cited to the paper's card."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rag.answer.modes.base import ModeInput
from rag.answer.modes.byline import answer_from_metadata
from rag.answer.safety import safe_title
from rag.records import AnswerEvent, PaperHit


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def record_sentence(paper: PaperHit, asked_status: str | None = None) -> str:
    """What the record says of where and how `paper` appeared, in one sentence ("" when it
    records nothing): its venue, its review outcome (and whether it is the one asked about),
    its proceedings page; and that no venue or date is recorded, when none is."""
    if not (paper.venue or paper.status or paper.pmlr_url):
        return ""
    kind = f"{paper.status} paper" if paper.status else "paper"
    where = f"at {paper.venue}" if paper.venue else "of the collection"
    sentence = f"“{safe_title(paper.title)}” is {_article(kind)} {kind} {where}"
    if asked_status and paper.status and asked_status != paper.status:
        sentence += f", not {_article(asked_status)} {asked_status}"
    if paper.pmlr_url:
        sentence += f"; its proceedings page is {paper.pmlr_url}"
    if not paper.venue:
        sentence += "; the collection records no venue or date for it"
    return sentence + "."


def run(
    inp: ModeInput, papers: Sequence[PaperHit], asked_status: str | None = None
) -> Iterator[AnswerEvent]:
    """The record of each of `papers` (those the question is about), one cited sentence each."""

    def source(paper: PaperHit) -> str:
        fields = [paper.venue, paper.status, paper.pmlr_url]
        return f"Record: {', '.join(f for f in fields if f)}"

    yield from answer_from_metadata(
        inp,
        papers,
        lambda paper: record_sentence(paper, asked_status),
        source,
        "the collection records no venue, date or review outcome for",
    )
