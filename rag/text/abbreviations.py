"""Abbreviations an abstract defines ("sparse autoencoders (SAEs)"): later sentences that use
the short form speak of the long one."""

from __future__ import annotations

import re
from collections.abc import Mapping

# A short form in parentheses: capitals first, optionally a plural -s ("(SAEs)", "(ViT)").
_DEFINED = re.compile(r"\(([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*?)(s?)\)")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
MAX_LONG_WORDS = 8


# Any one-word short form in parentheses ("(qKT)", "(gf)"), for text a user writes.
_DEFINED_ANY_CASE = re.compile(r"\(([A-Za-z][A-Za-z0-9-]*?)(s?)\)")


def defined_abbreviations(text: str, *, any_case: bool = False) -> dict[str, str]:
    """Short form -> long form for each "long form (SHORT)" in `text`, where the long form's
    words start with the short form's capitals in order ("Low-Rank Adaptation (LoRA)").
    `any_case` also reads short forms written with fewer capitals: their letters, in order,
    spell the long form ("quantum kernel trick (qKT)")."""
    found: dict[str, str] = {}
    for match in (_DEFINED_ANY_CASE if any_case else _DEFINED).finditer(text):
        short = match.group(1)
        capitals = [c.lower() for c in short if (c.isalpha() if any_case else c.isupper())]
        if not capitals:
            continue
        before = _WORD.findall(text[max(0, match.start() - 200) : match.start()])
        parts = [p for w in before for p in w.split("-") if p][-MAX_LONG_WORDS:]
        # The longest run of words (at most one per capital) that starts with the first capital
        # and holds all of them in order ("sparse autoencoders (SAEs)": s, a, e).
        for n in range(min(len(capitals), len(parts)), 0, -1):
            words = parts[-n:]
            if words[0][0].lower() == capitals[0] and _in_order(capitals, " ".join(words).lower()):
                found.setdefault(short, " ".join(words))
                break
    return found


def _in_order(letters: list[str], text: str) -> bool:
    position = 0
    for letter in letters:
        position = text.find(letter, position) + 1
        if position == 0:
            return False
    return True


def expand(sentence: str, abbreviations: Mapping[str, str]) -> str:
    """The long forms of the abbreviations `sentence` uses (empty when it uses none)."""
    return " ".join(
        long
        for short, long in abbreviations.items()
        if re.search(rf"(?<![\w-]){re.escape(short)}s?(?![\w-])", sentence)
    )
