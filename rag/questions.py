"""What users type, made safe to search and answer: control characters dropped, length bounded."""

from __future__ import annotations

from rag.errors import PaperTalkError

MAX_QUESTION_CHARS = 2000


def clean_question(question: str, *, what: str = "question") -> str:
    """Collapse whitespace, drop control and invisible characters, bound the length.

    Nothing left is an error: "empty question: ..." (or "empty query" with `what="query"`).
    """
    cleaned = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in question)
    cleaned = " ".join(cleaned.split())
    if not cleaned:
        raise PaperTalkError(f"empty {what}: ask something about the papers")
    return cleaned[:MAX_QUESTION_CHARS]
