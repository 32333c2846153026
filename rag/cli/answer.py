"""`papertalk ask` and `papertalk chat`: answers with citations in the terminal."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from rag.answer.bibtex import bibtex
from rag.answer.chain import Answerer
from rag.cli.common import add_filters, filters_from_args, settings_from_args
from rag.errors import PaperTalkError
from rag.text.latex import latex_to_text
from rag.text.questions import clean_question


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    ask = sub.add_parser("ask", parents=[common], help="answer a question with citations")
    ask.add_argument("question")
    _answer_flags(ask)
    ask.add_argument("--mode", choices=["ask", "compare", "summarize"], default="ask")
    ask.add_argument("--history", type=Path, help="JSON list of [question, answer] pairs")
    ask.add_argument("--json", action="store_true", help="print one JSON object")
    ask.add_argument("--bibtex", type=Path, help="write BibTeX of the cited papers to FILE")
    ask.set_defaults(handler=cmd_ask)

    chat = sub.add_parser("chat", parents=[common], help="a conversation in the terminal")
    _answer_flags(chat)
    chat.set_defaults(handler=cmd_chat)


def _answer_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llm", help="extractive (default) | local | gguf:PATH | openai:MODEL")
    add_filters(parser)
    parser.add_argument("--passages", type=int, help="papers retrieved per question")


def _answerer(args: argparse.Namespace) -> Answerer:
    args.settings_overrides = {"llm": args.llm, "passages": args.passages}
    settings = settings_from_args(args)
    return Answerer(settings)


def load_history(path: Path) -> list[tuple[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PaperTalkError(f"history file not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PaperTalkError(f"{path}: not a JSON history file ({exc})") from None
    if not isinstance(data, list) or not all(
        isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t) for t in data
    ):
        raise PaperTalkError(f"{path}: history must be a JSON list of [question, answer] pairs")
    return [(q, a) for q, a in data]


def cmd_ask(args: argparse.Namespace) -> int:
    clean_question(args.question)  # fail fast, before loading anything
    history = load_history(args.history) if args.history else []
    answerer = _answerer(args)
    stream = answerer.stream(
        args.question, mode=args.mode, history=history, filters=filters_from_args(args)
    )
    if args.json:
        final = _consume(stream)
        data = final.to_json()
        if final.error:
            data["error"] = final.error
        print(json.dumps(data, ensure_ascii=False))
    else:
        final = print_streamed(stream, answerer.is_extractive, error_line=False)
    if final.error:
        # Like every failing command: one line on stderr. What was retrieved is on stdout, and
        # the exit code (1, not 2) says the question itself was fine.
        print(f"papertalk: error: {final.error}", file=sys.stderr)
        return 1
    if args.bibtex and final.citations:
        args.bibtex.write_text(final.bibtex or bibtex(final.citations) + "\n", encoding="utf-8")
        print(f"BibTeX written to {args.bibtex}")
    return 0


def _consume(stream):  # type: ignore[no-untyped-def]
    final = None
    for event in stream:
        if event.kind == "final":
            final = event.answer
    assert final is not None
    return final


def print_streamed(stream, extractive: bool, *, error_line: bool = True):  # type: ignore[no-untyped-def]
    """Show the answer as it is generated, then print the final cited answer and references.

    In a terminal the generated text runs on one status line that the final answer replaces, so
    each answer is shown once. When the output goes to a pipe or a file, the tokens stream to
    stderr and the final answer goes to stdout, as before.
    A failed generation prints its error (unless `error_line` is False: the caller reports it)
    and the papers that were retrieved for the question.
    """
    final = None
    streamed = False
    text = ""
    live = sys.stdout.isatty() and sys.stderr.isatty()
    if extractive:
        print("(extractive answer: sentences quoted from the abstracts)")
    for event in stream:
        if event.kind == "token" and not extractive:
            text += event.text
            if live:
                _status_line(f"… {text}")
            else:
                if not streamed:
                    print("… ", end="", file=sys.stderr, flush=True)
                print(event.text, end="", file=sys.stderr, flush=True)
            streamed = True
        elif event.kind == "final":
            final = event.answer
    if streamed:
        if live:
            _status_line("")
        else:
            print("", file=sys.stderr)
    assert final is not None
    print(render_answer(final, error_line=error_line))
    return final


def _status_line(text: str) -> None:
    """Show `text` (its end, on one line) in place of the terminal's current line."""
    width = max(20, shutil.get_terminal_size().columns - 1)
    flat = " ".join(text.split())
    if len(flat) > width:
        flat = "…" + flat[-(width - 1) :]
    print(f"\r\x1b[K{flat}", end="", file=sys.stderr, flush=True)


