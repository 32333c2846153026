"""Conversation helpers: turning a follow-up into a standalone retrieval query."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.text.names import query_names

Turn = tuple[str, str]  # (question, answer)

_REFERRING = re.compile(
    r"\b(it|its|it's|they|them|their|theirs|this|that|these|those|such|the (paper|papers|"
    r"method|methods|approach|model|authors|work|first|second|former|latter|same)|both|"
    r"each|either|neither|above|previous|earlier|mentioned|which\s+one|the\s+(?:two|three|"
    r"other|others))\b",
    re.IGNORECASE,
)


def refers_back(question: str) -> bool:
    """Whether the question refers to something said before ("it", "these papers", "the
    method")."""
    return bool(_REFERRING.search(question))


def is_followup(question: str) -> bool:
    """Whether `question` leans on earlier turns: it refers back ('it', 'the method'), or it is
    very short and names nothing ('Why?', 'And the speed-up?', 'And how many target datasets?';
    not 'What is Cake?')."""
    words = question.split()
    if _REFERRING.search(question):
        return True
    # Very short, or opened as a continuation and short ("And how many target datasets?").
    short = CONTINUED_WORDS if _CONTINUING.match(question) else SHORT_WORDS
    return len(words) <= short and not _names_something(words)


SHORT_WORDS = 4
CONTINUED_WORDS = 5


# "And how many datasets?", "What about the speed?": a question that carries on the last one.
_CONTINUING = re.compile(r"\s*(?:and|also|what\s+about|how\s+about|as\s+for)\b", re.IGNORECASE)


_SINGULAR = re.compile(
    r"\b(it|its|it's|this|that|the (paper|method|approach|model|work|same))\b", re.IGNORECASE
)


def is_about_the_last_paper(question: str) -> bool:
    """A follow-up about the single paper just discussed ("How does it work?"), naming no other."""
    return bool(_SINGULAR.search(question)) and not _names_something(question.split())


def names_nothing(question: str) -> bool:
    """Whether a question names no paper, method or dataset (no capitalised word after the
    first): a follow-up like that is about what was under discussion."""
    return not _names_something(question.split())


def _names_something(words: Sequence[str]) -> bool:
    """A capitalised or mixed-case word after the first one: a paper, method or dataset name."""
    for word in words[1:]:
        core = word.strip(".,;:!?\"'()[]")
        if core and core != "I" and any(ch.isupper() for ch in core):
            return True
    return False


# "the latency", "these speed-ups": a definite description of something said before.
_DEFINITE = re.compile(r"\b(?:the|this|that|these|those)\s+((?:[A-Za-z][\w-]*\s*){1,3})", re.I)
_LAST_TURN_WORDS = 4  # content words shorter than this say too little to refer back


def speaks_of_last_turn(question: str, history: Sequence[Turn]) -> bool:
    """Whether `question` speaks, with a definite article, of something the last question or
    answer spoke of ("Which GPU measured the latency?" after a question about a paper's
    latency): when it names no paper, it leans on that turn."""
    if not history:
        return False
    last, answer = history[-1]
    said = {w.rstrip("s") for w in _WORD.findall(f"{last} {answer}".lower())}
    for match in _DEFINITE.finditer(question):
        words = [w.rstrip("s") for w in _WORD.findall(match.group(1).lower())]
        if any(len(w) >= _LAST_TURN_WORDS and w in said for w in words):
            return True
    return False


def standalone_query(
    question: str, history: Sequence[Turn], *, max_turns: int = 3, followup: bool | None = None
) -> str:
    """The question, prefixed by the earlier questions it leans on when it reads as a follow-up:
    the previous question and, while those are follow-ups too, the ones before it (at most
    `max_turns`), so "What is Cake?" → "How does it work?" → "What does it improve?" still
    searches for Cake. `followup` says whether it reads as one (`is_followup` when not given).

    Deterministic and model-free, so a weak LLM can never break retrieval of follow-ups.
    """
    question = " ".join(question.split())
    leans = is_followup(question) if followup is None else followup
    if not history or not leans:
        return question
    chain: list[str] = []
    for earlier, _ in reversed(history[-max_turns:]):
        chain.append(_as_sentence(earlier))
        if not _REFERRING.search(earlier):  # it names its own subject: the chain starts here
            break
    return " ".join([*reversed(chain), question])


_WORD = re.compile(r"[a-z0-9]+")


def rewrite_is_faithful(
    rewrite: str, question: str, history: Sequence[Turn], *, max_new_share: float = 0.2
) -> bool:
    """Whether a model's standalone rewrite of `question` only reuses the words of the questions
    asked so far and the names (capitalised words) in the answers. A small model often invents a
    topic instead ("Cake is a light-weight data processing system for image editing"), and a
    search for that finds the wrong papers."""
    asked = " ".join([question, *(q for q, _ in history)])
    names = re.findall(r"\b\w*[A-Z0-9]\w*", " ".join(a for _, a in history))
    known = set(_WORD.findall(f"{asked} {' '.join(names)}".lower()))
    words = [w for w in _WORD.findall(rewrite.lower()) if len(w) >= 4]
    if not words:
        return False
    new = [w for w in words if w not in known]
    return len(new) <= max_new_share * len(words)


def _as_sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if not text or text[-1] in ".?!" else text + "."


# "And BarNet?", "What about the last author?", "How about on ImageNet?": a follow-up that says
# only what changes. It asks the previous question again, with that part in place of the one it
# stands for: a name for its one name, a phrase for the phrase with the same last word ("the
# last author" for "the first author"), a phrase opened by a preposition for the one opened by
# the same preposition ("on ImageNet" for "on FooSet").
_ELLIPSIS = re.compile(
    r"^\s*(?:and|(?:and\s+)?(?:what|how)\s+about|and\s+for|same\s+for)\s+(?P<rest>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)
ELLIPSIS_WORDS = 5  # at most this many words say what changes
_PREPOSITION = re.compile(
    r"^(?P<preposition>on|in|for|with|at|under|over|against|without|across)\s+\S", re.IGNORECASE
)
_DETERMINER = r"(?:(?:the|its|their|his|her|a|an)\s+)?"
_FUNCTION_WORDS = frozenset("the its their his her a an this that these those one".split())


def resolve_ellipsis(question: str, history: Sequence[Turn]) -> str:
    """`question` in full when it only says what changes from the previous question ("And
    BarNet?" after "What is the speed of FooNet?" -> "What is the speed of BarNet?");
    otherwise `question` as it is."""
    match = _ELLIPSIS.match(question)
    if not history or match is None:
        return question
    rest = match.group("rest").strip()
    if len(rest.split()) > ELLIPSIS_WORDS:
        return question
    previous = resolve_ellipsis(history[-1][0], history[:-1])
    opened = _PREPOSITION.match(rest)
    if opened:
        # "on ImageNet" for "on FooSet": the phrase runs to the clause's end
        preposition = re.escape(opened.group("preposition"))
        pattern = rf"\b{preposition}\s+[^,;?]+?(?=\s*[,;?]|\s*$|\s+(?:and|or|than|while)\b)"
        return _substituted(previous, pattern, rest, question)
    names = [n for n in query_names(question) if n in rest]  # "Quartz" opens no sentence here
    if names:
        earlier = query_names(previous)
        if len(earlier) != 1 or len(names) != 1:
            return question  # which name it stands for is unclear
        return _substituted(
            previous, rf"(?<![\w-]){re.escape(earlier[0])}(?![\w-])", names[0], question
        )
    head = rest.split()[-1].lower()
    if head in _FUNCTION_WORDS or len(head) < 3:
        return question
    pattern = rf"\b{_DETERMINER}(?:[\w-]+\s+){{0,2}}?{re.escape(head)}\b"
    return _substituted(previous, pattern, rest, question)


def _substituted(previous: str, pattern: str, replacement: str, question: str) -> str:
    """`previous` with the first match of `pattern` replaced (`question` when nothing matches)."""
    found = re.search(pattern, previous, re.IGNORECASE)
    if found is None:
        return question
    return previous[: found.start()] + replacement + previous[found.end() :]
