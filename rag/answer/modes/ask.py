"""Ask mode: a short answer to a question, every sentence cited to the passage behind it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from rag.answer.citations import SUPPORTED, WEAK
from rag.answer.context import format_passages
from rag.answer.intent import status_in, wants_byline, wants_record
from rag.answer.modes import byline, record
from rag.answer.modes.base import ModeInput, ModeTools, stream_checked
from rag.answer.modes.extractive import (
    about_several,
    compose_extractive,
    left_out,
    quotes_for,
    with_marker,
)
from rag.answer.refusal import is_model_refusal
from rag.errors import PaperTalkError
from rag.records import AnswerEvent

# "Who wrote X and Y?": at most this many papers' bylines.
MAX_BYLINES = 5


# An abstract crediting an idea to others: "X was proposed by Quartz et al. (2010)", "introduced
# by Quartz and Lee", "Quartz et al. (2010) defined X".
_CREDITED = re.compile(
    r"\b(?:proposed|introduced|developed|defined|coined|formulated|invented)\s+(?:\w+\s+)?by\s+"
    r"[A-Z][\w-]+(?:\s+et\s+al\b|\s+and\s+[A-Z]|\s*\(\d{4}\))"
    r"|\b[A-Z][\w-]+\s+et\s+al\.?\s*[(\[]?\d{4}"
)


_WHO_CREDITED = re.compile(
    r"\bwho\s+(?:\w+ly\s+|first\s+)?(?:proposed|introduced|developed|defined|coined|formulated|"
    r"invented)\b",
    re.IGNORECASE,
)


def credited_to_others(inp: ModeInput, tools: ModeTools) -> bool:
    """Whether a passage credits what the question asks about to people other than its authors
    ("Who proposed X?" when the abstract says "X was proposed by Quartz et al."): the abstract
    answers it, not the byline."""
    if not _WHO_CREDITED.search(inp.question):  # "Who wrote X?" asks for the byline
        return False
    asked = tools.weights().terms(inp.question)
    return any(
        _CREDITED.search(x) and asked & tools.weights().terms(x)
        for p in inp.passages
        for x in re.split(r"(?<=[.!?])\s+", p.text)
    )


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    credited = credited_to_others(inp, tools)
    if wants_byline(inp.question) and not credited:
        # "Who wrote X?": the metadata answers it, not the abstract (the one paper asked
        # about, or those named)
        about = asked_papers(inp) or inp.named
        subject = [h for pid in about for h in inp.hits if h.paper_id == pid][:MAX_BYLINES]
        if subject:
            yield from byline.run(inp, subject)
            return
    if wants_record(inp.question) and not credited:
        # "When was X published?", "Is X an oral?": the record answers it
        about = inp.named or asked_papers(inp)
        subject = [h for pid in about for h in inp.hits if h.paper_id == pid][:MAX_BYLINES]
        if subject:
            yield from record.run(inp, subject, status_in(inp.question))
            return
    raw = ""
    if tools.is_extractive:
        raw = compose_extractive(
            inp.passages, inp.question, tools.weights(), named=inp.named, compared=inp.compared
        )
        inp.clock.mark("first_token")
        yield AnswerEvent("token", text=raw)
    else:
        values = {"passages": format_passages(inp.passages), "question": inp.question}
        check = tools.sentence_check(
            inp.passages, inp.result.question, inp.result.query, asked_papers=asked_papers(inp)
        )
        shown: list[str] = []

        def checked(sentence: str) -> str:
            kept = check(sentence)
            if kept:
                shown.append(kept)
            return kept

        try:
            pieces = tools.generate("answer", values, inp.config)
            raw = yield from stream_checked(pieces, checked, inp.clock)
        except PaperTalkError as exc:
            yield inp.failed(str(exc))
            return
        if shown and not is_model_refusal(raw):
            # What the abstracts say in answer that the model's sentences leave out is quoted
            # after them (with nothing of the model's left, `finish` quotes instead).
            quotes = quotes_for(
                inp.passages, inp.question, tools.weights(), named=inp.named, compared=inp.compared
            )
            missing = [with_marker(t, n) for t, n in left_out(shown, quotes, tools.weights())]
            if missing:
                yield AnswerEvent("token", text=" " + " ".join(missing))
                # Guarded first: a sentence the model left unfinished (a loop cut off at its
                # token limit) must not run into the first quote and take it away with it.
                guarded = tools.guard(raw, inp.passages, inp.result.question, inp.result.query)
                raw = " ".join([_closed(guarded), *missing])
    yield finish(inp, tools, raw)


def finish(inp: ModeInput, tools: ModeTools, raw: str) -> AnswerEvent:
    """Citations, support labels and refusal detection for a generated or extractive text."""
    result, passages = inp.result, inp.passages
    if not result.extractive and (not raw.strip() or is_model_refusal(raw)):
        # The gates (rag/answer/refusal.py) found what the question asks in the passages: a
        # model that declines or says nothing adds nothing, and the passages are quoted instead
        # (the bundled model declined 2 of 184 answerable tune questions, and none of the 43
        # unanswerable ones the gates let through).
        return _quoted(inp, tools)
    if not raw.strip():
        return inp.refuse("the model found no answer in the passages")
    raw = strip_echoed_titles(raw, [p.title for p in passages])
    if not result.extractive:
        raw = tools.guard(raw, passages, result.question, result.query)
    tools.cite(result, raw, passages, inp.config, asked_papers=asked_papers(inp))
    if not result.extractive and not any(s.support in (SUPPORTED, WEAK) for s in result.sentences):
        return _quoted(inp, tools)  # nothing the model wrote is backed by a passage
    if not any(s.citations for s in result.sentences):
        return inp.refuse("nothing in the answer could be tied to a paper")
    return inp.final()


def _quoted(inp: ModeInput, tools: ModeTools) -> AnswerEvent:
    """The answer quoting the passages, in place of a model's that adds nothing."""
    result = inp.result
    result.extractive = True
    result.llm = f"{result.llm} (extractive fallback)"
    quotes = compose_extractive(
        inp.passages, inp.question, tools.weights(), named=inp.named, compared=inp.compared
    )
    tools.cite(result, quotes, inp.passages, inp.config)
    if not any(s.citations for s in result.sentences):
        return inp.refuse("nothing in the answer could be tied to a paper")
    return inp.final()


def asked_papers(inp: ModeInput) -> tuple[str, ...]:
    """The paper a question about one paper asks about: the one it names, else the one
    retrieved first (as the quoting answer does); none when it asks about several."""
    if inp.compared or about_several(inp.question) or not inp.passages or len(inp.named) > 1:
        return ()
    return inp.named or (inp.passages[0].paper_id,)


def _closed(text: str) -> str:
    """`text` ending a sentence (its own last words don't run into what follows)."""
    text = text.strip()
    if not text or re.search(r"[.!?][\"')\]]*(?:\s*\[[^\]]*\])*$", text):
        return text
    return f"{text}."


def strip_echoed_titles(text: str, titles: Sequence[str]) -> str:
    """Remove passage titles a small model copies into its answer ('[1] "Title": ...'): their
    punctuation would split sentences and they are not claims."""
    for title in sorted(set(titles), key=len, reverse=True):
        if title:
            text = re.sub(r'["“]?' + re.escape(title) + r'["”]?\s*:?', " ", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()
