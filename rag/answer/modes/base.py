"""What every mode gets: its input (question, retrieved papers, numbered context, the answer
being built) and a narrow set of tools from the chain, never the chain itself."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from langchain_core.runnables import RunnableConfig

from rag.answer.context import ContextPassage, TermWeights
from rag.answer.refusal import CANNOT_ANSWER
from rag.answer.relevance import TopicDecision
from rag.records import Answer, AnswerEvent, AnswerSentence, PaperHit
from rag.retrieve.hybrid import SearchFilters
from rag.settings import Settings


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
    ) -> None:
        """Fill `result`'s sentences, citations and text from `raw` (with [n] markers)."""
        ...

    def cite_prose(
        self, raw: str, passages: Sequence[ContextPassage]
    ) -> tuple[str, list[AnswerSentence]]:
        """Prose whose [n] are reference numbers (`passage.n`): checked and labelled."""
        ...

    def guard(self, text: str, passages: Sequence[ContextPassage], *questions: str) -> str: ...

    def abstract_sentences(self, paper_id: str) -> list[str]: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def weights(self) -> TermWeights: ...

    def papers_by(self, filters: SearchFilters | None) -> list[PaperHit]:
        """Every paper of the collection that passes `filters`, by title."""
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
        return self.final()

    def failed(self, error: str) -> AnswerEvent:
        """Generation failed: the error, and the papers that were retrieved."""
        self.result.error = error
        self.result.related = list(self.hits)
        return self.final()


Mode = Callable[[ModeInput, ModeTools], Iterator[AnswerEvent]]
