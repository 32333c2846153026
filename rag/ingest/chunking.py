"""Split an abstract into sentence-aligned chunks sized for the embedding model.

Abstracts are short (~260 model tokens on average), so most become one or two chunks. Chunks are
balanced (a 300-token abstract becomes two ~150-token chunks, not 250 + 50) and do not overlap by
default: overlap re-embeds tokens and did not improve paper-level recall (see bench/retrieval.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from rag.records import Chunk
from rag.text.sentences import Span, split_sentences

TokenCounter = Callable[[str], int]


def _split_long(text: str, span: Span, budget: int, count: TokenCounter) -> list[Span]:
    """Split one over-long sentence at word boundaries into pieces of at most `budget` tokens."""
    pieces: list[Span] = []
    words = [m.span() for m in re.finditer(r"\S+", text[span.start : span.end])]
    piece_start = 0
    for i in range(1, len(words) + 1):
        if i == len(words):
            pieces.append(Span(span.start + words[piece_start][0], span.start + words[i - 1][1]))
            break
        candidate = text[span.start + words[piece_start][0] : span.start + words[i][1]]
        if count(candidate) > budget and i > piece_start:
            pieces.append(Span(span.start + words[piece_start][0], span.start + words[i - 1][1]))
            piece_start = i
    return pieces


def chunk_abstract(
    paper_id: str,
    title: str,
    abstract: str,
    *,
    count_tokens: TokenCounter,
    max_tokens: int = 254,
    overlap_sentences: int = 0,
) -> list[Chunk]:
    """Sentence-aligned, balanced chunks of `abstract`; each fits `max_tokens` with the title.

    `count_tokens` counts model tokens without special tokens. Offsets refer to `abstract`.
    """
    title_cost = count_tokens(title) + 1 if title else 0
    budget = max(16, max_tokens - title_cost)
    sentences: list[Span] = []
    for span in split_sentences(abstract):
        if count_tokens(abstract[span.start : span.end]) > budget:
            sentences.extend(_split_long(abstract, span, budget, count_tokens))
        else:
            sentences.append(span)
    if not sentences:
        return []
    costs = [count_tokens(abstract[s.start : s.end]) for s in sentences]
    total = sum(costs)
    n_chunks = max(1, math.ceil(total / budget))
    target = total / n_chunks

    groups: list[list[int]] = [[]]
    used = 0
    for i, cost in enumerate(costs):
        current = groups[-1]
        over_budget = used + cost > budget
        # Close the chunk once it is nearer the balanced target with this sentence left out.
        past_target = current and used + cost / 2 > target and len(groups) < n_chunks
        if current and (over_budget or past_target):
            groups.append([i])
            used = cost
        else:
            current.append(i)
            used += cost

    if overlap_sentences:
        for g in range(1, len(groups)):
            previous = groups[g - 1]
            shared = previous[-overlap_sentences:]
            if len(shared) < len(previous):
                groups[g] = shared + groups[g]

    chunks = []
    for index, group in enumerate(groups):
        start, end = sentences[group[0]].start, sentences[group[-1]].end
        chunks.append(Chunk(paper_id, index, abstract[start:end], start, end))
    return chunks
