"""Run a question set through an evaluated system (PaperTalk, or the baseline) and collect
per-question results; `eval_json` is the machine-readable outcome of a run."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rag.answer.conversation import standalone_query
from rag.errors import PaperTalkError
from rag.eval.dataset import QAItem, QuestionResult, mode_for
from rag.eval.metrics import question_types, summarize

RANK_DEPTH = 10  # papers ranked for the retrieval metrics


class System(Protocol):
    """Something that answers an eval question (PaperTalk, the baseline, a test double)."""

    label: str

    def run(self, item: QAItem, mode: str) -> QuestionResult: ...


class PaperTalkSystem:
    """PaperTalk's answering chain (`rag.answer.Answerer`) as an evaluated system."""

    def __init__(self, answerer: Any) -> None:
        self.answerer = answerer
        self.label = answerer.llm_label

    def run(self, item: QAItem, mode: str) -> QuestionResult:

        history = list(item.history)
        ranked = [
            hit.paper_id
            for hit in self.answerer.searcher.search(
                standalone_query(item.question, history), RANK_DEPTH
            )
        ]
        answer = self.answerer.answer(item.question, mode=mode, history=history)
        return QuestionResult(
            item=item,
            ranked=ranked,
            # A refusal may answer the parts of the question the papers state: what it shows.
            answer=" ".join(t for t in (answer.answer, answer.partial) if t),
            refused=answer.refused,
            cited=list(dict.fromkeys(answer.cited_paper_ids)),
            support=[s.support for s in answer.sentences],
            timings_ms=dict(answer.timings_ms),
            mode=mode,
            error=answer.error,
        )


def run_system(
    system: System,
    items: Sequence[QAItem],
    *,
    policy: str = "ask",
    on_result: Callable[[int, QuestionResult, float], None] | None = None,
) -> list[QuestionResult]:
    """Every question through `system`, in order; `on_result(i, result, seconds)` after each."""
    results = []
    for i, item in enumerate(items, start=1):
        started = time.perf_counter()
        try:
            result = system.run(item, mode_for(item, policy))
        except PaperTalkError as exc:  # a question the system cannot take is a scored failure
            result = QuestionResult(item, [], "", False, [], error=str(exc))
        results.append(result)
        if on_result is not None:
            on_result(i, result, time.perf_counter() - started)
    return results


def report_json(results: Sequence[QuestionResult], label: str) -> dict[str, Any]:
    """`{"n", "llm", <metric groups>, "by_type": {TYPE: {"n", <metric groups>}}}`."""
    summary = summarize(results)
    by_type = {
        t: summarize([r for r in results if r.item.group == t]) for t in question_types(results)
    }
    out: dict[str, Any] = {"n": summary.pop("n"), "llm": label, **summary, "by_type": by_type}
    return _rounded(out)


def eval_json(run: EvalRun) -> dict[str, Any]:
    """The `papertalk eval --json` object (the baseline has the same shape, or is null)."""
    out = report_json(run.results, run.label)
    out["baseline"] = (
        report_json(run.baseline_results, run.baseline_label)
        if run.baseline_results is not None
        else None
    )
    return out


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


@dataclass
class EvalRun:
    """Both systems' results on one question set."""

    label: str
    results: list[QuestionResult]
    baseline_label: str = ""
    baseline_results: list[QuestionResult] | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # corpus, policy, seconds, ...
