"""When to say the papers don't answer: one fixed phrase, decided by the system.

Two deterministic gates run before any generation, so every backend refuses alike:
1. relevance: the best retrieved passage must be similar enough to the question;
2. coverage: the question's distinctive terms (IDF-weighted) must appear in the selected
   passages, and a question asking for a quantity needs a passage sentence that has a number
   and one of those terms.
A generative model's own "the papers do not say" also counts as a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.context import ContextPassage, TermWeights

CANNOT_ANSWER = "The retrieved papers do not answer this question."

# Stems of words that say what kind of answer is wanted rather than what it is about.
_GENERIC_STEMS = {
    "paper",
    "papers",
    "method",
    "approach",
    "propos",
    "work",
    "author",
    "studi",
    "use",
    "used",
    "differ",
    "compar",
    "comparison",
    "describ",
    "explain",
    "mean",
    "main",
    "idea",
    "new",
    "way",
    "report",
    "achiev",
    "show",
    "result",
    "find",
    "found",
    "give",
    "get",
    "make",
    "mani",
    "much",
    "doe",
    "what",
    "which",
    "how",
    "why",
    "kind",
    "type",
    "exist",
    "abl",
    "help",
    "allow",
    "tell",
    "talk",
    "say",
    "also",
    "besid",
    "both",
    "role",
    "play",
}
_QUANTITY = re.compile(
    r"\b(how (many|much|fast|long|large|big|small|often|far)|by how|what (is|was|are|were) the "
    r"(number|size|amount|percentage|rate|speed)|what (percentage|fraction|number|radius|"
    r"accuracy|score|error|speed-?up|latency)|which gpus?|what gpus?|how many gpus?)\b",
    re.IGNORECASE,
)
_MODEL_REFUSAL = re.compile(
    r"(papers? do(es)? not (say|mention|contain|answer|specify|provide|state)|"
    r"(cannot|can't|can not) (answer|tell|determine)|no information|not (mentioned|provided|"
    r"specified|stated) in|don't know|do not know)",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Answerability:
    answerable: bool
    coverage: float
    reason: str


def key_terms(question: str, weights: TermWeights) -> set[str]:
    return {t for t in weights.terms(question) if t not in _GENERIC_STEMS and len(t) > 1}


def check_answerable(
    question: str,
    passages: Sequence[ContextPassage],
    weights: TermWeights,
    *,
    min_coverage: float,
) -> Answerability:
    """Whether the selected passages plausibly contain the answer (see module doc)."""
    terms = key_terms(question, weights)
    if not passages:
        return Answerability(False, 0.0, "no passages")
    if not terms:
        return Answerability(True, 1.0, "no distinctive terms")
    text_terms: set[str] = set()
    for passage in passages:
        text_terms |= weights.terms(passage.title + " " + passage.text)
    total = sum(weights.idf(t) for t in terms)
    covered = sum(weights.idf(t) for t in terms if t in text_terms)
    coverage = covered / total if total else 1.0
    if coverage < min_coverage:
        return Answerability(False, coverage, "question terms missing from the passages")
    if _QUANTITY.search(question):
        for passage in passages:
            title_terms = weights.terms(passage.title)
            for sentence in passage.sentences:
                if _DIGIT.search(sentence.text) and (
                    (weights.terms(sentence.text) & terms) - title_terms
                ):
                    return Answerability(True, coverage, "quantity found")
        return Answerability(False, coverage, "no passage states the asked-for quantity")
    return Answerability(True, coverage, "covered")


def is_model_refusal(text: str) -> bool:
    return bool(_MODEL_REFUSAL.search(text))
