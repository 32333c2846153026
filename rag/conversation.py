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
    """Whether `question` leans on earlier turns (pronouns, 'the method', very short)."""
    words = question.split()
    return bool(_REFERRING.search(question)) or len(words) <= 4


def standalone_query(question: str, history: Sequence[Turn], *, turns: int = 1) -> str:
    """The question, prefixed by the last `turns` questions when it reads as a follow-up.

    Deterministic and model-free, so a weak LLM can never break retrieval of follow-ups.
    """
    question = " ".join(question.split())
    if not history or not is_followup(question):
        return question
    previous = " ".join(_as_sentence(q) for q, _ in history[-turns:])
    return f"{previous} {question}"


def _as_sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if not text or text[-1] in ".?!" else text + "."
