"""What users type, made safe to search and answer: control characters dropped, length bounded."""

from __future__ import annotations

import re

from rag.errors import PaperTalkError
from rag.text.sentences import split_sentences

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


# A venue with its year ("ICML 2025", "NeurIPS'24", typed in lowercase too: "icml 2025"), or a
# year that dates the papers ("2025 papers", "papers from 2025"): it names a collection of
# papers, not what a question is about.
_YEAR = r"(?:'\d{2}|(?:19|20)\d{2})"
_VENUE = re.compile(
    rf"\b[A-Z][A-Za-z]*[A-Z][A-Za-z]*\s?{_YEAR}\b"
    rf"|\b(?i:icml|neurips|nips|iclr|aistats|colt|uai|cvpr|iccv|eccv|acl|emnlp|naacl|aaai|ijcai|kdd)"
    rf"\s?{_YEAR}\b"
    r"|\b(?:19|20)\d{2}(?=\s+(?i:papers?|works?|orals?|spotlights?|posters?|publications?)\b)"
)
_DATED = re.compile(
    r"\b((?i:papers?|works?|orals?|spotlights?|posters?|publications?))\s+"
    r"(?i:from|in|of|published\s+in)\s+(?:19|20)\d{2}\b"
)


def without_venues(text: str) -> str:
    """`text` without venue-and-year mentions ("Which ICML 2025 papers ..." -> "Which papers")."""
    return " ".join(_DATED.sub(r"\1", _VENUE.sub(" ", text)).split())


# A question's parts: sentences, and clauses joined by "and" or "," before a new question word
# ("..., and how much ...", "... and across how many ..." : after "and", a preposition may come
# first; after a comma alone, "in which" starts a relative clause).
_PART_BREAK = re.compile(
    r"[?;]|\.\s+(?=(?-i:[A-Z]))|"
    r",?\s+and\s+(?=(?:(?:across|on|in|at|over|for|by|with|from|to|under|among|between|"
    r"through|after|before|during|against)\s+)?"
    r"(?:how|what|which|why|where|when|who|whose|does|do|is|are|can)\b)|"
    r",\s+(?=(?:how|what|which|why|where|when|who|whose)\b)",
    re.IGNORECASE,
)


def question_parts(question: str) -> list[str]:
    """The clauses a question asks ("What is X, and how much does it save?" -> two)."""
    return [p.strip() for p in _PART_BREAK.split(question) if p and p.strip()]


def asking_parts(question: str) -> list[str]:
    """The parts of `question` that ask: beside a sentence that ends in "?", one that ends in a
    period states ("Both shrink what phones upload. Which ...?": its "what" asks nothing)."""
    if "?" in question:
        question = " ".join(s for s in _sentences(question) if not s.rstrip().endswith("."))
    return question_parts(question)


def with_parts(question: str, parts: list[str]) -> str:
    """`question` asking only `parts` (some of its `asking_parts`), each as a question of its
    own, after the sentences that state rather than ask ("Both shrink uploads. Which codec
    does X use?")."""
    stating = [s for s in _sentences(question) if s.rstrip().endswith(".")]
    asked = [f"{p[:1].upper()}{p[1:].rstrip(' ?.')}?" for p in parts]
    return " ".join([*stating, *asked])


def _sentences(text: str) -> list[str]:
    return [text[x.start : x.end] for x in split_sentences(text)]
