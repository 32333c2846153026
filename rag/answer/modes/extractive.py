"""The `extractive` backend: an answer composed of the retrieved abstracts' best sentences.

No generative model: deterministic, fast, and every sentence is a quotation with its citation.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.answer.context import ContextPassage
from rag.answer.safety import looks_like_injection

EXTRACTIVE_LABEL = "Extractive answer (sentences quoted from the abstracts)"


def compose_extractive(
    passages: Sequence[ContextPassage], *, max_sentences: int = 3, relative_floor: float = 0.7
) -> str:
    """The best-scoring sentences across passages, each followed by its passage marker.

    A sentence is kept when its score is at least `relative_floor` of the best one (0.7: on
    bench/qa/tune.jsonl, citation precision 0.94 against 0.90 at 0.6, facts alike), so a single
    clear match isn't diluted by weaker papers. Sentences that address an AI model are never
    quoted (context selection already leaves them out; this holds for any passages).
    """
    ranked = sorted(
        ((s, p.n) for p in passages for s in p.sentences if not looks_like_injection(s.text)),
        key=lambda item: -item[0].score,
    )
    if not ranked:
        return ""
    best = ranked[0][0].score
    chosen = [
        (s, n)
        for s, n in ranked[:max_sentences]
        if s.score >= relative_floor * best or s is ranked[0][0]
    ]
    return " ".join(_with_marker(s.text, n) for s, n in chosen)


def _with_marker(text: str, n: int) -> str:
    text = text.strip()
    if text and text[-1] in ".!?":
        return f"{text[:-1]} [{n}]{text[-1]}"
    return f"{text} [{n}]."
