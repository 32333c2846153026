"""List mode: every paper among a wide candidate set whose abstract is about the question's
topic (rag/answer/relevance.py), the count, how it was decided, and one cited line per paper:
the abstract's sentence that best matches the topic, quoted; or, when a kind of thing is asked
of each paper ("Which datasets do the papers on X use?"), the sentence naming one."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from rag.answer.citations import citation_for
from rag.answer.context import score_sentences
from rag.answer.intent import (
    asks_share,
    author_topic,
    over_papers,
    papers_topic,
    requested_count,
    topic_of,
    without_status,
)
from rag.answer.modes.base import ModeInput, ModeTools
from rag.answer.modes.quotes import classify, is_link, quote_support, short_title
from rag.answer.refusal import kind_words, named_kinds, names_an_instance, topic_terms
from rag.records import AnswerEvent, AnswerSentence, PaperHit
from rag.retrieve.hybrid import SearchFilters

# A topic that points back instead of naming what it is about ("Which papers use it?").
_REFERS = re.compile(r"\b(?:it|its|they|them|their|these|those|this|that)\b", re.IGNORECASE)
# At most this many papers are listed in the answer (the count covers all of them).
MAX_LISTED = 25
# A topic described in other words than its papers use: when no paper qualifies by the topic's
# words, the papers closest in meaning are listed, as such, if the closest is at least
# CLOSE_MEANING similar to the topic (only those within MEANING_BAND of it). On the list
# questions of bench/qa/tune*.jsonl refused this way, the closest paper was at 0.41-0.66 (five
# at 0.55 or more, three of them matching), and no topic absent from the collection had one
# above 0.51.
CLOSE_MEANING = 0.55
MEANING_BAND = 0.05


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    topic = topic_of(inp.question)
    kinds = named_kinds(inp.question)
    per_paper = bool(kinds) and over_papers(inp.question)
    if per_paper:
        topic = papers_topic(inp.question)  # "Which GPUs do the papers on X use?": X
    if inp.filters is not None and inp.filters.status:
        topic = without_status(topic)  # "the orals on X": the status is a filter, X the topic
    weights = tools.weights()
    filtered = inp.filters is not None and inp.filters.active
    discussed = inp.filters is not None and inp.filters.paper_ids is not None
    if (kinds and discussed) or (
        not topic_terms(topic, weights) and (filtered or not _REFERS.search(topic))
    ):
        # "Which datasets do they use?" after a list: asked of each paper discussed.
        # "How many orals are there?", "Which of them are spotlights?", "How many papers are
        # there?": no topic, only filters (or none); "Which papers use it?" has one, unnamed.
        yield from run_filtered(inp, tools)
        return
    decision = tools.judge_papers(topic, inp.hits, inp.config, inp.filters).settled
    relevant = decision.relevant

    def quote_of(hit: PaperHit, sentences: list[str]) -> str:
        ranked = score_sentences(inp.question, hit, weights, rank=0)
        claims = [s for s in ranked if not is_link(s.text)]  # a code link says nothing of it
        return (claims or ranked)[0].text if ranked else hit.title

    # A word no paper uses says the topic is not in the collection, unless a paper is close to
    # the topic in meaning (the asker's own word: "orators" for speakers; see CLOSE_MEANING).
    if decision.unused and not decision.nearest_in_meaning(CLOSE_MEANING, MEANING_BAND):
        yield inp.refuse(f"no paper mentions {' or '.join(decision.unused)}")
        return
    if not relevant:
        nearest = decision.nearest_in_meaning(CLOSE_MEANING, MEANING_BAND)
        if nearest:
            noun = "paper" if len(nearest) == 1 else "papers"
            header = (
                f"No paper qualifies by the words of this topic; the {noun} closest to it in "
                f"meaning ({len(nearest)}):"
            )
            yield from list_papers(inp, tools, nearest, header, quote_of)
            return
    if not decision.core:
        yield inp.refuse(
            "no word of this topic picks out papers of the collection "
            "(no paper uses it, or too many do)"
        )
        return
    if not relevant:
        kind = f"{describe(inp.filters)} " if filtered and inp.filters is not None else ""
        yield inp.refuse(f"no {kind}paper is about this ({decision.rule()})")
        return
    among = "the collection"
    if filtered and inp.filters is not None:
        among = f"the {describe(inp.filters)} papers"
    wanted = requested_count(inp.question)
    if per_paper:  # "Which datasets do the papers on X use?"
        noun, verb = ("paper", "matches") if len(relevant) == 1 else ("papers", "match")
        lead = f"{len(relevant)} {noun} of {among} {verb} ({decision.rule()});"
        yield from _instances(inp, tools, relevant, kinds[0][1], lambda k: f"{lead} {k} of them")
        return
    if wanted is not None and wanted < len(relevant):  # "Give me three papers on X"
        header = (
            f"The {wanted} most relevant of the {len(relevant)} papers of {among} that match "
            f"({decision.rule()}):"
        )
        relevant = relevant[:wanted]
    else:
        noun, verb = ("paper", "matches") if len(relevant) == 1 else ("papers", "match")
        share = ""
        if asks_share(inp.question):  # "What fraction of papers are about X?"
            total = len(tools.papers_by(inp.filters if filtered else None))
            share = f", {len(relevant) / total:.1%} of the {total:,}" if total else ""
        header = f"{len(relevant)} {noun} of {among} {verb}{share} ({decision.rule()}):"
    yield from list_papers(inp, tools, relevant, header, quote_of)


def _instances(
    inp: ModeInput,
    tools: ModeTools,
    relevant: Sequence[PaperHit],
    kind: str,
    lead: Callable[[int], str],
) -> Iterator[AnswerEvent]:
    """The papers (on a topic, or discussed) whose abstracts name a `kind` ("datasets"), each
    with the sentence naming it, after `lead` (what the papers are, and how many of them name
    one); then those whose abstracts do not."""
    weights = tools.weights()
    kind_terms = weights.terms(" ".join(kind_words(kind)))
    quotes: dict[str, str] = {}
    for hit in relevant:
        sentences = tools.abstract_sentences(hit.paper_id)
        abstract = " ".join(sentences)
        naming = [
            x
            for x in sentences
            if names_an_instance(x, kind, inp.question, hit.title, abstract, weights)
        ]
        naming.sort(key=lambda x: not weights.terms(x) & kind_terms)  # the kind's word first
        if naming:
            quotes[hit.paper_id] = naming[0]
    naming_hits = [h for h in relevant if h.paper_id in quotes]
    silent = [h for h in relevant if h.paper_id not in quotes]
    noun = "paper" if len(relevant) == 1 else "papers"
    if not naming_hits:
        yield inp.refuse(
            f"the abstracts of the {len(relevant)} {noun} do not name the {kind}",
            related=list(relevant[:3]),
        )
        return
    verb, where = (
        ("names", "its abstract") if len(naming_hits) == 1 else ("name", "their abstracts")
    )
    header = f"{lead(len(naming_hits))} {verb} the {kind} in {where}:"
    footer = ""
    if silent:
        shown = "; ".join(short_title(h.title) for h in silent[:MAX_LISTED])
        more = f" (and {len(silent) - MAX_LISTED} more)" if len(silent) > MAX_LISTED else ""
        footer = f"The abstracts of the other {len(silent)} do not name the {kind}: {shown}{more}."
    yield from list_papers(
        inp, tools, naming_hits, header, lambda h, _: quotes[h.paper_id], footer=footer
    )


def describe(filters: SearchFilters) -> str:
    """The filters in words: 'oral', 'oral, by Jin', ..."""
    parts = [filters.status or ""]
    if filters.author:
        parts.append(f"by {filters.author}")
    if filters.title:
        parts.append(f"titled '{filters.title}'")
    return ", ".join(p for p in parts if p) or "selected"


def run_filtered(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    """Every paper the filters allow (a status, the papers of an earlier answer; all of them
    without filters), one cited line each (what it proposes, quoted)."""
    hits = tools.papers_by(inp.filters)
    filters = inp.filters or SearchFilters()
    kind = describe(replace(filters, paper_ids=None)) if filters.active else ""
    discussed = filters.paper_ids is not None
    if not hits:
        where = "the papers discussed" if discussed else "the collection"
        yield inp.refuse(f"no paper of {where} is {kind}")
        return
    kinds = named_kinds(inp.question)
    if discussed and kinds:  # "Which benchmarks do they use?" after a list: paper by paper
        yield from _instances(
            inp, tools, hits, kinds[0][1], lambda k: f"Of the {len(hits)} papers discussed, {k}"
        )
        return
    noun = "paper" if len(hits) == 1 else "papers"
    where = "papers discussed" if discussed else "collection"
    share = ""
    if kind and not discussed:  # "How many orals are there?": and what share of all papers
        total = len(tools.papers_by(None))
        share = f" ({len(hits) / total:.1%} of its {total:,})" if total else ""
    header = f"{len(hits):,} {kind + ' ' if kind else ''}{noun} of the {where}{share}, by title:"
    yield from list_papers(inp, tools, hits, header, approach)


def approach(hit: PaperHit, sentences: list[str]) -> str:
    """The sentence of an abstract that says what the paper proposes (else its first)."""
    return classify(sentences).get("approach") or (sentences[0] if sentences else hit.title)


def run_author(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    """Every paper of the collection by the author in the filters, one cited line each (what it
    proposes, quoted)."""
    author = inp.filters.author if inp.filters else None
    if not author:
        yield inp.refuse("the question names no author")
        return
    hits = tools.papers_by(inp.filters)
    status = inp.filters.status if inp.filters else None
    if (
        not hits
        and status
        and tools.papers_by(replace(inp.filters or SearchFilters(), status=None))
    ):
        yield inp.refuse(f"no paper of the collection by {author} is {status}")
        return
    if not hits:
        yield inp.refuse(
            f"no paper of the collection has an author named {author} (the collection records "
            "authors, not affiliations)"
        )
        return
    noun = "paper" if len(hits) == 1 else "papers"
    if status:
        noun = f"{status} {noun}"
    topic = author_topic(inp.question)
    if topic_terms(topic, tools.weights()):
        # "Which papers by X are about Y?": the per-paper decision, among X's papers
        decision = tools.judge_papers(topic, hits, inp.config, inp.filters)
        if not decision.relevant:
            yield inp.refuse(
                f"none of the {len(hits)} {noun} by {author} is about {topic} ({decision.rule()})"
            )
            return
        verb = "is" if len(decision.relevant) == 1 else "are"
        header = (
            f"{len(decision.relevant)} of {author}'s {len(hits)} {noun} in the collection {verb} "
            f"about {topic} (authors matched by name; {decision.rule()}):"
        )
        yield from list_papers(inp, tools, decision.relevant, header, approach)
        return
    header = f"{len(hits)} {noun} of the collection by {author} (authors matched by name):"
    yield from list_papers(inp, tools, hits, header, approach)


def list_papers(
    inp: ModeInput,
    tools: ModeTools,
    hits: Sequence[PaperHit],
    header: str,
    quote_of: Callable[[PaperHit, list[str]], str],
    lead: Callable[[PaperHit], str] | None = None,
    footer: str = "",
) -> Iterator[AnswerEvent]:
    """The answer: `header`, then one line per paper quoting its abstract (checked) and citing
    it, at most MAX_LISTED lines, then `footer`; `lead` gives what a line says before the
    paper's name."""
    result = inp.result
    lines = [header]
    for ref, hit in enumerate(hits[:MAX_LISTED], start=1):
        sentences = tools.abstract_sentences(hit.paper_id)
        quote = quote_of(hit, sentences)
        lines.append(f"- {lead(hit) if lead else ''}{short_title(hit.title)}: {quote} [{ref}]")
        result.citations.append(citation_for(ref, hit, quote, supporting=[quote]))
        result.sentences.append(AnswerSentence(quote, [ref], quote_support(quote, sentences)))
    if len(hits) > MAX_LISTED:
        lines.append(f"(and {len(hits) - MAX_LISTED} more)")
    if footer:
        lines.append(footer)
    result.answer = "\n".join(lines)
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=result.answer)
    yield inp.final()
