"""When to say the papers don't answer: one fixed phrase, decided by the system.

Deterministic gates run before any generation, so every backend refuses alike:
1. relevance: the best retrieved passage must be similar enough to the question;
2. specifics: every specific thing the question names (an identifier such as MVDream, ImageNet,
   GPU, or a number such as 1/255) must appear in the selected passages;
3. quantities: a question asking for an amount ("how many", "how fast", "what accuracy") needs
   a passage sentence that states a number next to one of the question's content words;
4. coverage: the passages must hold a minimum share of the question's content words.
A generative model's own "the papers do not say" also counts as a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answer.context import ContextPassage, TermWeights
from rag.text.names import query_names

CANNOT_ANSWER = "The retrieved papers do not answer this question."

# Function words and the vocabulary of asking (not of the papers' content).
_STOPWORDS = frozenset(
    """a about above after again against all also although am among an and any are as at be
    because been before being below besides between both but by can could did do does doing done
    down during each either else ever every few for from further had has have having he her here
    him his how however i if in into is it its itself just least less let like made make makes many
    may me might more most much must my neither no nor not now of off often on once one only or
    other others our out over own per perhaps rather same several shall she should since so some
    such than that the their them themselves then there these they this those though through thus
    to too toward towards under until up upon us use used uses using very via was we well were what
    whatever when where whether which while who whom whose why will with within without would yet
    you your paper papers method methods approach approaches work works author authors study
    studies propose proposed proposes describe describes explain explains mean means main idea
    way ways report reports reported achieve achieves show shows result results find finds found
    give gives get gets kind type exist exists able help helps allow allows tell talk say says
    role play plays differ differs difference differences compare compared comparison earlier
    previous prior instead want deal deals break breaks happen happens keep keeps besides
    overall particular specific regard regarding respect terms number new""".split()
)
_QUANTITY = re.compile(
    r"\b(how (many|much|fast|long|large|big|small|often|far|quickly)|by how|"
    r"what (is|was|are|were) the (number|size|amount|percentage|rate|speed|accuracy|score)|"
    r"what (percentage|fraction|radius|accuracy|score|error|speed-?up|latency|win rate))\b",
    re.IGNORECASE,
)
_NUMBER_IN_QUESTION = re.compile(r"\d+(?:[./]\d+)*")
_MODEL_REFUSAL = re.compile(
    r"(papers? do(es)? not (say|mention|contain|answer|specify|provide|state)|"
    r"(cannot|can't|can not) (answer|tell|determine)|no information|not (mentioned|provided|"
    r"specified|stated) in|don't know|do not know)",
    re.IGNORECASE,
)
# Questions about code availability are answered by a link in the abstract.
_CODE_QUESTION = re.compile(r"\b(code|implementation|repository|repo|open[- ]source)\b", re.I)
_CODE_EVIDENCE = re.compile(r"(https?://|github|gitlab|\\url|code is available|available at)", re.I)
# A stated amount: a digit, a number word, or a unit of time.
_DIGIT = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|hundreds?|thousands?|millions?|"
    r"billions?|half|double|twice|triple|\w+fold|seconds?|minutes?|hours?|orders? of magnitude)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z-]+")


@dataclass(frozen=True)
class Answerability:
    answerable: bool
    coverage: float
    reason: str


def content_terms(text: str, weights: TermWeights) -> set[str]:
    """Stemmed content words of `text` (stopwords and asking-vocabulary removed)."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOPWORDS]
    return weights.terms(" ".join(words)) if words else set()


def _mentions(name: str, text: str) -> bool:
    variants = {name, name.rstrip("s")} if len(name) > 3 else {name}
    return any(re.search(rf"(?<![\w]){re.escape(v)}", text, re.IGNORECASE) for v in variants)


def check_answerable(
    question: str,
    passages: Sequence[ContextPassage],
    weights: TermWeights,
    *,
    min_coverage: float,
) -> Answerability:
    """Whether the selected passages plausibly contain the answer (see module doc)."""
    if not passages:
        return Answerability(False, 0.0, "no passages")
    text = " ".join(f"{p.title} {p.text}" for p in passages)
    # Names are looked up in everything retrieved, not only in the sentences selected.
    retrieved = " ".join([text] + [x.text for p in passages for x in p.hit.passages])
    for name in query_names(question):
        if not _mentions(name, retrieved):
            return Answerability(False, 0.0, f"the passages never mention {name}")
    for number in _NUMBER_IN_QUESTION.findall(question):
        if len(number) >= 2 and number not in text:
            return Answerability(False, 0.0, f"the passages never mention {number}")
    terms = content_terms(question, weights)
    text_terms = weights.terms(text)
    total = sum(weights.idf(t) for t in terms)
    covered = sum(weights.idf(t) for t in terms if t in text_terms)
    coverage = covered / total if total else 1.0
    if _CODE_QUESTION.search(question) and _CODE_EVIDENCE.search(text):
        return Answerability(True, coverage, "code link found")
    if coverage < min_coverage:
        return Answerability(False, coverage, "question terms missing from the passages")
    if _QUANTITY.search(question):
        for passage in passages:
            for sentence in passage.sentences:
                if _DIGIT.search(sentence.text) and weights.terms(sentence.text) & terms:
                    return Answerability(True, coverage, "quantity found")
        return Answerability(False, coverage, "no passage states the asked-for quantity")
    return Answerability(True, coverage, "covered")


def is_model_refusal(text: str) -> bool:
    return bool(_MODEL_REFUSAL.search(text))
