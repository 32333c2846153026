"""Ranked mode: who and what stand out in the collection's metadata, counted from the papers'
author lists (no abstract says it): the authors with the most papers (among the papers on a topic,
when the question names one), the authors with papers on each of two topics, and the papers with
the most authors, each paper cited to its card."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator, Sequence

from rag.answer.bibtex import author_names, short_authors
from rag.answer.citations import SUPPORTED, citation_for
from rag.answer.intent import (
    asked_length,
    asks_authors_average,
    asks_largest_teams,
    both_topics,
    ranked_topic,
    without_status,
)
from rag.answer.modes.base import ModeInput, ModeTools
from rag.answer.modes.listing import describe
from rag.answer.modes.quotes import short_title
from rag.answer.refusal import topic_terms
from rag.answer.safety import safe_title
from rag.records import AnswerEvent, AnswerSentence, PaperHit
from rag.text.authors import fold

# Authors shown, and the papers cited for each (the count covers all of them).
MAX_AUTHORS = 10
PAPERS_CITED = 3
# Papers shown by the size of their author list.
MAX_TEAMS = 5


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    both = both_topics(inp.question)
    if both is not None:
        yield from _on_both(inp, tools, *both)
        return
    filters = inp.filters if inp.filters is not None and inp.filters.active else None
    kind = f"{describe(filters)} " if filters else ""
    topic = without_status(ranked_topic(inp.question)).strip()
    if topic_terms(topic, tools.weights()):
        decision = tools.judge_papers(topic, inp.hits, inp.config, inp.filters)
        papers = decision.relevant
        if not papers:
            yield inp.refuse(f"no {kind}paper is about {topic} ({decision.rule()})")
            return
        among = f"the {len(papers):,} {kind}papers on {topic} ({decision.rule()})"
    else:
        papers = tools.papers_by(inp.filters)
        if not papers:
            yield inp.refuse(f"no paper of the collection is {kind.strip() or 'there'}")
            return
        among = f"the {len(papers):,} {kind}papers" + ("" if filters else " of the collection")
    length = asked_length(inp.question)
    if length is not None:
        yield from _by_length(inp, tools, papers, among, *length)
    elif asks_authors_average(inp.question):
        yield from _authors_average(inp, papers, among)
    elif asks_largest_teams(inp.question):
        yield from _largest_teams(inp, papers, among)
    else:
        yield from _most_papers(inp, papers, among)


def _cite(inp: ModeInput, paper: PaperHit, refs: dict[str, int]) -> int:
    """The reference number of `paper`, citing its author list the first time."""
    if paper.paper_id not in refs:
        refs[paper.paper_id] = len(refs) + 1
        source = f"Authors: {', '.join(author_names(paper.authors))}"
        inp.result.citations.append(
            citation_for(refs[paper.paper_id], paper, source, supporting=[source])
        )
    return refs[paper.paper_id]


def _most_papers(inp: ModeInput, papers: Sequence[PaperHit], among: str) -> Iterator[AnswerEvent]:
    counts: Counter[str] = Counter()
    written: dict[str, Counter[str]] = {}  # how each author's name is written
    theirs: dict[str, list[PaperHit]] = {}
    for paper in papers:
        for name in dict.fromkeys(author_names(paper.authors)):
            key = fold(name)
            if not key:
                continue
            counts[key] += 1
            written.setdefault(key, Counter())[name] += 1
            theirs.setdefault(key, []).append(paper)
    if not counts:
        yield inp.refuse(f"no paper among {among} has an author list")
        return
    ranked = sorted(counts, key=lambda k: (-counts[k], k))
    shown = ranked[:MAX_AUTHORS]
    last = counts[shown[-1]]
    tied = sum(1 for k in ranked[MAX_AUTHORS:] if counts[k] == last)
    lines = [
        f"The authors with the most papers among {among}, counted from the author lists (a "
        "name as written; it may stand for more than one person):"
    ]
    refs: dict[str, int] = {}
    for key in shown:
        name = written[key].most_common(1)[0][0]
        cited = theirs[key][:PAPERS_CITED]
        parts = [f"{short_title(p.title)} [{_cite(inp, p, refs)}]" for p in cited]
        more = counts[key] - len(cited)
        count = f"{counts[key]} paper{'s' if counts[key] != 1 else ''}"
        line = f"- {name}: {count}: {'; '.join(parts)}" + (f" (and {more} more)" if more else "")
        lines.append(line)
        inp.result.sentences.append(
            AnswerSentence(f"{name}: {count}.", [refs[p.paper_id] for p in cited], SUPPORTED)
        )
    if tied:
        lines.append(f"({tied} more authors also have {last} paper{'s' if last != 1 else ''}.)")
    yield from _finish(inp, lines)


def _by_author(papers: Sequence[PaperHit]) -> tuple[dict[str, list[PaperHit]], dict[str, str]]:
    """Each author's papers (by folded name) and the name as most often written."""
    theirs: dict[str, list[PaperHit]] = {}
    written: dict[str, Counter[str]] = {}
    for paper in papers:
        for name in dict.fromkeys(author_names(paper.authors)):
            key = fold(name)
            if key:
                theirs.setdefault(key, []).append(paper)
                written.setdefault(key, Counter())[name] += 1
    return theirs, {k: c.most_common(1)[0][0] for k, c in written.items()}


