"""Paper text as a reader sees it: LaTeX as Unicode (rag/text/latex.py), Markdown emphasis.

Abstracts use `**bold**`: `emphasis_spans` finds Markdown emphasis so that renderers can show it
(bold, italic) instead of asterisks. Pure functions: no HTML is produced here, and nothing is
escaped (the renderers escape what these return).
"""

from __future__ import annotations

import re

from rag.text.latex import latex_to_text

# Markdown emphasis ----------------------------------------------------------------------------
# As CommonMark reads asterisks (abstracts use `**name**`, `***name***`, `***D***istributional`):
# an opening run is followed by a non-space, a closing one preceded by one. Matches become
# private-use marks first, so that emphasis may nest ("*collaborate with **e**ach other*").
_STRONG_ON, _STRONG_OFF, _EM_ON, _EM_OFF = "\ue000", "\ue001", "\ue002", "\ue003"
_MARKS = {_STRONG_ON, _STRONG_OFF, _EM_ON, _EM_OFF}
_STRONG_EM_RUN = re.compile(r"\*\*\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*\*\*")
_STRONG_RUN = re.compile(r"\*\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*\*")
_EM_RUN = re.compile(r"\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*")


def emphasis_spans(text: str) -> list[tuple[str, str]]:
    """`text` cut into (style, piece) pairs, style "" (plain), "em", "strong" or "strong em",
    from Markdown asterisks (which are dropped). Underscores are left alone: in abstracts they
    are identifiers (snake_case) far more often than emphasis."""
    if "*" not in text or _MARKS & set(text):
        return [("", text)]
    marked = _STRONG_EM_RUN.sub(f"{_STRONG_ON}{_EM_ON}\\1{_EM_OFF}{_STRONG_OFF}", text)
    marked = _STRONG_RUN.sub(f"{_STRONG_ON}\\1{_STRONG_OFF}", marked)
    marked = _EM_RUN.sub(f"{_EM_ON}\\1{_EM_OFF}", marked)
    pieces: list[tuple[str, str]] = []
    strong = em = 0
    current: list[str] = []

    def flush() -> None:
        if current:
            style = " ".join(n for n, on in (("strong", strong), ("em", em)) if on)
            pieces.append((style, "".join(current)))
            current.clear()

    for char in marked:
        if char in _MARKS:
            flush()
            strong += {_STRONG_ON: 1, _STRONG_OFF: -1}.get(char, 0)
            em += {_EM_ON: 1, _EM_OFF: -1}.get(char, 0)
        else:
            current.append(char)
    flush()
    return pieces or [("", "")]


def plain_text(text: str) -> str:
    """`text` as plain Unicode: LaTeX converted, Markdown emphasis markers removed."""
    return "".join(piece for _, piece in emphasis_spans(latex_to_text(text)))
