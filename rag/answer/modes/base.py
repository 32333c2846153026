"""What every mode gets: its input (question, retrieved papers, numbered context, the answer
being built) and a narrow set of tools from the chain, never the chain itself."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from langchain_core.runnables import RunnableConfig

from rag.answer.citations import render_sentence, split_cited_sentences
from rag.answer.context import ContextPassage, TermWeights
from rag.answer.refusal import CANNOT_ANSWER
from rag.answer.relevance import TopicDecision
from rag.explore.topics import TopicMap
from rag.records import Answer, AnswerEvent, AnswerSentence, PaperHit
from rag.retrieve.hybrid import SearchFilters
from rag.settings import Settings
from rag.text.sentences import split_sentences


class ModeTools(Protocol):
    """The chain's services a mode may use."""

    @property
    def settings(self) -> Settings: ...

    @property
    def is_extractive(self) -> bool: ...

    def generate(
        self, prompt: str, values: Mapping[str, str], config: RunnableConfig | None
    ) -> Iterator[str]:
        """Stream text from `prompts/<prompt>` | llm; failures are one-line PaperTalkErrors."""
        ...

    def cite(
        self,
        result: Answer,
        raw: str,
        passages: Sequence[ContextPassage],
        config: RunnableConfig | None,
        asked_papers: Collection[str] = (),
    ) -> None:
        """Fill `result`'s sentences, citations and text from `raw` (with [n] markers); a
        generated sentence that cites none of the `asked_papers` (when given) is removed."""
        ...

    def cite_prose(
        self, raw: str, passages: Sequence[ContextPassage]
    ) -> tuple[str, list[AnswerSentence], list[str]]:
        """Prose whose [n] are reference numbers (`passage.n`): checked and labelled; returns
        the text, its sentences and why each removed sentence went."""
        ...

    def guard(self, text: str, passages: Sequence[ContextPassage], *questions: str) -> str: ...

    def sentence_check(
        self,
        passages: Sequence[ContextPassage],
        *questions: str,
        numbered: bool = False,
        asked_papers: Collection[str] = (),
    ) -> Callable[[str], str]:
        """A check of one generated sentence against `passages` (markers as in `cite`, or as
        in `cite_prose` when `numbered`): the sentence as it may be shown, or '' (as in `cite`,
        one citing none of the `asked_papers` is removed)."""
        ...

    def abstract_sentences(self, paper_id: str) -> list[str]: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def paper_vectors(self, paper_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Each paper's stored embedding (the normalised mean of its chunks' vectors)."""
        ...

    def weights(self) -> TermWeights: ...

    def topic_map(self) -> TopicMap:
        """The collection's topic map (kept beside the store; built the first time)."""
        ...

    def papers_by(self, filters: SearchFilters | None) -> list[PaperHit]:
        """Every paper of the collection that passes `filters`, by title."""
        ...

    def similar_to(self, paper_id: str, k: int) -> list[tuple[str, float]]:
        """The `k` papers nearest to `paper_id` by paper vector, with their cosine similarity
        (best first, itself excluded)."""
        ...

    def judge_papers(
        self,
        topic: str,
        hits: Sequence[PaperHit],
        config: RunnableConfig | None,
        filters: SearchFilters | None = None,
    ) -> TopicDecision:
        """Which of `hits`, and of the other papers (within `filters`) that use the topic's
        anchor terms, are about `topic` (rag/answer/relevance.py)."""
        ...


@dataclass
class Clock:
    """Milliseconds since the question arrived, by step name."""

    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)

    def ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def mark(self, name: str) -> None:
        self.timings[name] = self.ms()

    def mark_once(self, name: str) -> None:
        self.timings.setdefault(name, self.ms())


@dataclass
class ModeInput:
    question: str
    query: str
    hits: list[PaperHit]
    passages: list[ContextPassage]
    result: Answer
    clock: Clock
    config: RunnableConfig | None = None
    filters: SearchFilters | None = None
    named: tuple[str, ...] = ()  # the papers the question calls by name, in order of mention
    compared: bool = False  # whether it asks about two or more of them, not one and its baseline
    # The hits are papers of the previous answer the user picked ("Summarize them", "Compare the
    # first two"), in the order picked: the mode takes them as they are.
    picked: bool = False

    def final(self) -> AnswerEvent:
        """The finished answer, with its timings."""
        self.clock.mark_once("first_token")
        self.clock.mark("total")
        self.result.timings_ms = dict(self.clock.timings)
        return AnswerEvent("final", answer=self.result)

    def refuse(self, reason: str, related: Sequence[PaperHit] | None = None) -> AnswerEvent:
        """The fixed 'cannot answer' phrase, with the reason and the closest papers."""
        self.result.refused = True
        self.result.answer = CANNOT_ANSWER
        self.result.refusal_reason = reason
        self.result.sentences = []
        self.result.citations = []
        self.result.related = list(self.hits[:3] if related is None else related)
        self.result.closest = {h.paper_id: self.closest_sentence(h) for h in self.result.related}
        return self.final()

    def closest_sentence(self, hit: PaperHit) -> str:
        """What a paper does say nearest to the question: its best-scored context sentence, or
        the start of its best passage."""
        scored = [s for p in self.passages if p.paper_id == hit.paper_id for s in p.sentences]
        if scored:
            return max(scored, key=lambda s: s.score).text
        if hit.passages:
            spans = split_sentences(hit.passages[0].text)
            return hit.passages[0].text[spans[0].start : spans[0].end] if spans else ""
        return ""

    def failed(self, error: str) -> AnswerEvent:
        """Generation failed: the error, and the papers that were retrieved."""
        self.result.error = error
        self.result.related = list(self.hits)
        return self.final()


def stream_checked(
    pieces: Iterable[str], check: Callable[[str], str], clock: Clock
) -> Generator[AnswerEvent, None, str]:
    """Relay generated text sentence by sentence, each only after `check` passed it, so nothing
    the final answer removes is ever shown; returns the whole raw text. A sentence is complete
    once the next one has begun with a word (markers after its full stop still belong to it)."""
    raw = ""
    checked = 0  # sentences passed to `check`
    shown = 0  # sentences shown

    def relay(sentences: Sequence[tuple[str, list[int]]]) -> Iterator[AnswerEvent]:
        nonlocal checked, shown
        for text, numbers in sentences:
            checked += 1
            kept = check(render_sentence(text, numbers))
            if kept:
                clock.mark_once("first_token")
                yield AnswerEvent("token", text=(" " if shown else "") + kept)
                shown += 1

    for piece in pieces:
        raw += piece
        sentences = split_cited_sentences(raw)
        if len(sentences) > 1 and re.search(r"[^\W\d_]", sentences[-1][0]):
            yield from relay(sentences[checked:-1])
    yield from relay(split_cited_sentences(raw)[checked:])
    return raw


Mode = Callable[[ModeInput, ModeTools], Iterator[AnswerEvent]]
