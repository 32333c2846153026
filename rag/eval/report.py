"""The report of an evaluation run: report.md (PaperTalk beside the baseline, with ratios, by
question type, the worst answers) and plots."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag.errors import PaperTalkError
from rag.eval.dataset import QuestionResult
from rag.eval.metrics import LATENCY_KEYS, question_score, question_types, summarize
from rag.eval.runner import EvalRun, eval_json, report_json

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
    """report.md: overall and per-type tables (PaperTalk vs baseline, with ratios), the `worst`
    questions with their answers (none for a held-out split), and the plots."""
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
        "on unanswerable questions, false on the others (a refusal that answers the parts the "
        "papers state is a refusal; its citations and text count); support = share of answer "
        "sentences labelled supported. ↑ = higher is better, ↓ = lower is better; – = not defined."
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
    if worst > 0:
        lines += _worst_section(run, worst)
    else:
        lines += ["Held-out split: aggregates only, no question or answer is shown.", ""]
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
            f"### {item.qid} ({item.group}, score {question_score(result):.2f})",
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
    import matplotlib  # deferred: plotting only when a report is written

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    systems = [(f"PaperTalk ({run.label})", run.results)]
    if run.baseline_results is not None:
        systems.append((f"baseline ({run.baseline_label})", run.baseline_results))
    types = question_types(run.results)
    summaries = [
        {t: summarize([r for r in results if r.item.group == t]) for t in types}
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


def write_report(run: EvalRun, out_dir: Path, held_out: bool = False) -> list[Path]:
    """report.md, the plots, and results.json (every question's answers) under `out_dir`. For a
    `held_out` split (one that judges the system), no question or answer text is written, so
    that nobody deciding on rules reads them by accident."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PaperTalkError(f"cannot create the report directory {out_dir}: {exc}") from None
    report = out_dir / "report.md"
    report.write_text(markdown_report(run, worst=0 if held_out else 5), encoding="utf-8")
    data = out_dir / "results.json"
    payload = {
        "summary": eval_json(run),
        "meta": run.meta,
        "papertalk": [_scored(r, held_out) for r in run.results],
        "baseline": [_scored(r, held_out) for r in run.baseline_results]
        if run.baseline_results is not None
        else None,
    }
    data.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return [report, data, *write_plots(run, out_dir)]


def _scored(result: QuestionResult, held_out: bool = False) -> dict[str, Any]:
    scored = {**result.to_json(), "score": round(question_score(result), 4)}
    if held_out:
        scored.pop("answer")
    return scored
