"""Compare mode: a table of the compared papers (problem, approach, setting, key result), every
cell quoted from its abstract and cited, then a short contrast.

The system builds the table from the abstracts' own sentences; a generative LLM only adds the
contrast. A 135M model cannot be trusted with tables, and the extractive backend needs none.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence

from rag.answer.citations import citation_for
from rag.answer.context import ContextPassage, format_passages
from rag.answer.modes.base import ModeInput, ModeTools, stream_checked
from rag.answer.modes.extractive import answering_sentences, paper_name, with_marker
from rag.answer.modes.quotes import COLUMNS, classify, quote_support, short_title
from rag.answer.refusal import subject_terms, topic_terms
from rag.answer.safety import escape_passage_text, safe_title
from rag.errors import PaperTalkError
from rag.records import AnswerEvent, AnswerSentence, Citation, PaperHit
from rag.text.names import method_name, query_names

# A cell whose column no sentence of the abstract fills: said, not guessed.
NOT_STATED = "not stated"
# Words that ask for a comparison itself, not for a point of it.
_COMPARING = frozenset({"differ", "compar", "comparison", "contrast", "versus", "vs", "similar"})
# At most this many papers are compared (the first ones retrieved, or those the user picked).
MAX_COMPARED = 4
# Paper names in the table's first column are cut at a word within this many characters.
NAME_CHARS = 32


def paper_label(hit: PaperHit, abstract: Sequence[str], limit: int = NAME_CHARS) -> str:
    """How a row names its paper: the name its title starts with ("FooNet: ..."), else the name
    of the method its abstract introduces, before its shortened title ("FooNet (Fast Tables
    for…)"): compared papers are asked about by those names."""
    title = short_title(hit.title, limit)
    if paper_name(hit.title):
        return title
    name = safe_title(method_name(" ".join(abstract))).replace("|", "/")
    return f"{name} ({title})" if name and name.lower() not in hit.title.lower() else title


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    hits, result = inp.hits, inp.result
    papers = list(hits[:MAX_COMPARED])
    if len(papers) < 2:
        yield inp.refuse("fewer than two papers to compare", related=hits)
        return
    header = "| paper | " + " | ".join(COLUMNS) + " |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 1)]
    citations = []
    for ref, hit in enumerate(papers, start=1):
        abstract = tools.abstract_sentences(hit.paper_id)
        cells = classify(abstract)
        row = [f"{paper_label(hit, abstract)} [{ref}]"]
        row += [f"{cells[c]} [{ref}]" if c in cells else NOT_STATED for c in COLUMNS]
        lines.append("| " + " | ".join(row) + " |")
        used = [cells[c] for c in COLUMNS if c in cells]
        citations.append(citation_for(ref, hit, " ".join(used), supporting=used))
        # Each cell is a quotation: its label comes from checking it against the abstract.
        result.sentences += [AnswerSentence(q, [ref], quote_support(q, abstract)) for q in used]
    table = "\n".join(lines)
    focus = _on_the_question(inp, tools, papers, citations)
    if focus:
        table += "\n\n" + focus
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=table + "\n\n")
    contrast = yield from _contrast(inp, tools, papers)
    result.citations = citations
    result.answer = table + ("\n\n" + contrast if contrast else "")
    yield inp.final()


def _on_the_question(
    inp: ModeInput, tools: ModeTools, papers: Sequence[PaperHit], citations: Sequence[Citation]
) -> str:
    """What each paper's abstract says on the question's own point (the loss, the data, the
    hardware a question asks about), quoted and cited: the columns are the same for every question.
    Empty when the question asks for nothing beyond the papers' names."""
    weights = tools.weights()
    point = topic_terms(inp.question, weights) - subject_terms(query_names(inp.question), weights)
    if not point - _COMPARING:
        return ""
    lines = []
    for ref, (hit, citation) in enumerate(zip(papers, citations, strict=True), start=1):
        abstract = tools.abstract_sentences(hit.paper_id)
        quotes = answering_sentences(inp.question, abstract, weights)
        if not quotes:
            lines.append(f"- {paper_label(hit, abstract)} [{ref}]: {NOT_STATED}")
            continue
        lines.append(
            f"- {paper_label(hit, abstract)} [{ref}]: "
            + " ".join(with_marker(q, ref) for q in quotes)
        )
        citation.supporting += [q for q in quotes if q not in citation.supporting]
        inp.result.sentences += [
            AnswerSentence(q, [ref], quote_support(q, abstract)) for q in quotes
        ]
    return "**On the question**\n" + "\n".join(lines)


def _contrast(
    inp: ModeInput, tools: ModeTools, papers: Sequence[PaperHit]
) -> Generator[AnswerEvent, None, str]:
    """A sentence or two of contrast: from the LLM when there is one, else from the table."""
    names = ", ".join(
        f"[{i}] {paper_label(h, tools.abstract_sentences(h.paper_id), 60)}"
        for i, h in enumerate(papers, start=1)
    )
    if tools.is_extractive:
        text = (
            f"The papers differ in approach: see the rows above for {names}; each cell quotes its "
            "abstract."
        )
        yield AnswerEvent("token", text=text)
        return text
    ordered = _renumbered(inp.passages, papers)
    values = {
        "passages": format_passages(ordered),
        "question": inp.question,
        "papers": escape_passage_text(names),
    }
    text = ""
    check = tools.sentence_check(ordered, inp.question, numbered=True)
    try:
        text = yield from stream_checked(
            tools.generate("compare", values, inp.config), check, inp.clock
        )
    except PaperTalkError as exc:
        inp.result.error = str(exc)
    guarded = tools.guard(" ".join(text.split()), ordered, inp.question)
    if not guarded:
        return ""
    # The prose is checked like any answer: markers to no paper dropped, sentences labelled.
    checked, sentences, removed = tools.cite_prose(guarded, ordered)
    inp.result.sentences += sentences
    inp.result.removed += removed
    return checked


def _renumbered(
    passages: Sequence[ContextPassage], papers: Sequence[PaperHit]
) -> list[ContextPassage]:
    """The passages of `papers`, numbered so [i] is the i-th compared paper."""
    ordered = [p for h in papers for p in passages if p.paper_id == h.paper_id]
    for i, p in enumerate(ordered, start=1):
        p.n = i
    return ordered
