"""Build the numbered context for the LLM: the most relevant sentences of the retrieved papers.

A 135M-parameter model reads ~200 tokens/s on two cores, so whole abstracts are too slow and too
distracting. Each retrieved paper contributes its best sentences (scored by IDF-weighted overlap
with the question, plus the paper's retrieval rank), and the passages stay within a token budget.
Passage [n] is one paper, so a citation always maps to exactly one paper.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rag.answer.safety import escape_passage_text, safe_title, strip_injection
from rag.records import PaperHit
from rag.text.names import query_names
from rag.text.sentences import split_sentences

Tokenizer = Callable[[list[str]], list[list[str]]]


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int  # offsets in the paper's abstract
    end: int
    score: float


@dataclass
class ContextPassage:
    """Passage [n] given to the LLM: selected sentences of one paper, in abstract order."""

    n: int
    hit: PaperHit
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    @property
    def paper_id(self) -> str:
        return self.hit.paper_id

    @property
    def title(self) -> str:
        return self.hit.title


class TermWeights:
    """IDF weights of stemmed terms, from the lexical index's document frequencies."""

    def __init__(self, tokenize: Tokenizer, df: dict[str, int], n_docs: int) -> None:
        self.tokenize = tokenize
        self._df = df
        self._n = max(1, n_docs)

    def idf(self, term: str) -> float:
        df = self._df.get(term, 0)
        return math.log(1 + (self._n - df + 0.5) / (df + 0.5))

    def terms(self, text: str) -> set[str]:
        return set(self.tokenize([text])[0])


def candidate_sentences(hit: PaperHit) -> list[Sentence]:
    """The sentences of a hit's passages, with offsets in the abstract, deduplicated.

    A sentence that addresses an AI model ("ignore previous instructions…") is cut where the
    instruction starts, or left out: it is neither context for the LLM nor quotable.
    """
    seen: set[tuple[int, int]] = set()
    out: list[Sentence] = []
    for passage in hit.passages:
        for span in split_sentences(passage.text):
            start, end = passage.start + span.start, passage.start + span.end
            if (start, end) not in seen:
                seen.add((start, end))
                text = strip_injection(passage.text[span.start : span.end])
                if text:
                    out.append(Sentence(text, start, start + len(text), 0.0))
    return out


def overlap_score(asked: set[str], text: str, weights: TermWeights) -> float:
    """IDF-weighted overlap of `text` with the `asked` terms, with a mild length normalisation
    (long sentences match more by chance)."""
    terms = weights.terms(text)
    overlap = sum(weights.idf(t) for t in asked & terms)
    return overlap / (1.0 + 0.15 * math.log1p(max(1, len(terms))))


def score_sentences(
    question: str, hit: PaperHit, weights: TermWeights, *, rank: int
) -> list[Sentence]:
    """Sentences of `hit`, scored for `question`, best first."""

    query_terms = weights.terms(question)
    names = [n.lower() for n in query_names(question)]
    scored = []
    for sentence in candidate_sentences(hit):
        # A sentence naming what the question names (a dataset, a model) is worth more.
        named = sum(1.0 for n in names if n in sentence.text.lower())
        score = overlap_score(query_terms, sentence.text, weights) + named - 0.05 * rank
        scored.append(Sentence(sentence.text, sentence.start, sentence.end, score))
    scored.sort(key=lambda s: -s.score)
    return scored