def _on_both(inp: ModeInput, tools: ModeTools, first: str, second: str) -> Iterator[AnswerEvent]:
    """The authors with papers on `first` and on `second` (each decided paper by paper), most
    papers first."""
    found = []
    for topic in (first, second):
        decision = tools.judge_papers(topic, inp.hits, inp.config, inp.filters)
        if not decision.relevant:
            yield inp.refuse(f"no paper is about {topic} ({decision.rule()})")
            return
        found.append((topic, decision.relevant))
    (_, on_first), (_, on_second) = found
    first_by, names = _by_author(on_first)
    second_by, more_names = _by_author(on_second)
    shared = sorted(
        set(first_by) & set(second_by),
        key=lambda k: (-len({p.paper_id for p in first_by[k] + second_by[k]}), k),
    )
    if not shared:
        yield inp.refuse(
            f"no author of the {len(on_first)} papers on {first} is an author of the "
            f"{len(on_second)} papers on {second}"
        )
        return
    lines = [
        f"{len(shared)} author{'s' if len(shared) != 1 else ''} of the {len(on_first)} papers on "
        f"{first} also wrote some of the {len(on_second)} papers on {second} (names as written; "
        "one may stand for more than one person):"
    ]
    refs: dict[str, int] = {}
    for key in shared[:MAX_AUTHORS]:
        name = names.get(key) or more_names[key]
        parts = []
        for topic, theirs in ((first, first_by[key]), (second, second_by[key])):
            cited = [f"{short_title(p.title)} [{_cite(inp, p, refs)}]" for p in theirs[:2]]
            more = f" and {len(theirs) - 2} more" if len(theirs) > 2 else ""
            parts.append(f"on {topic}: {'; '.join(cited)}{more}")
        lines.append(f"- {name}: {' | '.join(parts)}")
        cited_refs = [refs[p.paper_id] for p in (first_by[key][:2] + second_by[key][:2])]
        inp.result.sentences.append(
            AnswerSentence(
                f"{name} wrote papers on {first} and on {second}.", cited_refs, SUPPORTED
            )
        )
    if len(shared) > MAX_AUTHORS:
        lines.append(f"({len(shared) - MAX_AUTHORS} more authors.)")
    yield from _finish(inp, lines)


def _largest_teams(inp: ModeInput, papers: Sequence[PaperHit], among: str) -> Iterator[AnswerEvent]:
    sized = [(len(author_names(p.authors)), p) for p in papers]
    sized = [(n, p) for n, p in sized if n]
    if not sized:
        yield inp.refuse(f"no paper among {among} has an author list")
        return
    sized.sort(key=lambda x: (-x[0], x[1].title.lower()))
    lines = [f"The papers with the most authors among {among}:"]
    refs: dict[str, int] = {}
    for n, paper in sized[:MAX_TEAMS]:
        ref = _cite(inp, paper, refs)
        lines.append(
            f"- {short_title(paper.title)}: {n} authors ({short_authors(paper.authors, 3)}) [{ref}]"
        )
        inp.result.sentences.append(
            AnswerSentence(f"{short_title(paper.title)} has {n} authors.", [ref], SUPPORTED)
        )
    yield from _finish(inp, lines)


def _by_length(
    inp: ModeInput,
    tools: ModeTools,
    papers: Sequence[PaperHit],
    among: str,
    field: str,
    longest: bool,
) -> Iterator[AnswerEvent]:
    """The papers whose titles (or abstracts) are longest (or shortest), in words, each cited
    with the measured text."""

    def text_of(paper: PaperHit) -> str:
        if field == "title":
            return paper.title
        return " ".join(tools.abstract_sentences(paper.paper_id))

    sized = [(len(text_of(p).split()), len(text_of(p)), p) for p in papers]
    sized = [x for x in sized if x[0]]
    sign = -1 if longest else 1
    sized.sort(key=lambda x: (sign * x[0], sign * x[1], x[2].title.lower()))
    end = "longest" if longest else "shortest"
    lines = [f"The papers with the {end} {field}s among {among}, in words:"]
    for ref, (words, _, paper) in enumerate(sized[:MAX_TEAMS], start=1):
        quoted = text_of(paper)
        source = f"Title: {quoted}" if field == "title" else quoted
        inp.result.citations.append(citation_for(ref, paper, source, supporting=[source]))
        shown = safe_title(paper.title) if field == "title" else short_title(paper.title)
        lines.append(f"- {shown}: {words} words [{ref}]")
        inp.result.sentences.append(
            AnswerSentence(f"{short_title(paper.title)}: {words} words.", [ref], SUPPORTED)
        )
    yield from _finish(inp, lines)


def _authors_average(
    inp: ModeInput, papers: Sequence[PaperHit], among: str
) -> Iterator[AnswerEvent]:
    """How many authors the papers have: mean, median and range, counted from the author
    lists (no paper is cited: the figure is the collection's)."""
    counts = sorted(n for n in (len(author_names(p.authors)) for p in papers) if n)
    if not counts:
        yield inp.refuse(f"no paper among {among} has an author list")
        return
    which = among if len(counts) == len(papers) else f"the {len(counts):,} with one among {among}"
    lines = [
        f"{which[:1].upper()}{which[1:]} have {statistics.mean(counts):.1f} authors on average "
        f"(median {statistics.median(counts):g}, from {counts[0]} to {counts[-1]}), counted "
        "from their author lists."
    ]
    yield from _finish(inp, lines)


def _finish(inp: ModeInput, lines: list[str]) -> Iterator[AnswerEvent]:
    inp.result.answer = "\n".join(lines)
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=inp.result.answer)
    yield inp.final()
