"""Summarize mode: the relevant papers grouped into themes, one cited line each (its approach and
key result, quoted), an overview from the LLM when there is one, and a bibliography."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

from rag.answer.bibtex import bibtex, format_bibliography
from rag.answer.citations import citation_for
from rag.answer.context import TermWeights, format_passages
from rag.answer.intent import topic_of
from rag.answer.modes.base import ModeInput, ModeTools, stream_checked
from rag.answer.modes.quotes import classify, quote_support, short_title
from rag.answer.safety import safe_title
from rag.errors import PaperTalkError
from rag.records import AnswerEvent, AnswerSentence, Citation, PaperHit

# Papers join a theme when their mean cosine similarity to its members is at least this.
THEME_SIMILARITY = 0.45
# Papers summarized line by line; further relevant papers are named after them.
MAX_SUMMARIZED = 12
# When no paper is about the whole request, this many of the closest papers are summarized.
CLOSEST = 5


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    result = inp.result
    decision = tools.judge_papers(topic_of(inp.question), inp.hits, inp.config, inp.filters)
    relevant = decision.relevant
    if not relevant:
        # No paper covers the whole request (often several topics at once): summarize the
        # closest papers, and say so.
        relevant = decision.closest(CLOSEST, tools.settings.min_similarity)
        if not relevant:
            yield inp.refuse(f"no paper is about this ({decision.rule()})")
            return
        result.refusal_reason = ""
        parts_intro = "No paper covers all of this; the closest papers:"
    else:
        parts_intro = ""
    more = relevant[MAX_SUMMARIZED:]
    relevant = relevant[:MAX_SUMMARIZED]
    parts: list[str] = [parts_intro] if parts_intro else []
    citations: list[Citation] = []
    ref_of: dict[str, int] = {}
    for theme, members in group_by_theme(tools, relevant):
        parts.append(f"**{theme}**")
        for hit in members:
            ref = ref_of.setdefault(hit.paper_id, len(ref_of) + 1)
            sentences = tools.abstract_sentences(hit.paper_id)
            cells = classify(sentences)
            line = cells.get("approach") or (sentences[0] if sentences else safe_title(hit.title))
            result_line = cells.get("key result")
            text = f"- {short_title(hit.title)}: {line} [{ref}]"
            if result_line and result_line != line:
                text += f" {result_line} [{ref}]"
            parts.append(text)
            supporting = [line] + ([result_line] if result_line and result_line != line else [])
            citations.append(citation_for(ref, hit, " ".join(supporting), supporting=supporting))
            for quote in supporting:  # labelled by checking the quote against the abstract
                result.sentences.append(
                    AnswerSentence(quote, [ref], quote_support(quote, sentences))
                )
        parts.append("")
    if more:
        parts.append(
            f"Also about this ({len(more)} more): " + "; ".join(short_title(h.title) for h in more)
        )
    body = "\n".join(parts).strip()
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=body)
    overview = ""
    if not tools.is_extractive:
        ordered = [p for c in citations for p in inp.passages if p.paper_id == c.paper_id]
        for p in ordered:
            p.n = ref_of[p.paper_id]
        try:
            yield AnswerEvent("token", text="\n\n")
            values = {"passages": format_passages(ordered), "question": inp.question}
            check = tools.sentence_check(ordered, inp.question, numbered=True)
            pieces = tools.generate("summarize", values, inp.config)
            overview = yield from stream_checked(pieces, check, inp.clock)
        except PaperTalkError as exc:
            result.error = str(exc)
        overview = tools.guard(" ".join(overview.split()), ordered, inp.question)
        if overview:
            overview, checked, removed = tools.cite_prose(overview, ordered)
            result.sentences += checked
            result.removed += removed
    result.citations = citations
    result.answer = "\n\n".join(x for x in (body, overview, format_bibliography(citations)) if x)
    result.bibtex = bibtex(citations)
    yield inp.final()


def group_by_theme(tools: ModeTools, hits: Sequence[PaperHit]) -> list[tuple[str, list[PaperHit]]]:
    """Greedy clustering of papers by title+passage embedding similarity; each theme is named by
    the most distinctive word its papers share."""
    if len(hits) <= 1:
        return [("Papers", list(hits))]
    texts = [f"{h.title}. {h.passages[0].text if h.passages else ''}" for h in hits]
    vectors = np.asarray(tools.embed(texts))
    groups: list[list[int]] = []
    for i in range(len(hits)):
        best, best_sim = None, 0.0
        for g, members in enumerate(groups):
            sim = float(np.mean([vectors[i] @ vectors[j] for j in members]))
            if sim > best_sim:
                best, best_sim = g, sim
        if best is not None and best_sim >= THEME_SIMILARITY:
            groups[best].append(i)
        else:
            groups.append([i])
    weights = tools.weights()
    return [
        (theme_name([hits[i] for i in members], weights), [hits[i] for i in members])
        for members in groups
    ]


def theme_name(members: Sequence[PaperHit], weights: TermWeights) -> str:
    if len(members) == 1:
        return short_title(members[0].title)
    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for hit in members:
        for word in re.findall(r"[A-Za-z][A-Za-z-]{3,}", hit.title):
            stems = weights.tokenize([word])[0]
            if stems:
                counts[stems[0]] += 1
                surface.setdefault(stems[0], word)
    if not counts:
        return "Other"
    shared = [t for t, c in counts.items() if c == max(counts.values())]
    return surface[max(shared, key=weights.idf)].capitalize()
