"""One browser session's conversation: the turns asked so far and what the answerer needs of them.

Kept in a `gr.State`, so each session (browser tab or `gradio_client.Client`) has its own copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag.records import Answer, PaperHit
from rag.retrieve.hybrid import SearchFilters
from rag.text.questions import tidy_question

MAX_TURNS = 50  # older turns are dropped from a session (the page and the follow-up context)


@dataclass
class Turn:
    question: str
    mode: str = "ask"
    answer: Answer | None = None  # None while the answer is being produced (or on an error)
    error: str | None = None  # an error that stopped the turn before any answer
    hits: list[PaperHit] = field(default_factory=list)  # retrieved papers, known early
    partial: str = ""  # streamed text so far
    number: int = 0  # unique within the session: anchors of its sources use it
    filters: SearchFilters | None = None  # the filters it was answered with (shown, exported)
    scope: str = ""  # the topic its papers were restricted to, in words ("" when none)

    @property
    def failed(self) -> bool:
        return self.error is not None or (self.answer is not None and self.answer.error is not None)

    @property
    def pending(self) -> bool:
        return self.answer is None and self.error is None


@dataclass
class Conversation:
    turns: list[Turn] = field(default_factory=list)
    counter: int = 0

    def start(self, question: str, mode: str) -> Turn:
        self.counter += 1
        turn = Turn(tidy_question(question), mode, number=self.counter)
        self.turns.append(turn)
        del self.turns[:-MAX_TURNS]
        return turn

    def history(self) -> list[tuple[str, str]]:
        """(question, answer) pairs of the answered turns, for follow-up questions."""
        return [
            (t.question, t.answer.answer)
            for t in self.turns
            if t.answer is not None and not t.failed
        ]

    def history_papers(self) -> list[str]:
        """Papers cited by the latest turn that cited any (follow-ups lean on them)."""
        for turn in reversed(self.turns):
            if turn.answer is not None and turn.answer.citations and not turn.failed:
                return turn.answer.cited_paper_ids
        return []

    def transcript(self) -> list[dict[str, Any]]:
        """The session's turns as plain data, oldest first (the `/history` API endpoint)."""
        return [
            {
                "question": t.question,
                "mode": t.mode,
                "answer": t.answer.answer if t.answer is not None else None,
                "paper_ids": t.answer.cited_paper_ids if t.answer is not None else [],
                "error": t.error or (t.answer.error if t.answer is not None else None),
            }
            for t in self.turns
        ]

    @property
    def last_answer(self) -> Answer | None:
        for turn in reversed(self.turns):
            if turn.answer is not None:
                return turn.answer
        return None
