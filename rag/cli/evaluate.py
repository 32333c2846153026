"""`papertalk eval QA.jsonl`: score PaperTalk (and the tutorial baseline) on a question set.

    papertalk eval QA.jsonl [--llm B] [--corpus PATH] [--baseline] [--json] [--out DIR]
                            [--limit N] [--modes ask|by-type]

With `--corpus`, the papers are ingested first into `--home` (or a temporary home that is
removed afterwards); without it, the configured store is evaluated. `--json` prints exactly one
object (rag.eval.runner.eval_json); progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rag.answer.chain import Answerer
from rag.cli.common import settings_from_args
from rag.errors import PaperTalkError
from rag.eval.baseline import BaselineRAG, BaselineSystem, papers_from_table
from rag.eval.dataset import load_qa
from rag.eval.report import (
    TABLE_ROWS,
    format_ratio,
    format_value,
    metric,
    row_label,
    write_report,
)
from rag.eval.runner import EvalRun, PaperTalkSystem, eval_json, run_system
from rag.ingest.pipeline import run_ingest


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser(
        "eval",
        parents=[common],
        help="score answers on a question set (optionally beside a LangChain baseline)",
        description="Run every question of a QA JSONL file through PaperTalk and report "
        "retrieval, citation, facts, refusal, support and latency metrics.",
    )
    parser.add_argument("qa", type=Path, metavar="QA.jsonl", help="questions (JSON Lines)")
    parser.add_argument("--llm", help="extractive (default) | local | gguf:PATH | openai:MODEL")
    parser.add_argument(
        "--corpus", type=Path, help="ingest this paper list first (into --home or a temp home)"
    )
    parser.add_argument(
        "--baseline", action="store_true", help="also run the tutorial LangChain RAG"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", type=Path, metavar="DIR", help="write report.md and plots here")
    parser.add_argument("--limit", type=int, help="first N questions only")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="the split judges the system: reports and --json carry aggregates and per-question "
        "scores only, never a question or an answer",
    )
    parser.add_argument(
        "--modes",
        choices=["ask", "by-type"],
        default="ask",
        help="ask: every question in ask mode (default); by-type: comparison questions in "
        "compare mode",
    )
    parser.set_defaults(handler=cmd_eval)


def _progress(enabled: bool):  # type: ignore[no-untyped-def]
    def say(message: str) -> None:
        if enabled:
            print(message, file=sys.stderr, flush=True)

    return say


def cmd_eval(args: argparse.Namespace) -> int:

    items = load_qa(args.qa)  # fail fast on a bad file, before loading anything
    if args.limit is not None:
        if args.limit < 1:
            raise PaperTalkError("--limit must be at least 1")
        items = items[: args.limit]
    if args.corpus is not None and not args.corpus.exists():
        raise PaperTalkError(f"corpus file not found: {args.corpus}")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise PaperTalkError(f"--out {args.out} exists and is not a directory")

    temp_home: Path | None = None
    if args.corpus is not None and args.home is None and not args.chroma_url:
        temp_home = Path(tempfile.mkdtemp(prefix="papertalk-eval-"))
        args.home = temp_home
    args.settings_overrides = {"llm": args.llm}
    try:
        settings = settings_from_args(args)
        return _evaluate(args, settings, items)
    finally:
        if temp_home is not None:
            shutil.rmtree(temp_home, ignore_errors=True)


def _evaluate(args: argparse.Namespace, settings: Any, items: list[Any]) -> int:

    say = _progress(True)  # progress on stderr; stdout holds only the result
    started = time.perf_counter()
    meta: dict[str, Any] = {"questions": str(args.qa), "modes": args.modes}
    if args.corpus is not None:
        say(f"ingesting {args.corpus} …")
        t0 = time.perf_counter()
        report = run_ingest(settings, [args.corpus], progress=sys.stderr.isatty())
        meta["corpus"] = str(args.corpus)
        meta["ingest"] = f"{report.summary_line()}, {time.perf_counter() - t0:.0f} s in all"
        say(meta["ingest"])

    answerer = Answerer(settings, llm_spec=settings.llm)
    meta["papers"] = len(answerer.searcher.lexical.table.papers)
    baseline_system = None
    if args.baseline:
        baseline = BaselineRAG.open(settings, answerer)
        t0 = time.perf_counter()
        say("building the baseline's Chroma collection (RecursiveCharacterTextSplitter 1000/200) …")
        counts = baseline.sync(
            papers_from_table(answerer.searcher.lexical.table),
            on_progress=lambda done, total: say(f"  baseline: {done}/{total} chunks embedded"),
        )
        meta["baseline index"] = (
            f"{counts['chunks']} chunks ({counts['added']} embedded now) in "
            f"{time.perf_counter() - t0:.0f} s"
        )
        baseline_system = BaselineSystem(baseline)

    def report_progress(name: str):  # type: ignore[no-untyped-def]
        def on_result(i: int, result: Any, seconds: float) -> None:
            status = "error" if result.error else "refused" if result.refused else "answered"
            say(f"[{name} {i}/{len(items)}] {result.item.qid} {status} ({seconds:.1f} s)")

        return on_result

    t0 = time.perf_counter()
    results = run_system(
        PaperTalkSystem(answerer), items, policy=args.modes, on_result=report_progress("papertalk")
    )
    meta["papertalk seconds"] = round(time.perf_counter() - t0, 1)
    run = EvalRun(answerer.llm_label, results, meta=meta)
    if baseline_system is not None:
        t0 = time.perf_counter()
        run.baseline_results = run_system(
            baseline_system, items, policy=args.modes, on_result=report_progress("baseline")
        )
        run.baseline_label = baseline_system.label
        meta["baseline seconds"] = round(time.perf_counter() - t0, 1)
    meta["total seconds"] = round(time.perf_counter() - started, 1)

    errors = sum(1 for r in results + (run.baseline_results or []) if r.error)
    if errors:
        first = next(r.error for r in results + (run.baseline_results or []) if r.error)
        print(f"papertalk: warning: {errors} answers failed (first: {first})", file=sys.stderr)
    if args.out is not None:
        written = write_report(run, args.out, held_out=args.held_out)
        say("wrote " + ", ".join(str(p) for p in written))
    payload = eval_json(run)
    if args.json:
        print(json.dumps(payload, ensure_ascii=False))
    else:
        print(render_summary(payload))
    return 0


def render_summary(payload: dict[str, Any]) -> str:
    """The overall metrics as a terminal table (PaperTalk, baseline, ratio)."""

    theirs = payload.get("baseline")
    title = f"{payload['n']} questions, LLM {payload['llm']}"
    lines = [title, ""]
    head = f"{'metric':34} {'PaperTalk':>10}"
    if theirs:
        head += f" {'baseline':>10} {'ratio':>7}"
    lines.append(head)
    for group, key, label, higher in TABLE_ROWS:
        latency = group == "latency_ms"
        a = metric(payload, group, key)
        line = f"{row_label(label, higher):34} {format_value(a, latency):>10}"
        if theirs:
            b = metric(theirs, group, key)
            line += f" {format_value(b, latency):>10} {format_ratio(a, b):>7}"
        lines.append(line)
    return "\n".join(lines)
