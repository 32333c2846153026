"""Conversation helpers: turning a follow-up into a standalone retrieval query."""

from __future__ import annotations

import re
from collections.abc import Sequence

Turn = tuple[str, str]  # (question, answer)

_REFERRING = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|such|the (paper|papers|"
    r"method|methods|approach|model|authors|work|first|second|former|latter|same)|both|"
    r"each|either|neither|above|previous|earlier|mentioned)\b",
    re.IGNORECASE,
)


def is_followup(question: str) -> bool:
    """Whether `question` leans on earlier turns: it refers back ('it', 'the method'), or it is
    very short and names nothing ('Why?', 'And the speed-up?'; not 'What is Cake?')."""
    words = question.split()
    if _REFERRING.search(question):
        return True
    return len(words) <= 4 and not _names_something(words)


def _names_something(words: Sequence[str]) -> bool:
    """A capitalised or mixed-case word after the first one: a paper, method or dataset name."""
    for word in words[1:]:
        core = word.strip(".,;:!?\"'()[]")
        if core and core != "I" and any(ch.isupper() for ch in core):
            return True
    return False


def standalone_query(question: str, history: Sequence[Turn], *, max_turns: int = 3) -> str:
    """The question, prefixed by the earlier questions it leans on when it reads as a follow-up:
    the previous question and, while those are follow-ups too, the ones before it (at most
    `max_turns`), so "What is Cake?" → "How does it work?" → "What does it improve?" still
    searches for Cake.

    Deterministic and model-free, so a weak LLM can never break retrieval of follow-ups.
    """
    question = " ".join(question.split())
    if not history or not is_followup(question):
        return question
    chain: list[str] = []
    for earlier, _ in reversed(history[-max_turns:]):
        chain.append(_as_sentence(earlier))
        if not _REFERRING.search(earlier):  # it names its own subject: the chain starts here
            break
    return " ".join([*reversed(chain), question])


def _as_sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if not text or text[-1] in ".?!" else text + "."
