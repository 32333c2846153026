"""A question answered in part: the papers state some of what it asks and not the rest ("What
does QZ-Net compress, and which chip was it trained on?"). The whole is refused, with why, and the
parts the papers do state are answered below the refusal, cited, as ask mode answers them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from rag.answer.modes import ask
from rag.answer.modes.base import ModeInput, ModeTools
from rag.records import AnswerEvent, PaperHit


def run(
    inp: ModeInput, tools: ModeTools, reason: str, answered: str, related: Sequence[PaperHit]
) -> Iterator[AnswerEvent]:
    """Refuse `inp`'s question for `reason`, with the answer to `answered` (the question asking
    only its parts the papers state) as what the papers do state; without that answer (ask
    mode found nothing to cite), the plain refusal, with the `related` papers."""
    # The parts are answered from the paper the question names, whichever part named it.
    named = [p for p in inp.passages if p.paper_id in inp.named]
    final = None
    for event in ask.run(replace(inp, question=answered, passages=named or inp.passages), tools):
        if event.kind == "final":
            final = event
        else:
            yield event
    result = inp.result
    if final is None or result.refused or result.error or not result.citations:
        yield inp.refuse(reason, related)
        return
    partial, citations, sentences = result.answer, result.citations, result.sentences
    refusal = inp.refuse(reason, [])
    result.partial, result.citations, result.sentences = partial, citations, sentences
    yield refusal
