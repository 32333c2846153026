"""Question sets and how each question is asked.

Input is JSON Lines, one question per line (the schema of ../shared/eval/dev_qa.jsonl):
`qid`, `type`, `question`, `history` ([[question, answer], ...]), `gold` (paper ids), `facts`
(short strings a correct answer contains), `notes`, and optionally `kind`. Type `unanswerable` has
no gold papers; its `kind` says why (`absent-name`: nothing in the corpus mentions what it asks
about; `not-stated`: the named paper does not give the detail), and results are broken down by
`type:kind`.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.errors import PaperTalkError

UNANSWERABLE = "unanswerable"


MODE_POLICIES = ("ask", "by-type")


_MODE_BY_TYPE = {"comparison": "compare"}


_FIELDS = ("qid", "type", "question", "history", "gold", "facts", "notes", "kind")


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
    kind: str = ""

    @property
    def answerable(self) -> bool:
        return self.type != UNANSWERABLE

    @property
    def group(self) -> str:
        """What results are broken down by: the type, refined by the kind when there is one."""
        return f"{self.type}:{self.kind}" if self.kind else self.type


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
    kind = data.get("kind") or ""
    if not isinstance(kind, str):
        raise ValueError("'kind' must be a string")
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
        kind=kind.strip(),
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
        }
