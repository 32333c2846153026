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


def run(inp: ModeInput, paper: PaperHit) -> Iterator[AnswerEvent]:
    """The byline of `paper` (the paper the question is about), one cited sentence."""
    authors = author_names(paper.authors)
    if not authors:
        yield inp.refuse(f"the collection has no author list for “{safe_title(paper.title)}”")
        return
    sentence = f"“{safe_title(paper.title)}” is by {byline(authors)}."
    source = f"Authors: {', '.join(authors)}"
    result = inp.result
    result.citations.append(citation_for(1, paper, source, supporting=[source]))
    result.sentences.append(AnswerSentence(sentence, [1], SUPPORTED))
    result.answer = f"{sentence} [1]"
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=result.answer)
    yield inp.final()
