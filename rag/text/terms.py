"""Search terms: lower-cased, stop-word-free, stemmed tokens (documents and queries alike)."""

from __future__ import annotations

import re
from functools import cache


@cache
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer  # deferred: a C extension only the lexical path needs

    return Stemmer.Stemmer("english")


_WORD = re.compile(r"(?u)\b\w\w+\b")


@cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN  # deferred: bm25s imports scipy (slow start)

    return frozenset(STOPWORDS_EN)


def tokenize(texts: list[str]) -> list[list[str]]:
    """Lower-cased, stop-word-free, stemmed tokens (the same for documents and queries).

    The same rules as `bm25s.tokenize(stopwords="en", stemmer=...)`, without its per-call
    overhead (a few ms per query).
    """
    stop = _stopwords()
    stemmer = _stemmer()
    out = []
    for text in texts:
        words = [w for w in _WORD.findall(text.lower()) if w not in stop]
        out.append(stemmer.stemWords(words) if words else [])
    return out
