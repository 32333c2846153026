"""Who wrote a paper: answered from the collection's metadata (its author list), not from the
abstract, and cited to the paper's card."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rag.answer.bibtex import author_names
from rag.answer.citations import SUPPORTED, citation_for
from rag.answer.modes.base import ModeInput
from rag.answer.safety import safe_title
from rag.records import AnswerEvent, AnswerSentence, PaperHit

# Bylines longer than this are shortened to the first names and a count of the others.
MAX_NAMED = 10


def byline(authors: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'; past MAX_NAMED names, the first ones and 'k others'."""
    names = list(authors)
    if len(names) > MAX_NAMED:
        names = [*names[: MAX_NAMED - 1], f"{len(authors) - MAX_NAMED + 1} others"]
    if len(names) <= 2:
        return " and ".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def run(inp: ModeInput, papers: Sequence[PaperHit]) -> Iterator[AnswerEvent]:
    """The byline of each of `papers` (those the question is about), one cited sentence each."""
    result = inp.result
    lines = []
    for paper in papers:
        authors = author_names(paper.authors)
        if not authors:
            continue
        ref = len(result.citations) + 1
        sentence = f"“{safe_title(paper.title)}” is by {byline(authors)}."
        source = f"Authors: {', '.join(authors)}"
        result.citations.append(citation_for(ref, paper, source, supporting=[source]))
        result.sentences.append(AnswerSentence(sentence, [ref], SUPPORTED))
        lines.append(f"{sentence} [{ref}]")
    if not lines:
        titles = ", ".join(f"“{safe_title(p.title)}”" for p in papers)
        yield inp.refuse(f"the collection has no author list for {titles}")
        return
    result.answer = "\n".join(lines)
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=result.answer)
    yield inp.final()
