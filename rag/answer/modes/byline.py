"""Who wrote a paper: answered from the collection's metadata (its author list), not from the
abstract, and cited to the paper's card."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

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

    def sentence(paper: PaperHit) -> str:
        authors = author_names(paper.authors)
        return f"“{safe_title(paper.title)}” is by {byline(authors)}." if authors else ""

    def source(paper: PaperHit) -> str:
        return f"Authors: {', '.join(author_names(paper.authors))}"

    yield from answer_from_metadata(
        inp, papers, sentence, source, "the collection has no author list for"
    )


def answer_from_metadata(
    inp: ModeInput,
    papers: Sequence[PaperHit],
    sentence: Callable[[PaperHit], str],
    source: Callable[[PaperHit], str],
    none: str,
) -> Iterator[AnswerEvent]:
    """One sentence per paper from the collection's metadata (`sentence`; "" when it has none),
    cited to the paper's card with `source` (the field it comes from); when no paper has one, a
    refusal: `none` and the titles."""
    result = inp.result
    lines = []
    for paper in papers:
        text = sentence(paper)
        if not text:
            continue
        ref = len(result.citations) + 1
        field = source(paper)
        result.citations.append(citation_for(ref, paper, field, supporting=[field]))
        result.sentences.append(AnswerSentence(text, [ref], SUPPORTED))
        lines.append(f"{text} [{ref}]")
    if not lines:
        titles = ", ".join(f"“{safe_title(p.title)}”" for p in papers)
        yield inp.refuse(f"{none} {titles}")
        return
    result.answer = "\n".join(lines)
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=result.answer)
    yield inp.final()
