"""Conversation helpers: turning a follow-up into a standalone retrieval query."""

from __future__ import annotations

import re
from collections.abc import Sequence

Turn = tuple[str, str]  # (question, answer)

_REFERRING = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|such|the (paper|papers|"
    r"method|methods|approach|model|authors|work|first|second|former|latter|same)|both|"
    r"each|either|neither|above|previous|earlier|mentioned|which\s+one|the\s+(?:two|three|"
    r"other|others))\b",
    re.IGNORECASE,
)


def refers_back(question: str) -> bool:
    """Whether the question refers to something said before ("it", "these papers", "the
    method")."""
    return bool(_REFERRING.search(question))


def is_followup(question: str) -> bool:
    """Whether `question` leans on earlier turns: it refers back ('it', 'the method'), or it is
    very short and names nothing ('Why?', 'And the speed-up?'; not 'What is Cake?')."""
    words = question.split()
    if _REFERRING.search(question):
        return True
    return len(words) <= 4 and not _names_something(words)


_SINGULAR = re.compile(
    r"\b(it|its|it's|this|that|the (paper|method|approach|model|work|same))\b", re.IGNORECASE
)


def is_about_the_last_paper(question: str) -> bool:
    """A follow-up about the single paper just discussed ("How does it work?"), naming no other."""
    return bool(_SINGULAR.search(question)) and not _names_something(question.split())


def names_nothing(question: str) -> bool:
    """Whether a question names no paper, method or dataset (no capitalised word after the
    first): a follow-up like that is about what was under discussion."""
    return not _names_something(question.split())


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


_WORD = re.compile(r"[a-z0-9]+")


def rewrite_is_faithful(
    rewrite: str, question: str, history: Sequence[Turn], *, max_new_share: float = 0.2
) -> bool:
    """Whether a model's standalone rewrite of `question` only reuses the words of the questions
    asked so far and the names (capitalised words) in the answers. A small model often invents a
    topic instead ("Cake is a light-weight data processing system for image editing"), and a
    search for that finds the wrong papers."""
    asked = " ".join([question, *(q for q, _ in history)])
    names = re.findall(r"\b\w*[A-Z0-9]\w*", " ".join(a for _, a in history))
    known = set(_WORD.findall(f"{asked} {' '.join(names)}".lower()))
    words = [w for w in _WORD.findall(rewrite.lower()) if len(w) >= 4]
    if not words:
        return False
    new = [w for w in words if w not in known]
    return len(new) <= max_new_share * len(words)


def _as_sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if not text or text[-1] in ".?!" else text + "."
