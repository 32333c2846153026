"""Recognise papers named in text by their short names (e.g. 'D-Fusion', 'Cake', 'DreamDPO')."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_COMMON = {"the", "a", "an", "on", "of", "in", "for", "and", "to", "with", "when", "how", "why"}


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
    return names


def papers_named_in(text: str, papers: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Ids of papers whose short name appears in `text` as a whole word, in order of mention."""
    found: list[tuple[int, str]] = []
    for paper_id, meta in papers.items():
        title = str(meta.get("title", ""))
        for name in short_names(title):
            match = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE)
            if match and (name.isupper() or len(name) > 3 or name[0].isupper()):
                found.append((match.start(), paper_id))
                break
    return [pid for _, pid in sorted(found)]