def build_context(
    question: str,
    hits: Sequence[PaperHit],
    weights: TermWeights,
    count_tokens: Callable[[str], int],
    *,
    budget_tokens: int,
    max_sentences_per_paper: int = 2,
    unmatched: bool = False,
) -> list[ContextPassage]:
    """Numbered passages (one per paper, in retrieval order) within `budget_tokens`. A
    paper's sentences that share no term with the question come only with `unmatched` (a quoted
    answer may need the sentence after a matching one)."""
    passages: list[ContextPassage] = []
    used = 0
    per_paper = [score_sentences(question, hit, weights, rank=i) for i, hit in enumerate(hits)]
    # Round-robin: every paper's best sentence first, then second-best ones while budget lasts.
    for round_ in range(max_sentences_per_paper):
        for hit, ranked in zip(hits, per_paper, strict=True):
            if round_ >= len(ranked):
                continue
            sentence = ranked[round_]
            passage = next((p for p in passages if p.hit is hit), None)
            cost = count_tokens(sentence.text) + (0 if passage else count_tokens(hit.title) + 4)
            if used + cost > budget_tokens:
                continue
            if round_ > 0 and sentence.score <= 0 and not unmatched:
                continue
            if passage is None:
                passage = ContextPassage(len(passages) + 1, hit)
                passages.append(passage)
            passage.sentences.append(sentence)
            used += cost
    for passage in passages:
        passage.sentences.sort(key=lambda s: s.start)
    return passages


# A question describes one paper when its closest retrieved paper is at least this much closer
# in meaning (cosine similarity) than the next one. On the tune splits, no factual, method or
# follow-up question whose closest paper is not the asked one reaches 0.1 (0 of 41); 61% of
# those whose closest paper is the asked one do (212 of 346). Such a question is answered from
# that paper alone (rag/answer/chain.py); 0.07 and 0.05 answered no more tune questions right.
STANDOUT_MARGIN = 0.1


def stands_out(similarities: Sequence[float]) -> bool:
    """Whether the closest of the retrieved papers (their similarities to the question) is
    clearly closer than every other: the question describes that paper."""
    ranked = sorted(similarities, reverse=True)
    return len(ranked) >= 2 and ranked[0] - ranked[1] >= STANDOUT_MARGIN


# A question about one paper that names none describes it in words and meaning together: a
# paper's description score is the cosine similarity of its closest chunk to the question plus
# DESCRIBED_WORDS times the IDF-weighted share of the question's topic words its title and
# abstract hold (a paraphrase may match another paper's single sentence best; the paper it
# describes holds more of its words across the abstract). The paper retrieval ranks first stays
# first unless another scores at least DESCRIBED_MARGIN higher. On the factual and method
# questions of the tune splits that ask about one unnamed paper (170), the asked paper comes
# first in 162 of them, against 154 in retrieval's order (8 gained, none lost); without the
# margin 163 (10 gained, 1 lost, and a near tie lost on a fresh question); 148 for the closest
# chunk alone, 157 for the words alone. Over `tune` to `tune22`, 9 answers moved to the asked
# paper and none away (citation precision 0.881 -> 0.886). After earlier turns retrieval's
# order stands: it carries the paper under discussion.
DESCRIBED_WORDS = 0.5
DESCRIBED_MARGIN = 0.03


def described_first(
    hits: Sequence[PaperHit], similarity: Mapping[str, float], word_share: Mapping[str, float]
) -> list[PaperHit]:
    """`hits` with the paper that best describes a question about one paper first, when it
    clearly does (see DESCRIBED_MARGIN): `similarity` is each paper's closest chunk's cosine to
    the question, `word_share` the share of the question's topic words its title and abstract
    hold. The others keep retrieval order."""
    if not hits:
        return []

    def described(hit: PaperHit) -> float:
        return similarity.get(hit.paper_id, 0.0) + DESCRIBED_WORDS * word_share.get(
            hit.paper_id, 0.0
        )

    best = max(hits, key=described)
    if described(best) - described(hits[0]) < DESCRIBED_MARGIN:
        return list(hits)
    return [best, *(h for h in hits if h is not best)]


def format_passages(passages: Sequence[ContextPassage]) -> str:
    """The passages as the prompt shows them (inside the prompt's `<passages>` block): one line
    per paper, `[n] "Title": text`. Retrieved text is data: it is escaped (one line, `<`, `>`,
    `&` as entities), so nothing in an abstract or title can close the block, and a title's
    instructions to a model are removed. (Per-passage XML elements were tried: the 135M model
    then found half as many facts in the dev set, so the block is delimited once.)"""
    return "\n".join(
        f'[{p.n}] "{escape_passage_text(safe_title(p.title))}": {escape_passage_text(p.text)}'
        for p in passages
    )
