"""The `extractive` backend: an answer composed of the retrieved abstracts' best sentences.

No generative model: deterministic, fast, and every sentence is a quotation with its citation.
With the question at hand, sentences are chosen to cover every part of it ("what X does, and how
much it saves" needs the sentence with X and the sentence with the amount), not only the single
best-matching ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from rag.answer.context import ContextPassage, Sentence, TermWeights
from rag.answer.modes.quotes import is_link
from rag.answer.refusal import asks_amount, asks_for_code, content_terms, subject_terms
from rag.answer.safety import looks_like_injection
from rag.text.names import query_names

EXTRACTIVE_LABEL = "Extractive answer (sentences quoted from the abstracts)"

_NUMBER = re.compile(r"\d")
# A question's parts: clauses joined by "and"/"," before a new question word, or by "?"/";".
_PART_BREAK = re.compile(
    r"[?;]|\.\s+(?=[A-Z])|,?\s+and\s+(?=(?:how|what|which|why|where|when|who|whose|does|do|is|are|can)\b)|"
    r",\s+(?=(?:how|what|which|why|where|when|who|whose)\b)",
    re.IGNORECASE,
)


def compose_extractive(
    passages: Sequence[ContextPassage],
    question: str = "",
    weights: TermWeights | None = None,
    *,
    max_sentences: int = 3,
    relative_floor: float = 0.7,
) -> str:
    """The best sentences across passages, each followed by its passage marker.

    Without a question: the best-scoring sentences, each kept when its score is at least
    `relative_floor` of the best one, so a single clear match isn't diluted by weaker papers.
    With a question: `cover_question` picks them. Sentences that address an AI model are never
    quoted (context selection already leaves them out; this holds for any passages).
    """
    ranked = sorted(
        ((s, p.n) for p in passages for s in p.sentences if not looks_like_injection(s.text)),
        key=lambda item: -item[0].score,
    )
    if not ranked:
        return ""
    if question and not asks_for_code(question):
        ranked = [(s, n) for s, n in ranked if not is_link(s.text)] or ranked
    if question and weights is not None:
        # A paper the question names is named by its citation: each of its sentences covers the
        # name, so a question about two papers is answered from both.
        names = query_names(question)
        owned = {
            p.n: subject_terms(
                [x for x in names if x.lower() in f"{p.title} {p.text}".lower()], weights
            )
            for p in passages
        }
        chosen = cover_question(question, ranked, weights, max_sentences=max_sentences, owned=owned)
    else:
        best = ranked[0][0].score
        chosen = [
            (s, n)
            for s, n in ranked[:max_sentences]
            if s.score >= relative_floor * best or s is ranked[0][0]
        ]
    return " ".join(_with_marker(s.text, n) for s, n in chosen)


def question_parts(question: str) -> list[str]:
    """The clauses a question asks ("What is X, and how much does it save?" -> two)."""
    return [p.strip() for p in _PART_BREAK.split(question) if p and p.strip()]


# Greedy choice. A sentence joins the answer when it covers question terms not yet covered (or
# states the amount a part asks for): from the first sentence's paper when it adds at least
# SAME_PAPER_GAIN of the first sentence's gain, from another paper at least OTHER_PAPER_GAIN
# (another paper is cited only when it adds something). Calibrated on bench/qa/tune.jsonl.
SAME_PAPER_GAIN = 0.25
OTHER_PAPER_GAIN = 0.7
RELATIVE_FLOOR = 0.7


def cover_question(
    question: str,
    ranked: Sequence[tuple[Sentence, int]],
    weights: TermWeights,
    *,
    max_sentences: int = 3,
    owned: Mapping[int, set[str]] | None = None,
) -> list[tuple[Sentence, int]]:
    """Sentences (best-scored first in `ranked`, with their passage numbers) chosen greedily to
    cover the question's content terms and each amount a part asks for; returned in the order
    chosen. `owned` (passage number -> terms) adds terms each sentence of a passage covers."""
    split = question_parts(question)
    # A part's amount is stated by a sentence with a digit and the part's own terms (the names
    # of what the question is about don't count: every sentence of that paper may carry them).
    named = subject_terms(query_names(question), weights)
    wanted = set().union(*(content_terms(p, weights) for p in split)) if split else set()
    parts = [(content_terms(p, weights) - named, asks_amount(p)) for p in split]
    terms = [weights.terms(s.text) | (owned or {}).get(n, set()) for s, n in ranked]
    covered: set[str] = set()
    amount_met = [not amount for _, amount in parts]

    def gain(i: int) -> float:
        new = sum(weights.idf(t) for t in (terms[i] & wanted) - covered)
        if _NUMBER.search(ranked[i][0].text):
            new += sum(
                max((weights.idf(t) for t in part), default=0.0)
                for (part, _), met in zip(parts, amount_met, strict=True)
                if not met and terms[i] & part
            )
        return new / (1.0 + 0.15 * math.log1p(max(1, len(terms[i]))))

    def take(i: int) -> None:
        nonlocal amount_met
        chosen.append(i)
        covered.update(terms[i] & wanted)
        if _NUMBER.search(ranked[i][0].text):
            amount_met = [
                met or bool(terms[i] & part)
                for (part, _), met in zip(parts, amount_met, strict=True)
            ]

    # The best-scored sentence opens the answer; each paper the question names adds its best
    # sentence; the others join by what they add.
    chosen: list[int] = []
    first_gain = gain(0)
    take(0)
    names = set().union(*(owned or {}).values())
    while names - covered:
        left = [i for i in range(len(ranked)) if i not in chosen and terms[i] & (names - covered)]
        if not left:
            break
        take(max(left, key=lambda i: (gain(i), -i)))
    limit = max(max_sentences, len(chosen) + 1)
    while len(chosen) < min(limit, len(ranked)):
        best_gain, best = max((gain(i), -i) for i in range(len(ranked)) if i not in chosen)
        best = -best
        same = ranked[best][1] == ranked[0][1]
        if (
            best_gain <= 0
            or best_gain < (SAME_PAPER_GAIN if same else OTHER_PAPER_GAIN) * first_gain
        ):
            break
        take(best)
    # Then, as without a question, the first paper's other sentences that score nearly as well
    # (a "how does X work" answer often uses words the question doesn't).
    for i in range(1, min(limit, len(ranked))):
        if len(chosen) >= limit:
            break
        same = ranked[i][1] == ranked[0][1]
        if same and i not in chosen and ranked[i][0].score >= RELATIVE_FLOOR * ranked[0][0].score:
            chosen.append(i)
    return [ranked[i] for i in chosen]


def _with_marker(text: str, n: int) -> str:
    text = text.strip()
    if text and text[-1] in ".!?":
        return f"{text[:-1]} [{n}]{text[-1]}"
    return f"{text} [{n}]."
