"""Quoting abstracts for tables and summaries: which sentence states the problem, the approach,
the setting and the key result of a paper, and short names for papers."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.answer.citations import SUPPORTED, UNSUPPORTED, lexical_containment
from rag.answer.safety import safe_title

COLUMNS = ("problem", "approach", "data/setting", "key result")
_CUES: dict[str, re.Pattern[str]] = {
    "problem": re.compile(
        r"\b(challeng|problem|limit|however|remain|lack|suffer|issue|gap|difficult|costly|"
        r"bottleneck|fail|hinder|constrain|struggl|expensive|unclear|unknown|little is known|"
        r"(?:not well|poorly|not fully) understood|open question)",
        re.I,
    ),
    "approach": re.compile(
        r"\b(we (propose|present|introduce|develop|design|study|analy[sz]e|provide|train|build|"
        r"construct|derive|formulate|establish|leverage|employ|adopt|extend|investigate|"
        r"explore|examine|apply|cast|frame|reformulate|revisit)|this paper|"
        r"our (method|approach|framework)|framework|introduces|proposes|we show that|called|"
        r"termed|named)\b",
        re.I,
    ),
    "data/setting": re.compile(
        r"\b(dataset|benchmark|experiment|evaluat|tasks?|simulat|real-world|synthetic|setting|"
        r"models? (such as|like)|systems?)\b",
        re.I,
    ),
    "key result": re.compile(
        r"(\d|\b(outperform|improv|achiev|reduc|speed|faster|state-of-the-art|surpass|"
        r"demonstrat|significant|better|gain|accura))",
        re.I,
    ),
}
MAX_CELL_WORDS = 28
_LINK = re.compile(
    r"https?://|github\.com|\b(?:code|models|data|datasets|weights)\b[\w\s,]{0,40}?\b"
    r"(?:is|are|will be|has been|have been) (?:made )?(?:publicly )?"
    r"(?:available|released|open-sourced)\b",
    re.I,
)


def states_approach(sentence: str) -> bool:
    """Whether a sentence presents a paper's method ("we propose X, which ...")."""
    return bool(_CUES["approach"].search(sentence))


def states_problem(sentence: str) -> bool:
    """Whether a sentence states a problem or a limitation ("X remains costly", "however"), not
    one that takes up the problem stated before it ("To address this challenge, ...")."""
    return bool(_CUES["problem"].search(sentence)) and not takes_up_problem(sentence)


# A sentence that takes up the problem stated just before it: "To address this challenge, we
# propose ...", "Motivated by this, ...".
_TAKES_UP = re.compile(
    r"^(?:to\s+(?:address|tackle|overcome|solve|mitigate|bridge|fill|close|remedy|alleviate|fix)"
    r"\s+(?:this|these|that|those|such|the\s+above)|motivated\s+by\s+(?:this|these|that)|"
    r"in\s+response)\b",
    re.IGNORECASE,
)


def takes_up_problem(sentence: str) -> bool:
    """Whether a sentence answers the problem the sentence before it states (see _TAKES_UP)."""
    return bool(_TAKES_UP.match(sentence.strip()))


# Anywhere in a sentence: overcoming what was just said ("..., we overcome these limitations by
# ...", "which avoids this cost").
_OVERCOMES = re.compile(
    r"\b(?:overcom|address|tackl|mitigat|alleviat|remed|circumvent|avoid|bypass|sidestep)"
    r"\w*\s+(?:this|these|that|those|such)\b",
    re.IGNORECASE,
)


def overcomes_problem(sentence: str) -> bool:
    """Whether a sentence says how the problem stated before it is overcome (see _TAKES_UP and
    _OVERCOMES)."""
    return takes_up_problem(sentence) or bool(_OVERCOMES.search(sentence))


# A sentence whose subject is earlier work ("Current methods are restricted to ..."): what
# others do or lack, not what the paper found.
_OTHERS = re.compile(
    r"^\s*(?:the\s+)?(?:(?:most|many)\s+)?(?:current|existing|prior|previous|conventional|"
    r"traditional)\b",
    re.IGNORECASE,
)


def about_others(sentence: str) -> bool:
    """Whether a sentence speaks of earlier work, not of the paper's findings (see _OTHERS)."""
    return bool(_OTHERS.search(sentence))


def is_link(sentence: str) -> bool:
    """Whether a sentence points to code ("Code is at https://..."): not a claim to quote."""
    return bool(_LINK.search(sentence))


# The authors presenting their own work ("we propose", "this paper", "our method"): a stronger
# sign of the approach than a word such as "framework", which a sentence on earlier work uses too.
_PRESENTS = re.compile(
    r"\b(we (propose|present|introduce|develop|design)|our (method|approach|framework|model|"
    r"algorithm))\b",
    re.I,
)
# "In this paper, we study ...": the authors speak of their work, maybe not of their method.
_THIS_WORK = re.compile(r"\bthis (paper|work)\b", re.I)


def classify(sentences: Sequence[str]) -> dict[str, str]:
    """One sentence per column: the first unused sentence matching the column's cues (a
    sentence fills one cell at most; a column without one stays empty). The approach is the
    first sentence in which the authors present their work, else the first other approach
    sentence that states no problem (not "Existing work relies on a ... framework")."""
    cells: dict[str, str] = {}
    used = {i for i, s in enumerate(sentences) if is_link(s)}  # "Code is at https://..."
    for column in ("approach", "key result", "problem", "data/setting"):
        pattern = _CUES[column]
        candidates = [i for i, s in enumerate(sentences) if pattern.search(s)]
        if column == "approach":
            candidates.sort(
                key=lambda i: (
                    not _PRESENTS.search(sentences[i]),
                    bool(_CUES["problem"].search(sentences[i])),
                    not _THIS_WORK.search(sentences[i]),
                    i,
                )
            )
        if column == "key result":  # results come late in abstracts, and are the authors'
            candidates = sorted(candidates, key=lambda i: (about_others(sentences[i]), -i))
        if column == "problem" and sentences:
            candidates = [*candidates, 0]  # an abstract opens on its problem
        choice = next((i for i in candidates if i not in used), None)
        if choice is not None:
            used.add(choice)
            cells[column] = shorten(sentences[choice])
    return cells


def shorten(sentence: str) -> str:
    words = sentence.split()
    text = sentence if len(words) <= MAX_CELL_WORDS else " ".join(words[:MAX_CELL_WORDS]) + " …"
    return text.replace("|", "/").replace("\n", " ")


def short_title(title: str, limit: int = 60) -> str:
    """The title before its colon, cut at a word boundary within `limit` characters."""
    head = safe_title(title).partition(":")[0].strip().replace("|", "/")
    if len(head) <= limit:
        return head
    return head[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:-–") + "…"


def quote_support(quote: str, abstract_sentences: Sequence[str]) -> str:
    """A quoted line's support label, checked: supported when the abstract contains it."""
    return SUPPORTED if lexical_containment(quote, abstract_sentences) >= 0.95 else UNSUPPORTED
