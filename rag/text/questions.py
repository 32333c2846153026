"""What users type, made safe to search and answer: control characters dropped, length bounded."""

from __future__ import annotations

from rag.errors import PaperTalkError

MAX_QUESTION_CHARS = 2000


def tidy_question(question: str) -> str:
    """Whitespace collapsed, control and invisible characters dropped, at most
    MAX_QUESTION_CHARS characters (possibly empty)."""
    cleaned = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in question)
    return " ".join(cleaned.split())[:MAX_QUESTION_CHARS]


def clean_question(question: str, *, what: str = "question") -> str:
    """`tidy_question`, where nothing left is an error: "empty question: ..." (or "empty query"
    with `what="query"`)."""
    cleaned = tidy_question(question)
    if not cleaned:
        raise PaperTalkError(f"empty {what}: ask something about the papers")
    return cleaned
