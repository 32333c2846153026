"""Scores of an evaluation run.

Metrics (overall and per question type), each averaged per question unless said otherwise:
- retrieval: paper-level recall@1/5/10 and MRR of the retriever's ranking of the standalone
  query (`rag.conversation.standalone_query`, what the chain searches with), answerable only;
- citation: precision = share of cited papers that are gold, over answerable questions that cite
  something; recall = share of gold papers cited, over all answerable questions (a refusal
  recalls nothing);
- facts: share of `facts` found in the answer text (case-insensitive), over questions with facts;
- refusal: `correct` = share of `unanswerable` questions refused, `false` = share of the others
  refused;
- support: supported answer sentences / all answer sentences (pooled over answers);
- latency: p50/p95 of the answer's retrieve, first-token and total times (ms), all questions.
A metric with no question to average over is `null` (e.g. refusal.correct without unanswerable
questions), never a misleading 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rag.eval.dataset import QuestionResult

LATENCY_KEYS = ("retrieve", "first_token", "total")


def recall_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of the gold papers among the first `k` ranked papers."""
    if not gold:
        return 0.0
    top = set(ranked[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    """1 / rank of the first gold paper (0 when none is ranked)."""
    wanted = set(gold)
    for rank, paper_id in enumerate(ranked, start=1):
        if paper_id in wanted:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# Metrics --------------------------------------------------------------------------------------
def citation_precision(cited: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of the distinct cited papers that are gold; None when nothing is cited."""
    distinct = list(dict.fromkeys(cited))
    if not distinct:
        return None
    wanted = set(gold)
    return sum(1 for c in distinct if c in wanted) / len(distinct)


def citation_recall(cited: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of the gold papers cited; None without gold papers."""
    if not gold:
        return None
    cited_set = set(cited)
    return sum(1 for g in dict.fromkeys(gold) if g in cited_set) / len(set(gold))


def facts_recall(answer: str, facts: Sequence[str]) -> float | None:
    """Share of the facts found in the answer (case-insensitive, whitespace-normalised)."""
    if not facts:
        return None
    text = " ".join(answer.split()).casefold()
    return sum(1 for f in facts if " ".join(f.split()).casefold() in text) / len(facts)


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def question_score(result: QuestionResult) -> float:
    """One number per question for "worst questions" (0 = worst): an unanswerable question
    scores 1 when refused; an answerable one the mean of recall@5, citation recall and facts
    recall (0 when refused or failed)."""
    item = result.item
    if not item.answerable:
        return 1.0 if result.refused else 0.0
    if result.refused or result.error:
        return 0.0
    parts = [
        recall_at(result.ranked, item.gold, 5),
        citation_recall(result.cited, item.gold),
        facts_recall(result.answer, item.facts),
    ]
    return _mean(parts) or 0.0


def summarize(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """The metric groups for a set of results (see the module doc for the definitions)."""
    answerable = [r for r in results if r.item.answerable]
    unanswerable = [r for r in results if not r.item.answerable]

    def retrieval(k: int) -> float | None:
        return _mean(recall_at(r.ranked, r.item.gold, k) for r in answerable)

    labels = [label for r in results if not r.refused for label in r.support]
    latency: dict[str, list[float]] = {
        key: [r.timings_ms[key] for r in results if key in r.timings_ms] for key in LATENCY_KEYS
    }

    def pct(key: str, q: float) -> float | None:
        return percentile(latency[key], q) if latency[key] else None

    return {
        "n": len(results),
        "retrieval": {
            "recall@1": retrieval(1),
            "recall@5": retrieval(5),
            "recall@10": retrieval(10),
            "mrr": _mean(reciprocal_rank(r.ranked, r.item.gold) for r in answerable),
        },
        "citation": {
            "precision": _mean(citation_precision(r.cited, r.item.gold) for r in answerable),
            "recall": _mean(citation_recall(r.cited, r.item.gold) for r in answerable),
        },
        "facts": {"recall": _mean(facts_recall(r.answer, r.item.facts) for r in answerable)},
        "refusal": {
            "correct": _mean(1.0 if r.refused else 0.0 for r in unanswerable),
            "false": _mean(1.0 if r.refused else 0.0 for r in answerable),
        },
        "support": (sum(1 for s in labels if s == "supported") / len(labels)) if labels else None,
        "latency_ms": {
            "retrieve_p50": pct("retrieve", 50),
            "retrieve_p95": pct("retrieve", 95),
            "first_token_p50": pct("first_token", 50),
            "total_p50": pct("total", 50),
            "total_p95": pct("total", 95),
        },
    }


def question_types(results: Sequence[QuestionResult]) -> list[str]:
    return list(dict.fromkeys(r.item.group for r in results))
