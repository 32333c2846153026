"""Where and how a paper appeared: answered from the collection's record of it (venue, review
outcome, proceedings page), not from the abstract, and cited to the paper's card."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rag.answer.citations import SUPPORTED, citation_for
from rag.answer.modes.base import ModeInput
from rag.answer.safety import safe_title
from rag.records import AnswerEvent, AnswerSentence, PaperHit


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
    result = inp.result
    lines = []
    for paper in papers:
        sentence = record_sentence(paper, asked_status)
        if not sentence:
            continue
        ref = len(result.citations) + 1
        fields = [paper.venue, paper.status, paper.pmlr_url]
        source = f"Record: {', '.join(f for f in fields if f)}"
        result.citations.append(citation_for(ref, paper, source, supporting=[source]))
        result.sentences.append(AnswerSentence(sentence, [ref], SUPPORTED))
        lines.append(f"{sentence} [{ref}]")
    if not lines:
        titles = ", ".join(f"“{safe_title(p.title)}”" for p in papers)
        yield inp.refuse(f"the collection records no venue, date or review outcome for {titles}")
        return
    result.answer = "\n".join(lines)
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=result.answer)
    yield inp.final()
