"""Sentence spans of abstract text, robust to abbreviations and decimals."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Words after which a period does not end a sentence.
_ABBREVIATIONS = {
    "e.g",
    "i.e",
    "et al",
    "etc",
    "vs",
    "cf",
    "fig",
    "figs",
    "eq",
    "eqs",
    "sec",
    "no",
    "approx",
    "resp",
    "al",
    "dr",
    "prof",
    "mr",
    "ms",
    "st",
    "ref",
    "refs",
    "tab",
    "appx",
    "ca",
    "incl",
}
# A sentence ends at . ! or ? before a space and a capital or a digit, and also where an
# abstract left out the space ("... essence.These kernels"): a word, the mark, a capitalised word.
_BOUNDARY = re.compile(
    r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[$*]?[A-Z0-9])|(?<=[A-Za-z0-9][a-z][.!?])(?=[A-Z][a-z]+\b[^.\w-])"
)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


def split_sentences(text: str) -> list[Span]:
    """Sentence spans of `text` (offsets into it), robust to abbreviations and decimals."""
    spans: list[Span] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        candidate_end = match.start()
        before = text[start:candidate_end].rstrip("\"')]")
        last_word = re.split(r"\s", before)[-1].lower().rstrip(".!?") if before else ""
        if last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha()):
            continue
        end = candidate_end
        while end < len(text) and text[end] in "\"')]":
            end += 1
        if text[start:end].strip():
            spans.append(_trim(text, start, end))
        start = match.end()
    if text[start:].strip():
        spans.append(_trim(text, start, len(text)))
    return spans


def _trim(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)
