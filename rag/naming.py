"""Recognise papers named in text by their short names (e.g. 'D-Fusion', 'LEVIS', 'DreamDPO')."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_COMMON = {"the", "a", "an", "on", "of", "in", "for", "and", "to", "with", "when", "how", "why"}
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


def short_names(title: str) -> list[str]:
    """Names a paper goes by: the part of its title before ':' when it is short (one to three
    words), and method-like tokens in the title (CamelCase, acronyms, hyphenated capitals)."""
    names: list[str] = []
    head, sep, _ = title.partition(":")
    if sep and 1 <= len(head.split()) <= 3:
        names.append(head.strip())
    for token in re.findall(r"\b[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*\b", title):
        if token.lower() in _COMMON or len(token) < 3:
            continue
        inner_caps = sum(1 for c in token[1:] if c.isupper())
        if inner_caps >= 1 and token[0].isupper() and token not in names:
            names.append(token)
    return [n for n in names if n.isupper() or len(n) > 3 or n[0].isupper()]


class NameIndex:
    """Short names of every paper, looked up by the word sequences of a text (built once)."""

    def __init__(self, papers: Mapping[str, Mapping[str, Any]]) -> None:
        self._by_words: dict[tuple[str, ...], list[str]] = {}
        self.longest = 1
        for paper_id, meta in papers.items():
            for name in short_names(str(meta.get("title", ""))):
                words = tuple(w.lower() for w in _TOKEN.findall(name))
                if words:
                    self._by_words.setdefault(words, []).append(paper_id)
                    self.longest = max(self.longest, len(words))

    def papers_named_in(self, text: str) -> list[str]:
        """Ids of papers whose short name appears in `text` as whole words, in order of mention."""
        words = [w.lower() for w in _TOKEN.findall(text)]
        found: list[str] = []
        for start in range(len(words)):
            for size in range(self.longest, 0, -1):
                for paper_id in self._by_words.get(tuple(words[start : start + size]), []):
                    if paper_id not in found:
                        found.append(paper_id)
        return found
