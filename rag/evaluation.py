"""Evaluation harness: run a question set through PaperTalk (and the tutorial baseline), score it.

Input is JSON Lines, one question per line (the schema of ../shared/eval/dev_qa.jsonl):
`qid`, `type`, `question`, `history` ([[question, answer], ...]), `gold` (paper ids), `facts`
(short strings a correct answer contains), `notes`. Type `unanswerable` has no gold papers.

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

Modes: `ask` (default) asks every question in `ask` mode; `by-type` asks `comparison` questions
in `compare` mode. Measured on the dev set (bundled corpus, extractive), compare mode cited 4
papers where 2 were asked about (citation precision 0.50 vs 1.00 in ask mode) and found fewer
facts (0.30 vs 0.60) for a higher citation recall (1.00 vs 0.80), so the default is the mode a
user gets by default. Summary questions stay in `ask` either way: summarize mode answers a topic
with a themed list of every relevant paper, a different task from the set's summary questions
(a few named papers, each with its facts).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rag.errors import PaperTalkError
from rag.metrics import percentile, recall_at, reciprocal_rank

UNANSWERABLE = "unanswerable"
RANK_DEPTH = 10  # papers ranked for the retrieval metrics
MODE_POLICIES = ("ask", "by-type")
_MODE_BY_TYPE = {"comparison": "compare"}
_FIELDS = ("qid", "type", "question", "history", "gold", "facts", "notes")
LATENCY_KEYS = ("retrieve", "first_token", "total")


# Question sets --------------------------------------------------------------------------------
@dataclass(frozen=True)
class QAItem:
    qid: str
    type: str
    question: str
    history: tuple[tuple[str, str], ...] = ()
    gold: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    notes: str = ""

    @property
    def answerable(self) -> bool:
        return self.type != UNANSWERABLE


def mode_for(item: QAItem, policy: str = "ask") -> str:
    """The answering mode for a question under a mode policy (see the module doc)."""
    if policy not in MODE_POLICIES:
        raise PaperTalkError(f"unknown mode policy {policy!r}: use {' or '.join(MODE_POLICIES)}")
    return _MODE_BY_TYPE.get(item.type, "ask") if policy == "by-type" else "ask"


def parse_qa_line(text: str) -> QAItem:
    """One QA record; raises ValueError with a short reason when it does not fit the schema."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    for key in ("qid", "type", "question"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ValueError(f"'{key}' must be a non-empty string")
    history = data.get("history") or []
    if not isinstance(history, list) or not all(
        isinstance(turn, list) and len(turn) == 2 and all(isinstance(x, str) for x in turn)
        for turn in history
    ):
        raise ValueError("'history' must be a list of [question, answer] string pairs")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("gold", "facts"):
        value = data.get(key) or []
        if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
            raise ValueError(f"'{key}' must be a list of non-empty strings")
        lists[key] = tuple(value)
    notes = data.get("notes") or ""
    if not isinstance(notes, str):
        raise ValueError("'notes' must be a string")
    qtype = data["type"].strip()
    if qtype == UNANSWERABLE and lists["gold"]:
        raise ValueError("an unanswerable question must have an empty 'gold'")
    if qtype != UNANSWERABLE and not lists["gold"]:
        raise ValueError(f"'gold' is empty: list the paper ids, or make the type {UNANSWERABLE!r}")
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}")
    return QAItem(
        qid=data["qid"].strip(),
        type=qtype,
        question=data["question"],
        history=tuple((q, a) for q, a in history),
        gold=lists["gold"],
        facts=lists["facts"],
        notes=notes,
    )


