"""Abbreviations an abstract defines ("sparse autoencoders (SAEs)"): later sentences that use
the short form speak of the long one."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

# A short form in parentheses: capitals first, optionally a plural -s ("(SAEs)", "(ViT)").
_DEFINED = re.compile(r"\(([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*?)(s?)\)")
_WORD = re.compile(r"[^\W_][\w-]*")  # letters of any script: "Rényi Neural Processes (RNP)"
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
        # and holds all of them in order ("sparse autoencoders (SAEs)": s, a, e); else one word
        # per letter, small letters included ("Chain-of-thought (CoT)"); else a hyphenated word
        # counted as one (see `_hyphenated_long_form`).
        letters = sum(c.isalpha() for c in short)
        for most in dict.fromkeys((len(capitals), letters)):
            long = _long_form(capitals, parts, most)
            if long:
                found.setdefault(short, long)
                break
        else:
            long = _hyphenated_long_form(capitals, before[-MAX_LONG_WORDS:])
            if long:
                found.setdefault(short, long)
    return found


def _long_form(capitals: list[str], parts: list[str], most: int) -> str:
    """The longest run of at most `most` of the last `parts` that starts with the first of
    `capitals` and holds all of them in order ("" when none does)."""
    for n in range(min(most, len(parts)), 0, -1):
        words = parts[-n:]
        if words[0][0].lower() == capitals[0] and letters_in_order(
            capitals, " ".join(words).lower()
        ):
            return " ".join(words)
    return ""


def _hyphenated_long_form(capitals: list[str], words: list[str]) -> str:
    """The shortest run of the last `words`, at most one per capital, with a hyphenated word,
    that starts with the first of `capitals` and holds all of them in order ("" when none
    does): "learning-based preference optimization (LPO)", "Prompt-to-Leaderboard (P2L)"."""
    for n in range(1, min(len(capitals), len(words)) + 1):
        run = words[-n:]
        if (
            run[0][0].lower() == capitals[0]
            and any("-" in w for w in run)
            and not any(w.lower() in ("and", "or") for w in run)
            and letters_in_order(capitals, " ".join(run).lower())
        ):
            return " ".join(run)
    return ""


def letters_in_order(letters: list[str], text: str) -> bool:
    """Whether `letters` occur in `text` in this order (a short form's capitals in a long form)."""
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


# A short form as a reader writes it: two or more capitals, optionally a plural -s ("LMs").
_SHORT_FORM = re.compile(r"[A-Z]{2,6}s?")
# What a long form cannot run across: punctuation and the small words between phrases.
_RUN_BREAK = re.compile(
    r"[^\w\s-]+|\b(?:a|an|the|and|or|of|for|in|on|at|to|by|with|from|as|is|are|we|our|this|that|"
    r"which|its|their|be|it)\b",
    re.IGNORECASE,
)


def spelled_out(short: str, text: str) -> str:
    """The words of `text` that `short` abbreviates: a run of adjacent words (no punctuation or
    small word between them) whose initials spell its capitals in order ("LMs" in a text on
    "language models" -> "language models"); empty when none do or `short` is not a short
    form. A reader often writes the usual short form of what an abstract spells out."""
    if not _SHORT_FORM.fullmatch(short):
        return ""
    letters = short.rstrip("s").lower()
    for run in _RUN_BREAK.split(text):
        # A hyphenated word gives each part's initial ("Low-Rank Adaptation": LRA) or, as a
        # modifier, one ("large-scale language models": LLMs).
        parted = [p for w in _WORD.findall(run) for p in w.split("-") if p]
        whole = [w for w in _WORD.findall(run) if w.strip("-")]
        for words in (parted, whole):
            initials = "".join(w[0].lower() for w in words)
            start = initials.find(letters)
            while start >= 0:
                found = words[start : start + len(letters)]
                # Every word of the long form is a word, not a short form or a number.
                if all(_plain_word(w) for w in found):
                    return " ".join(found)
                start = initials.find(letters, start + 1)
    return ""


def _plain_word(word: str) -> bool:
    """Whether `word` is a word, not a short form or a number (each hyphenated part too)."""
    return all(p[0].isalpha() and (len(p) == 1 or p[1:].islower()) for p in word.split("-") if p)


# A word hyphenated to a short form ("local-DP", "multi-GPU"): the word says which kind of it.
_QUALIFIED_SHORT_FORM = re.compile(r"([a-z]{3,})-([A-Z]{2,6}s?)")


def qualified_spelled_out(name: str, text: str) -> bool:
    """Whether `text` writes `name`, a word hyphenated to a short form, as the word followed by
    the short form spelled out ("local-DP" in a text on "local differential privacy")."""
    parts = _QUALIFIED_SHORT_FORM.fullmatch(name)
    if not parts:
        return False
    word, short = parts.groups()
    size = len(short.rstrip("s"))
    after = rf"(?<![\w-]){re.escape(word)}((?:[\s-]+[^\W\d_]+){{{size}}})"
    return any(
        spelled_out(short, m.group(1)) == " ".join(re.split(r"[\s-]+", m.group(1).strip(" -")))
        for m in re.finditer(after, text, re.IGNORECASE)
    )


def abbreviated(words: Sequence[str], text: str) -> list[str]:
    """Those of `words` (a reader's phrase, in order) that `text` writes as a short form: a run
    of two to six adjacent words whose initials are the capitals of a token of `text`, with
    "&" or "-" allowed between them and a plural -s after ("question-answer pairs" in a text
    on "3 million Q&As" -> question, answer). The reverse of `spelled_out`."""
    parts = [p for w in words for p in w.split("-") if p]
    forms = {
        m.group(1).replace("&", "").replace("-", "").lower() for m in _SHORT_TOKEN.finditer(text)
    }
    for size in range(min(6, len(parts)), 1, -1):
        for start in range(len(parts) - size + 1):
            run = parts[start : start + size]
            if "".join(w[0].lower() for w in run) in forms:
                return run
    return []


# A short form in a text: capitals, possibly joined by "&" or "-" ("Q&A", "QA", "R-CNN").
_SHORT_TOKEN = re.compile(r"(?<![\w&-])([A-Z](?:[&-]?[A-Z]){1,5})s?(?![\w&-])")
