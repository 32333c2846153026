"""A question answered in part: the papers state some of what it asks and not the rest ("What
does QZ-Net compress, and which chip was it trained on?"). The whole is refused, with why and the
paper's sentence closest to the question, and the parts the papers do state are answered below
the refusal, cited, as ask mode answers them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from rag.answer.citations import MARKER
from rag.answer.context import ContextPassage
from rag.answer.modes import ask
from rag.answer.modes.base import ModeInput, ModeTools
from rag.records import AnswerEvent, PaperHit


def run(
    inp: ModeInput,
    tools: ModeTools,
    reason: str,
    answered: str,
    context: Sequence[ContextPassage],
    related: Sequence[PaperHit],
) -> Iterator[AnswerEvent]:
    """Refuse `inp`'s question for `reason`, with the answer to `answered` (the question asking
    only its parts the papers state; `context`, the passages chosen for it) as what the papers
    do state; without that answer (ask mode found nothing to cite), the plain refusal, with the
    `related` papers."""
    # The parts are answered from the paper the question names, whichever part named it.
    named = [p for p in context if p.paper_id in inp.named] or list(context)
    final = None
    for event in ask.run(replace(inp, question=answered, passages=named), tools):
        if event.kind == "final":
            final = event
        else:
            yield event
    result = inp.result
    if final is None or result.refused or result.error or not result.citations:
        yield inp.refuse(reason, related)
        return
    partial, citations, sentences = result.answer, result.citations, result.sentences
    cited = {c.paper_id for c in citations}
    # The cited papers are related too: what each says closest to the whole question (the
    # detail refused may be there in other words), unless the answer quotes it already.
    refusal = inp.refuse(reason, [h for h in inp.hits if h.paper_id in cited])
    quoted = _words(partial)
    result.closest = {k: v for k, v in result.closest.items() if v and _words(v) not in quoted}
    result.related = [h for h in result.related if h.paper_id in result.closest]
    result.partial, result.citations, result.sentences = partial, citations, sentences
    yield refusal


def _words(text: str) -> str:
    """`text`'s words, without citation markers and punctuation (a quote as it reads)."""
    return " ".join(re.findall(r"\w+", MARKER.sub(" ", text)))