def load_qa(path: Path) -> list[QAItem]:
    """The questions of a QA JSONL file; the first bad line is a one-line PaperTalkError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PaperTalkError(f"QA file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PaperTalkError(f"cannot read QA file {path}: {exc}") from None
    items: list[QAItem] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = parse_qa_line(line)
        except ValueError as exc:
            raise PaperTalkError(f"{path}:{lineno}: {exc}") from None
        if item.qid in seen:
            raise PaperTalkError(
                f"{path}:{lineno}: duplicate qid {item.qid!r} (first on line {seen[item.qid]})"
            )
        seen[item.qid] = lineno
        items.append(item)
    if not items:
        raise PaperTalkError(f"{path}: no questions")
    return items


# One system's answer to one question ----------------------------------------------------------
@dataclass
class QuestionResult:
    """What a system did with one question, reduced to what the metrics need."""

    item: QAItem
    ranked: list[str]  # papers ranked by the retriever (best first), for retrieval metrics
    answer: str
    refused: bool
    cited: list[str]  # cited paper ids, in order of first citation
    support: list[str] = field(default_factory=list)  # the label of each answer sentence
    timings_ms: dict[str, float] = field(default_factory=dict)
    mode: str = "ask"
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "qid": self.item.qid,
            "type": self.item.type,
            "mode": self.mode,
            "answer": self.answer,
            "refused": self.refused,
            "cited": self.cited,
            "ranked": self.ranked,
            "support": self.support,
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            "error": self.error,
            "score": round(question_score(self), 4),
        }


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
        from rag.conversation import standalone_query

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
            answer=answer.answer,
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
    return list(dict.fromkeys(r.item.type for r in results))


def report_json(results: Sequence[QuestionResult], label: str) -> dict[str, Any]:
    """`{"n", "llm", <metric groups>, "by_type": {TYPE: {"n", <metric groups>}}}`."""
    summary = summarize(results)
    by_type = {
        t: summarize([r for r in results if r.item.type == t]) for t in question_types(results)
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


# Report ---------------------------------------------------------------------------------------
# (metric group, key, label) rows of the report's tables; True = higher is better.
TABLE_ROWS: tuple[tuple[str, str, str, bool], ...] = (
    ("retrieval", "recall@1", "retrieval recall@1", True),
    ("retrieval", "recall@5", "retrieval recall@5", True),
    ("retrieval", "recall@10", "retrieval recall@10", True),
    ("retrieval", "mrr", "retrieval MRR", True),
    ("citation", "precision", "citation precision", True),
    ("citation", "recall", "citation recall", True),
    ("facts", "recall", "facts recall", True),
    ("refusal", "correct", "refusal correct (unanswerable)", True),
    ("refusal", "false", "false refusals (answerable)", False),
    ("support", "", "supported sentences", True),
    ("latency_ms", "retrieve_p50", "retrieve p50 ms", False),
    ("latency_ms", "retrieve_p95", "retrieve p95 ms", False),
    ("latency_ms", "first_token_p50", "first token p50 ms", False),
    ("latency_ms", "total_p50", "total p50 ms", False),
    ("latency_ms", "total_p95", "total p95 ms", False),
)
PLOT_METRICS: tuple[tuple[str, str, str], ...] = (
    ("retrieval", "recall@5", "recall@5"),
    ("citation", "precision", "citation precision"),
    ("citation", "recall", "citation recall"),
    ("facts", "recall", "facts recall"),
    ("support", "", "supported sentences"),
    ("refusal", "correct", "refusal correct (unanswerable)"),
)


def metric(summary: dict[str, Any], group: str, key: str) -> float | None:
    value = summary.get(group)
    return value.get(key) if isinstance(value, dict) else value


def format_value(value: float | None, latency: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:.0f}" if latency else f"{value:.3f}"


def format_ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None:
        return "–"
    if theirs == 0:
        return "–" if ours == 0 else "∞"
    return f"{ours / theirs:.2f}×"


def row_label(label: str, higher_is_better: bool) -> str:
    return f"{label} {'↑' if higher_is_better else '↓'}"


def markdown_report(run: EvalRun, worst: int = 5) -> str:
    """report.md: overall and per-type tables (PaperTalk vs baseline, with ratios), the worst
    questions with their answers, and the plots."""
    ours = report_json(run.results, run.label)
    theirs = (
        report_json(run.baseline_results, run.baseline_label)
        if run.baseline_results is not None
        else None
    )
    lines = ["# PaperTalk evaluation", ""]
    meta = run.meta
    facts = [f"{ours['n']} questions", f"LLM `{run.label}`"]
    facts += [f"{k}: {v}" for k, v in meta.items()]
    lines += ["; ".join(facts) + ".", ""]
    lines += [
        "Definitions: recall@k/MRR on the retriever's ranking of the standalone query "
        "(answerable questions); citation precision over answers that cite, recall over all "
        "answerable questions; facts = share of expected strings in the answer; refusal correct "
        "on unanswerable questions, false on the others; support = share of answer sentences "
        "labelled supported. ↑ = higher is better, ↓ = lower is better; – = not defined."
        + (" Ratios are PaperTalk / the tutorial LangChain RAG baseline." if theirs else ""),
        "",
        "## Overall",
        "",
    ]
    lines += _comparison_table(ours, theirs)
    types = list(ours["by_type"])
    lines += ["", "## By question type", ""]
    header = "| metric | " + " | ".join(types) + " |"
    lines += [header, "|---|" + "---|" * len(types)]
    lines.append("| n | " + " | ".join(str(ours["by_type"][t]["n"]) for t in types) + " |")
    for group, key, label, higher in TABLE_ROWS:
        cells = []
        for t in types:
            value = metric(ours["by_type"][t], group, key)
            cell = format_value(value, group == "latency_ms")
            if theirs is not None and t in theirs["by_type"]:
                other = metric(theirs["by_type"][t], group, key)
                cell += f" / {format_value(other, group == 'latency_ms')}"
            cells.append(cell)
        lines.append(f"| {row_label(label, higher)} | " + " | ".join(cells) + " |")
    if theirs is not None:
        lines += ["", "Cells are PaperTalk / baseline."]
    lines += ["", "## Plots", "", "![metrics per type](metrics_by_type.png)", ""]
    lines += ["![latency](latency.png)", ""]
    lines += _worst_section(run, worst)
    return "\n".join(lines) + "\n"


def _comparison_table(ours: dict[str, Any], theirs: dict[str, Any] | None) -> list[str]:
    if theirs is None:
        lines = [f"| metric | PaperTalk ({ours['llm']}) |", "|---|---|"]
    else:
        lines = [
            f"| metric | PaperTalk ({ours['llm']}) | baseline ({theirs['llm']}) | ratio |",
            "|---|---|---|---|",
        ]
    for group, key, label, higher in TABLE_ROWS:
        latency = group == "latency_ms"
        a = metric(ours, group, key)
        row = f"| {row_label(label, higher)} | {format_value(a, latency)} |"
        if theirs is not None:
            b = metric(theirs, group, key)
            row += f" {format_value(b, latency)} | {format_ratio(a, b)} |"
        lines.append(row)
    return lines


def worst_results(results: Sequence[QuestionResult], n: int) -> list[QuestionResult]:
    return sorted(results, key=lambda r: (question_score(r), r.item.qid))[:n]


def _worst_section(run: EvalRun, n: int) -> list[str]:
    lines = [f"## The {n} worst questions (PaperTalk)", ""]
    baseline = {r.item.qid: r for r in run.baseline_results or []}
    for result in worst_results(run.results, n):
        item = result.item
        lines += [
            f"### {item.qid} ({item.type}, score {question_score(result):.2f})",
            "",
            f"**Question:** {item.question}",
            "",
        ]
        if item.history:
            lines += [f"History: {' / '.join(q for q, _ in item.history)}", ""]
        lines += [
            f"Gold: {', '.join(item.gold) or '(none: unanswerable)'}; "
            f"facts: {', '.join(item.facts) or '–'}; mode: {result.mode}",
            "",
            f"PaperTalk ranked: {', '.join(result.ranked[:5]) or '–'}; "
            f"cited: {', '.join(result.cited) or '–'}" + (" (refused)" if result.refused else ""),
            "",
            _quote((result.error and f"error: {result.error}") or result.answer),
            "",
        ]
        other = baseline.get(item.qid)
        if other is not None:
            lines += [
                f"Baseline cited: {', '.join(other.cited) or '–'}"
                + (" (refused)" if other.refused else ""),
                "",
                _quote((other.error and f"error: {other.error}") or other.answer),
                "",
            ]
        if item.notes:
            lines += [f"Expected: {item.notes}", ""]
    return lines


def _quote(text: str, limit: int = 900) -> str:
    text = text.strip() or "(empty answer)"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "\n".join("> " + line if line.strip() else ">" for line in text.splitlines())


def write_plots(run: EvalRun, out_dir: Path) -> list[Path]:
    """metrics_by_type.png (PaperTalk vs baseline per type) and latency.png (distributions)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    systems = [(f"PaperTalk ({run.label})", run.results)]
    if run.baseline_results is not None:
        systems.append((f"baseline ({run.baseline_label})", run.baseline_results))
    types = question_types(run.results)
    summaries = [
        {t: summarize([r for r in results if r.item.type == t]) for t in types}
        for _, results in systems
    ]
    paths = []
    columns = 3
    rows = -(-len(PLOT_METRICS) // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(5 * columns, 3.6 * rows), squeeze=False)
    axes = grid.ravel()
    x = np.arange(len(types))
    width = 0.8 / len(systems)
    for ax, (group, key, title) in zip(axes, PLOT_METRICS, strict=False):
        for s, ((name, _), by_type) in enumerate(zip(systems, summaries, strict=True)):
            values = [metric(by_type[t], group, key) for t in types]
            heights = [np.nan if v is None else v for v in values]
            ax.bar(x + (s - (len(systems) - 1) / 2) * width, heights, width, label=name)
        ax.set_title(title)
        ax.set_xticks(x, types, rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[len(PLOT_METRICS) :]:
        ax.set_visible(False)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(systems))
    fig.suptitle("Metrics per question type (no bar = not defined for the type)")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    path = out_dir / "metrics_by_type.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)

    fig, axes = plt.subplots(1, len(LATENCY_KEYS), figsize=(12, 4))
    for ax, key in zip(axes, LATENCY_KEYS, strict=True):
        data = [
            [r.timings_ms[key] for r in results if key in r.timings_ms] for _, results in systems
        ]
        names = [name for name, _ in systems]
        kept = [(n, d) for n, d in zip(names, data, strict=True) if d]
        if kept:
            ax.boxplot([d for _, d in kept], showmeans=True)
            ax.set_xticks(range(1, len(kept) + 1), [n for n, _ in kept], fontsize=8)
            for i, (_, d) in enumerate(kept, start=1):
                ax.scatter(np.full(len(d), i) + np.linspace(-0.12, 0.12, len(d)), d, s=8, alpha=0.5)
        ax.set_title(f"{key.replace('_', ' ')} (ms)")
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Latency per question")
    fig.tight_layout()
    path = out_dir / "latency.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    return paths


def write_report(run: EvalRun, out_dir: Path) -> list[Path]:
    """report.md, the plots, and results.json (every question's answers) under `out_dir`."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PaperTalkError(f"cannot create the report directory {out_dir}: {exc}") from None
    report = out_dir / "report.md"
    report.write_text(markdown_report(run), encoding="utf-8")
    data = out_dir / "results.json"
    payload = {
        "summary": eval_json(run),
        "meta": run.meta,
        "papertalk": [r.to_json() for r in run.results],
        "baseline": [r.to_json() for r in run.baseline_results]
        if run.baseline_results is not None
        else None,
    }
    data.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return [report, data, *write_plots(run, out_dir)]