def render_answer(answer: Any, *, error_line: bool = True) -> str:
    """The answer as terminal text: answer, flagged sentences, references, related papers.

    A failed generation shows its error (one line) and the retrieved papers, if any."""
    lines: list[str] = []
    if answer.error:
        if error_line:
            lines.append(f"error: {answer.error}")
        if answer.related:
            lines.append("Retrieved papers (no answer was generated):")
            lines += [f"  - {h.title} ({h.url})" for h in answer.related]
        return "\n".join(lines)
    if answer.extractive and "fallback" in answer.llm:
        lines.append("(the model's answer was not supported by the papers: quoting them instead)")
    lines.append(latex_to_text(answer.answer))  # "{\em x}", "$k$": as a reader would type them
    reason = " ".join(getattr(answer, "refusal_reason", "").split())
    if answer.refused and reason:
        lines.append(f"Why: {reason}" + ("" if reason.endswith((".", "?", "!")) else "."))
    if answer.refused and getattr(answer, "partial", ""):
        lines.append("")
        lines.append("What the papers do state of the rest of the question:")
        lines.append(latex_to_text(answer.partial))
    unsupported = [s.text for s in answer.sentences if s.support == "unsupported"]
    weak = [s.text for s in answer.sentences if s.support == "weak"]
    for text in unsupported:
        lines.append(f"  ⚠ unsupported by the cited passage: “{text}”")
    for text in weak:
        lines.append(f"  ~ weakly supported: “{text}”")
    if answer.citations and answer.mode != "summarize":
        lines.append("")
        lines.append("References:")
        for c in answer.citations:
            mark = " (source found by PaperTalk: the model cited none)" if c.attributed else ""
            authors = ", ".join(c.authors[:3]) + (" et al." if len(c.authors) > 3 else "")
            lines.append(f"  [{c.n}] {latex_to_text(c.title)} — {authors} {c.url}{mark}")
    for note in getattr(answer, "removed", []):
        lines.append(f"  ✂ {note}")
    if answer.refused and answer.related:
        lines.append("")
        lines.append("Possibly related (what each says closest to the question):")
        for h in answer.related:
            lines.append(f"  - {h.title} ({h.url})")
            closest = getattr(answer, "closest", {}).get(h.paper_id)
            if closest:
                lines.append(f"    “{closest}”")
    return "\n".join(lines)


def cmd_chat(args: argparse.Namespace) -> int:
    answerer = _answerer(args)
    filters = filters_from_args(args)
    history: list[tuple[str, str]] = []
    cited: list[str] = []
    mode = "ask"
    print(f"PaperTalk chat ({answerer.llm_label}). /mode ask|compare|summarize, /reset, /quit")
    while True:
        try:
            question = input(f"[{mode}] you> ").strip()
        except EOFError:
            print()
            return 0
        if not question:
            continue
        if question in ("/quit", "/exit"):
            return 0
        if question == "/reset":
            history, cited = [], []
            print("(conversation cleared)")
            continue
        if question.startswith("/mode"):
            parts = question.split()
            if len(parts) == 2 and parts[1] in ("ask", "compare", "summarize"):
                mode = parts[1]
                print(f"(mode: {mode})")
            else:
                print("usage: /mode ask|compare|summarize")
            continue
        try:
            final = print_streamed(
                answerer.stream(
                    question, mode=mode, history=history, history_papers=cited, filters=filters
                ),
                answerer.is_extractive,
            )
        except PaperTalkError as exc:  # the store is down, a bad filter: this turn only
            print(f"error: {exc}")
            continue
        except Exception as exc:  # one bad turn must not end the session
            first = (str(exc).strip().splitlines() or [""])[0][:200]
            print(f"error: internal error: {type(exc).__name__}: {first}")
            continue
        if not final.error:
            history.append((question, final.answer))
            cited = final.cited_paper_ids or cited
