"""When to say the papers don't answer: one fixed phrase, decided by the system, with a reason.

Deterministic gates run before any generation, so every backend refuses alike. Each is a general
rule about questions and evidence (no word in this module comes from an evaluation question):
1. relevance: the best retrieved passage must be similar enough to the question;
2. names: every identifier the question names (CamelCase, acronyms, hyphenated names) and every
   multi-digit number must appear in what was retrieved; a venue with its year ("ICML 2025")
   names the collection, not a paper, and is not looked for; "CNN-driven" looks for "CNN", and
   a name written without its hyphens ("Data-2" / "data2") counts;
3. the asked-for detail: the phrase after a question word ("what learning rate", "which
   backbone", "how many GPU-hours") must be stated in the retrieved passages, apart from words
   that only name the kind of answer (method, number, share, ...) or relate the asked things
   ("what different losses", "which novel module"); a word the passages state
   with a synonym or in another form counts as stated; a question that asks how ("how does X
   decide which inputs ...") asks for no phrase of its "which" clause;
4. quantities: a question asking for an amount needs a passage sentence that states one next to
   the question's own content words (not only the paper's name); one asking for a measured
   value ("what top-5 error", "what speedup") needs a number in a sentence that states the
   measure, or a value in parentheses after a name the question names ("FooSet (70.6%)");
5. named instances: "which datasets", "what LLM", "which base model" need a sentence of the
   paper that writes a name the question does not (not a short form the abstract defines, nor
   a paper's own name) where it speaks of that kind, of its experiments or of what the
   question asks; "several benchmarks" names none; the kind's own word need not be written
   ("which city" is answered by "Lyon"), and "X as a base KIND" or "KIND such as X" says
   which one without a name, and so does a short form the abstract defines by all the words
   that narrow the kind ("which risk measure": "conditional value at risk (CVaR)"); a generic
   kind a paper is compared with ("which models does X outperform") asks for its baselines by
   name; adjectives and a quantity's kind ("what numerical competitive ratio") ask for a value;
6. coverage: unless the question names its paper, the retrieved passages of the answering
   papers must hold a minimum share of the question's content words that are not the name of
   its subject nor name the kind of answer;
7. a subject: a question asked without earlier turns must have a content word, and one that
   refers back ("What data does it use?") a word rare enough to say what "it" is.
A generative model's own "the papers do not say" also counts as a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from rag.answer.context import ContextPassage, TermWeights
from rag.answer.conversation import refers_back
from rag.text.abbreviations import (
    abbreviated,
    defined_abbreviations,
    expand,
    qualified_spelled_out,
    spelled_out,
)
from rag.text.latex import as_typed, without_math
from rag.text.names import method_name, name_base, query_names
from rag.text.questions import asking_parts, with_parts, without_venues
from rag.text.sentences import split_sentences
from rag.text.terms import FUNCTION_WORDS

CANNOT_ANSWER = "The retrieved papers do not answer this question."

# The vocabulary of asking about papers: words every question about a paper may use, which say
# nothing about what is asked (the English stopwords of the lexical index come on top).
ASKING_WORDS = frozenset(
    """paper papers work works study studies author authors propose proposed proposes proposing
    present presents introduce introduces describe describes explain explain explains compare
    compared comparison differ differs difference differences summarize summarise tell show shows
    report reports reported use uses used using also please tackle tackles address addresses
    build builds built focus focuses investigate investigates explore explores consider
    considers develop develops concern concerns apply applies applied relate related relating
    exist exists existing oral orals spotlight spotlights poster posters list name find
    overview overviews summary summaries give contribute contributes contributed recommend
    suggest""".split()
)
# Words that name the kind of answer a question wants ("which method", "what share"), not its
# content: the answer need not repeat them.
ANSWER_KINDS = frozenset(
    """number numbers amount amounts share fraction percentage percent proportion portion ratio
    kind kinds type types sort part parts way ways method methods technique techniques approach
    approaches model models component components dataset datasets benchmark benchmarks metric
    metrics task tasks tool tools algorithm algorithms framework frameworks architecture
    strategy strategies mechanism mechanisms idea ideas result results value values thing things
    aspect aspects step steps stage stages factor factors property properties setting settings
    size sizes name names one ones main key specific particular exact role roles purpose
    purposes function functions effect effects impact impacts benefit benefits advantage
    advantages limitation limitations contribution contributions relationship reason reasons
    motivation insight insights finding findings goal goals challenge challenges problem
    problems criterion criteria measure measures category categories class classes family
    families variant variants form forms scheme schemes suite suites quantity quantities piece
    pieces fix fixes solution solutions remedy remedies margin margins routine routines
    procedure procedures field fields domain domains area areas application
    applications architectures fractions motivations percentages portions proportions ratios
    relationships shares sorts shape shapes weakness weaknesses shortcoming shortcomings
    drawback drawbacks flaw flaws failing failings regime regimes phase phases objective
    objectives granularity granularities level levels collection collections basis style
    styles body bodies failure failures cause causes object objects concept concepts notion
    notions formulation formulations signal signals cue cues knob knobs lever levers module
    modules ingredient ingredients structure structures branch branches""".split()
)
# Kinds of answer that a topic studies as such ("papers that design network architectures",
# "3D shape generation", "concept erasure"): in a topic they are content words.
STUDIED_KINDS = frozenset(
    """architecture architectures shape shapes object objects concept concepts signal signals
    structure structures""".split()
)
# Adjectives that say how the asked-for things relate to each other or to the paper ("what
# different losses", "which respective speedups", "what novel module"), not what they are: the
# answer need not repeat them.
RELATING_WORDS = frozenset(
    """different distinct various respective similar common shared separate new novel
    alternative individual underlying overall general corresponding additional extra
    proposed usual typical standard conventional traditional classic classical earlier
    previous prior existing original former older newer competing rival preceding""".split()
)
# The asked-for phrase: at most this many words after the question word (English noun phrases
# there are short; longer runs reach into the verb); it counts as stated when the retrieved
# passages hold this IDF-weighted share of its terms.
PHRASE_WORDS = 3
# A question that describes a paper in its own words holds few of the paper's words, but is
# close to it in meaning: when a retrieved paper is at least DESCRIBED_MEANING cosine-similar to
# the question, the papers' share of its words does not refuse it (the gates for what it asks
# still do). On bench/qa/tune*.jsonl, of the answerable questions refused for holding too few
# of the papers' words, four had their own paper first at 0.66-0.77 similar, one another paper
# at 0.62 (a bar of 0.6 answered it from that paper), one at 0.53; the absent-name ones (14)
# were at most 0.56 similar to any paper.
DESCRIBED_MEANING = 0.65
# "How many X <rest>": a sentence that counts something and states the rest answers it when it
# has at least this many of the rest's content terms and this share of their weight.
COUNT_CONTEXT_TERMS = 2
COUNT_CONTEXT = 0.6
PHRASE_COVERAGE = 0.6
# A past tense or participle ("worked", "trained on"; not "speed" or "seed"): after a noun it
# starts a verb phrase or a reduced relative clause, never continues the noun phrase (English
# puts participles that modify a noun before it: "learned features").
_PAST = re.compile(r"[a-z]{3,}(?<!e)ed")
_QUESTION_WORD = re.compile(r"\b(what|which|how many|how much)\s+", re.IGNORECASE)
# Words that open a noun phrase: right after a question word they show that the word between
# was a verb ("what makes the model ..."), so there is no asked-for phrase.
_DETERMINERS = frozenset("the a an this that these those its their his her our my your".split())
# A verb also comes before "whether" or "if" ("which dimension decides whether ..."), an object
# pronoun ("what signal tells it ..."), a verb's particle ("what comes out ...") and an embedded
# question ("what caps how far ...": a noun is not followed by a question word).
_CLAUSE_OPENERS = _DETERMINERS | frozenset(
    "whether if it them they us out up off down how what which when where why who".split()
)
# A verb of choosing or knowing before a question word makes what follows an embedded question
# ("decide which tokens to drop"): the question asks how the choice is made.
_CHOOSING = re.compile(
    r"\b(?:decid|choos|chose|determin|select|pick|identif|know|learn|chang|vary|vari|switch|"
    r"alter|adjust)\w*\s+$",
    re.IGNORECASE,
)
# "The grid in which X does Y": a preposition between a noun and "which" makes it a relative
# pronoun, not a question word (unlike "and on which tasks ...", "tested on which data ...").
_RELATIVE = re.compile(
    r"\b([A-Za-z][\w-]*)\s+(?:in|on|under|at|by|for|with|through|from|of|over|during|via|into|"
    r"across|within|to)\s+$",
    re.IGNORECASE,
)
# Verbs of an event with no object ("what happens", "what goes on"): after a question word,
# the question word is their subject.
_EVENT_VERBS = frozenset("happen happens happened occur occurs occurred go goes went".split())
# "At what point / time / moment" asks when: the word after the question word is no asked-for
# phrase.
_WHEN = re.compile(r"\bat\s+$", re.IGNORECASE)
_WHEN_NOUNS = frozenset({"point", "time", "moment"})

# Comparatives and superlatives after "how much/many" ("how much faster") ask for a degree.
_DEGREE = re.compile(r"[a-z]{3,}(?:er|est)")
# Where the asked-for phrase ends: an auxiliary verb, a preposition or a punctuation mark.
_PHRASE_END = frozenset(
    """does do did is are was were be been can could has have had will would should may might
    of in on for to from by with at that which who whom when where while as and or but than
    per via into about among between through after before during""".split()
) | frozenset("best worst better worse least".split())  # a degree adverb: the verb follows
# Words before a preposition and "which" that are no noun the "which" could relate to
# ("and on which tasks", "what in which"): then "which" asks (see _RELATIVE).
_NOT_BEFORE_RELATIVE = frozenset("and or but then nor".split()) | ASKING_WORDS | _PHRASE_END
# "How well does X work?" asks how good a result is, which a claim answers without a number
# ("outperforms prior methods"): it is no amount.
_QUANTITY = re.compile(
    r"\b(how (many|much|fast|long|large|big|small|often|far|quickly)|by how|to what extent|"
    r"what (is|was|are|were) the (number|size|amount|percentage|share|fraction|rate|speed)|"
    r"what (percentage|fraction|share|proportion)|by what (margin|factor|amount|percentage))\b",
    re.IGNORECASE,
)
_NUMBER_IN_QUESTION = re.compile(r"\d+(?:[./]\d+)*")
# A model declining to answer. "no information" counts only as a phrase of its own ("there is
# no information about it"), not as the start of a noun phrase ("no information loss").
_MODEL_REFUSAL = re.compile(
    r"(papers? do(es)? not (say|mention|contain|answer|specify|provide|state)|"
    r"(cannot|can't|can not) (answer|tell|determine)|"
    r"no information(?= *(?:$|[.,;:!?]|about|on|regarding|in|is|was|given|provided|available))|"
    r"not (mentioned|provided|specified|stated) in|don't know|do not know)",
    re.IGNORECASE,
)
# Questions about code availability are answered by a link in the abstract.
_CODE_QUESTION = re.compile(r"\b(code|implementation|repository|repo|open[- ]source)\b", re.I)
# Asking where a paper's code is, not about its implementation ("Is the code of X available?",
# "Where can I find X's repository?"); "code" that modifies another word ("code-repair agents")
# names no code.
_CODE_REQUEST = re.compile(
    r"\b(?:where|link|url|available|releas\w*|open[- ]sourced?|find|get|download|public)\b"
    r"[^?]*\b(?:code|repository|repo|github)\b(?!-)"
    r"|\b(?:code|repository|repo)\b(?!-)[^?]*\b(?:available|released|public|open[- ]sourced?|link|"
    r"url|found)\b"
    r"|\bis\s+there\s+(?:any\s+|a\s+)?(?:code|repo|repository|github)\b",
    re.IGNORECASE,
)
_CODE_EVIDENCE = re.compile(r"(https?://|github|gitlab|\\url|code is available|available at)", re.I)
# A stated amount: a digit (not one inside a name: "P2FA"), a number word, or a unit of time.
_DIGIT = re.compile(
    r"(?<![A-Za-z])\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|hundreds?|thousands?|millions?|"
    r"billions?|half|double|twice|triple|\w+fold|seconds?|minutes?|hours?|orders? of magnitude)\b",
    re.IGNORECASE,
)
# What holds a digit or a number word but states no amount: an item's number in an enumeration
# ("1) we tile ..., 2) we cut ..."), the number in a name ("QuartzSet-10", "BazNet-1K"; not a
# size: "FooLM-7B"), "one of the ...".
_NO_AMOUNT = re.compile(
    r"(?:^|(?<=[\s;:,.]))\(?(?:\d{1,2}|[ivx]{1,4})\)(?=\s)"
    r"|(?<=[A-Za-z])-\d+(?:\.\d+)?(?![\d.]*[BMbm]\b)(?=[Kk]?\b)"
    r"|\bone\s+of\b",
    re.IGNORECASE,
)


def states_amount(sentence: str) -> bool:
    """Whether `sentence` states an amount (see _DIGIT and _NO_AMOUNT)."""
    return bool(_DIGIT.search(_NO_AMOUNT.sub(" ", sentence)))


# A term written in capitalised words ("Optical Character Recognition", "Stochastic Gradient
# Descent"): its words are not names. A run with an all-capitals, mixed-case or numbered word is
# a product's name ("NVIDIA Titan Xp").
_CAPITALISED_WORD = r"[A-Z][a-z]*(?:-[A-Za-z][a-z]*)*"
_TITLE_CASE_RUN = re.compile(
    rf"(?<![\w-])(?:{_CAPITALISED_WORD}\s+){{2,}}{_CAPITALISED_WORD}(?![\w-])"
)
# An adjective made from a name ("Hessian", "Euclidean") describes, it does not name.
_NAME_ADJECTIVE = re.compile(r"(?:[a-z]+-)?[A-Z][a-z]+(?:ian|ean)")  # "non-Euclidean" too
# A count: a number, in digits or words, before a word ("57 tasks", "five domains", "up to four
# steps"), or a size ("140M").
_COUNT_NUMBER = (
    r"(?:\d[\d,.]*[KMB]?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"dozens?|hundreds?|thousands?)"
)
_COUNT = re.compile(rf"\b{_COUNT_NUMBER}\s+(?:[\w-]+\s+){{0,2}}?[A-Za-z][\w-]*", re.IGNORECASE)
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split()
    )
}
_GIVEN = re.compile(  # a count, not a year ("which 2025 papers")
    r"\b(?:which|what)\s+(\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\s+((?:[\w-]+\s+){0,2}[\w-]+)",
    re.IGNORECASE,
)
# What lists the counted things right after their count, and the rest of its noun phrase
# ("three tasks: sorting, ...", "two sorts of tile (square, hexagonal)", "two losses, namely
# ...", "two benchmarks, MMLU and ...").
_LISTING = re.compile(
    r"(?:\s+(?:of|for|in|on)\s+(?:[\w-]+\s+){0,2}?[\w-]+)?\s*"
    r"(?:[:(\u2013\u2014$\[{]|,?\s*(?:(?:such as|including|namely|like)\b|i\.e\.|e\.g\.)|"
    r",\s+(?:the\s+)?[A-Z0-9])"
    # "two quartz passes beside the tiling step: 1) ...": a colon later in the clause
    r"|(?:\s+[^\s.;:,]+){1,8}?\s*:"
)


def given_count(part: str) -> tuple[str, str] | None:
    """The count and the words after it where a question gives the number of the things it
    asks for ("which three tiling strategies" -> ("three", "tiling strategies")), up to
    its verb or punctuation."""
    match = _GIVEN.search(part)
    if match is None:
        return None
    words = []
    for word in _PUNCTUATION.split(match.group(2))[0].split():
        if word.lower() in FUNCTION_WORDS or word.lower() in _CLAUSE_OPENERS:
            break
        words.append(word)
    return (match.group(1), " ".join(words)) if words else None


def _count_pattern(count: str, counted: str) -> re.Pattern[str]:
    """The count, in digits or in words, before up to two words and the counted words' head."""
    number = _NUMBER_WORDS.get(count.lower())
    value = int(count) if number is None else number
    forms = "|".join([str(value), *(w for w, i in _NUMBER_WORDS.items() if i == value)])
    head = re.escape(counted.split()[-1].rstrip("s"))
    return re.compile(rf"\b(?:{forms})\s+(?:[\w-]+\s+){{0,2}}?{head}(?:e?s)?\b", re.IGNORECASE)


def echoes_count(sentence: str, count: str, counted: str) -> bool:
    """Whether `sentence` writes the asked count of the counted things ("five tile sets")."""
    return bool(_count_pattern(count, counted).search(sentence))


def lists_counted(sentence: str, count: str, counted: str) -> bool:
    """Whether `sentence` lists the counted things right after their count."""
    pattern = _count_pattern(count, counted)
    return any(_LISTING.match(sentence, m.end()) for m in pattern.finditer(sentence))


# The words a number counts: up to three words after it ("8 custom accelerator chips").
_COUNTED = re.compile(
    rf"(?<![\w.,]){_COUNT_NUMBER}\s+((?:[A-Za-z][\w-]*\s+){{0,2}}[A-Za-z][\w-]*)", re.IGNORECASE
)
# Where a clause of a question ends ("how many X does it have, and across how many Y ...").
_CLAUSE = re.compile(r"[,;:?!]")
_MEASURE_VALUE = re.compile(
    r"(?<![A-Za-z])\d|\b(half|double|twice|triple|\w+fold|orders? of magnitude)\b", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
# "How many points above Y is X": points of a measure, stated as a percentage or in points.
_POINTS = re.compile(r"(?:percentage\s+)?points?", re.IGNORECASE)
_IN_POINTS = re.compile(r"\d\s*(?:\\?%|percent|pp\b|points?\b)", re.IGNORECASE)
# A year is asked for by the word and stated as a year of the past century ("(2010)", not
# "2048 tokens").
_YEAR_ASKED = re.compile(r"\byears?\b", re.IGNORECASE)
_YEAR = re.compile(r"(?<![\d.,])(?:19\d\d|20[0-2]\d)(?![\d.,%])")


# (words, text) -> those of `words` for which `text` has a word of the same meaning: a synonym or
# another form ("big" / "large", "speed" / "fast"); chain.py decides by word embeddings.


class NearWords(Protocol):
    """Those of `words` for which `text` has a word of the same meaning (embedding similarity
    at least `bar`, or the answerer's own bar)."""

    def __call__(self, words: Sequence[str], text: str, bar: float | None = None) -> set[str]: ...


# A quantity (a count or a measure) is of what its own word or a very close one names:
# "performance" is no "accuracy" (0.50 apart), nor "hardware" a count of "GPUs" (0.53: a broader
# word does not say how many of the narrower thing), though other asked words may be put as
# loosely as that (see chain.NEAR_WORD).
NEAR_MEASURE = 0.56


# Words for one direction of change in a measure: a paper that reports "a 12% improvement"
# states the gain asked for, and "a 3x cut" the reduction (word embeddings put "gain" and
# "improvement" only 0.3 apart).
_CHANGE_WORDS = (
    "improvement improve gain boost increase uplift enhancement",
    "reduction reduce decrease drop cut saving decline",
)


@dataclass(frozen=True)
class Answerability:
    answerable: bool
    coverage: float
    reason: str
    # Not answerable as a whole, but these of its parts are: the question asking only them
    # ("" when no part is, or the question has one part).
    answered: str = ""


def content_terms(text: str, weights: TermWeights) -> set[str]:
    """Stemmed content words of `text` (function words and the vocabulary of asking removed)."""
    words = [
        w
        for w in _WORD.findall(without_venues(text))
        if w.lower() not in ASKING_WORDS and w.lower() not in FUNCTION_WORDS
    ]
    return weights.terms(" ".join(words)) if words else set()


def phrase_terms(phrase: str, weights: TermWeights) -> set[str]:
    """The terms of an asked-for phrase, without the function words inside its compounds
    ("already-published" -> publish)."""
    parts = [p for p in re.split(r"[\s-]+", phrase) if p and p.lower() not in FUNCTION_WORDS]
    return weights.terms(" ".join(parts)) if parts else set()


def topic_terms(text: str, weights: TermWeights) -> set[str]:
    """The content terms of a topic ("papers on diffusion models" -> diffus): without words that
    only name a kind of thing (model, method, share, ...)."""
    words = [
        w
        for w in _WORD.findall(without_venues(text))
        if w.lower() not in ASKING_WORDS
        and w.lower() not in FUNCTION_WORDS
        and (w.lower() not in ANSWER_KINDS or w.lower() in STUDIED_KINDS)
    ]
    return weights.terms(" ".join(words)) if words else set()


# A singular kind word right before a content word may modify it ("model merging", "dataset
# distillation", "the task vectors"): together they name one thing. Not after "to" ("to model
# X"), nor before an adverb ("a model locally"). Whether a collection uses the two as one name
# is for the caller to tell ("a model performs" is no name).
_KIND_COMPOUND = re.compile(r"(?<![\w-])([A-Za-z]+)(?=[\s-]+([A-Za-z][\w-]*))")


def kind_compounds(text: str) -> list[str]:
    """The pairs of words of `text` whose first is a kind word that may modify the second (see
    `_KIND_COMPOUND`): "model merging" in "papers on model merging"."""
    found = []
    for m in _KIND_COMPOUND.finditer(text):
        kind, word = m.group(1).lower(), m.group(2).lower()
        before = text[: m.start()].split()[-1:]
        if (
            kind in ANSWER_KINDS
            and not kind.endswith("s")
            and word not in ASKING_WORDS | FUNCTION_WORDS | ANSWER_KINDS
            and not word.endswith("ly")
            and before != ["to"]
        ):
            found.append(f"{m.group(1)} {m.group(2)}")
    return found


def asked_phrases(
    question: str, subjects: Sequence[str] = (), *, after: re.Pattern[str] = _QUESTION_WORD
) -> list[str]:
    """The phrases right after each question word: what the question asks for ("what learning
    rate does X use" -> "learning rate"), without words that only name the kind of answer.
    Coordinated phrases are each asked for ("which optimizer and batch size" -> both). A
    punctuation mark ends a phrase, and so does a verb (a word before a determiner). A phrase
    that runs into one of the `subjects` (names of the papers asked about) has none: the question
    word is the subject or a relative pronoun ("what lets X do ...", "by which X does ...")."""
    phrases = []
    question = _POSSESSIVE.sub("", without_venues(question))
    names = {w for n in subjects for w in n.split()}
    for match in after.finditer(question):
        if _CHOOSING.search(question[: match.start()]):
            continue  # "how does it decide which tokens to drop": the choice is asked, not them
        relative = _RELATIVE.search(question[: match.start()])
        if (
            relative
            and match.group(1).lower() == "which"
            and relative.group(1).lower() not in _NOT_BEFORE_RELATIVE
            and not _PAST.fullmatch(relative.group(1).lower())
        ):
            continue  # "the grid in which tiles overlap": no question
        # A punctuation mark ends the phrase ("on how many tasks, over how many suites").
        following = _WORD.findall(_PUNCTUATION.split(question[match.end() : match.end() + 120])[0])
        if len(following) >= 2 and following[1].lower() in _CLAUSE_OPENERS:
            continue  # "what <verb> the ...": the question word is the subject
        if following[:1] and following[0].lower() in _EVENT_VERBS:
            continue  # "what happens to X when ...": asks what X does, no thing of its own
        if (
            following[:1]
            and following[0].lower() in _WHEN_NOUNS
            and _WHEN.search(question[max(0, match.start() - 4) : match.start()])
        ):
            continue  # "at what point": asks when, as "when" does
        amount = match.group(1).lower().startswith("how")
        found: list[str] = []
        words: list[str] = []
        headed = False  # the phrase ended at its head noun; only "and" may continue it
        for k, word in enumerate(following):
            lower = word.lower()
            if word in names:
                words, found = [], []
                break
            if lower in RELATING_WORDS:
                continue
            if amount and not words and _DEGREE.fullmatch(lower):
                break  # "how much faster": a degree, asked for by the quantity gate
            if not words and (
                (lower in _COMPARATIVES and lower not in _QUANTIFIERS) or lower in _POSITIONS
            ):
                continue  # "what weaker bound", "which second stage": it relates to another
            if lower == "and" and (words or headed):
                found += [" ".join(words)] if words else []  # "which X and Y": Y is asked too
                words, headed = [], False
                continue
            if headed:
                break
            if lower in _PHRASE_END or lower in ASKING_WORDS or lower in FUNCTION_WORDS:
                break
            if len(words) >= PHRASE_WORDS:
                break
            if words and k + 1 < len(following) and following[k + 1].lower() in _CLAUSE_OPENERS:
                break  # "what module extends the ...": a word before "the" is a verb
            if words and (_PAST.fullmatch(lower) or lower in _EVENT_VERBS):
                break  # "which schedule proved best", "which step goes first": a verb phrase
            if lower in ANSWER_KINDS:  # the head noun naming the kind of answer ends the phrase
                # Adjectives alone only narrow the kind ("which probabilistic models", "what
                # rule-based methods"): the question asks for an instance of the kind.
                if words and not all(_ADJECTIVE.fullmatch(w.lower()) for w in words):
                    found.append(" ".join(words))
                words, headed = [], True
                continue
            words.append(word)
        if words:
            found.append(" ".join(words))
        phrases += found
    return phrases


# English adjective forms: derivational suffixes and hyphenated compounds ("rule-based"), and
# the adverbs that grade them ("freely available").
_ADJECTIVE = re.compile(
    r"[a-z]+(?:al|ic|ive|ous|ful|less|able|ible|ly)|"
    r"simple|basic|small|large|big|tiny|short|long|fast|slow|quick|cheap|light|lightweight|"
    r"[a-z0-9]+-(?:based|aware|free|driven|level|wise|specific|like|scale|grained|world)"
)
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b|(?<=s)['’](?=\s)")  # "X's", "cities'"
_PUNCTUATION = re.compile(r"[,;:?!()\[\]]|\.(?:\s|$)")
# A question that asks how something is done ("how does X ...", not "how many").
_ASKS_HOW = re.compile(r"\s*how\s+(?:does|do|did|is|are|was|were|can|could|would|should)\b", re.I)
_HOW_MANY = re.compile(r"\b(how many)\s+", re.IGNORECASE)


def counted_things(question: str, subjects: Sequence[str] = ()) -> list[str]:
    """What a question asks the number of ("how many GPU hours ..." -> "GPU hours"; not in
    "decides how many crops to keep")."""
    return asked_phrases(without_chosen_amounts(question), subjects, after=_HOW_MANY)


# Measured quantities: "what top-5 error", "what speedup". The answer is a number, stated
# in a sentence together with the measure (like "how many X").
MEASURES = frozenset(
    """accuracy accuracies error errors speedup speedups slowdown improvement improvements gain
    gains reduction reductions rate rates score scores perplexity latency throughput
    overhead""".split()
)


# "what numerical competitive ratio": a quantity's kind after adjectives only.
_QUANTITY_KIND = re.compile(
    r"\b(?:what|which)\s+((?:[\w-]+\s+){1,3}?)(?:ratios?|fractions?|percentages?|proportions?|"
    r"shares?)\b",
    re.IGNORECASE,
)


def measured_things(question: str, subjects: Sequence[str] = ()) -> list[str]:
    """The asked-for phrases that name a measured quantity ("what top-5 error does X reach"
    -> "top-5 error"; not "which score function": there the head noun is "function")."""
    found = []
    for phrase in asked_phrases(question, subjects):
        after = re.search(rf"{re.escape(phrase)}\s+([\w-]+)", question)
        headed = after is not None and after.group(1).lower() in ANSWER_KINDS
        if phrase.split()[-1].lower() in MEASURES and not headed:
            found.append(phrase)
    # "what numerical competitive ratio": adjectives and a quantity's kind ask for its value.
    for match in _QUANTITY_KIND.finditer(question):
        words = match.group(1).split()
        if words and all(_ADJECTIVE.fullmatch(w.lower()) for w in words):
            found.append(match.group(0).split(None, 1)[1])
        elif words and not any(w.lower() in _PHRASE_END | _DETERMINERS for w in words):
            # "what compression ratio": a ratio of compression, stated as "4.7x compression"
            narrowing = [w for w in words if w.lower() not in RELATING_WORDS]
            if narrowing:
                found.append(" ".join(narrowing))
    return list(dict.fromkeys(found))


# Kinds of thing whose instances go by names: "which datasets", "what LLM". The answer names
# one: a sentence of the paper must write a name the question does not, where it speaks of the
# kind or of what the question asks about.
NAMED_KINDS = frozenset(
    """dataset datasets benchmark benchmarks corpus corpora llm llms vlm vlms mllm mllms lvlm
    lvlms gpu gpus simulator
    simulators library libraries backbone backbones baseline baselines environment
    environments country countries city cities language languages accelerator accelerators
    chip chips hardware chatbot chatbots collection collections""".split()
)  # and "language model(s)", "graphics card(s)"
# The kind must be what the question word asks for and the object of the clause ("which
# datasets is X evaluated on", "what LLM does X use"): a kind followed by its own verb ("which
# benchmark tests ...") asks which paper, answered by the paper itself, unless the question
# names the paper ("which LLM drives the agents of X", or in the past before a determiner or a
# name: "which LLM tagged X's tiles": an instance used by X).
_KIND = (  # two-word kinds first: "language model" is one kind, not "language" and a noun
    r"\b(?:which|what)\s+((?:[\w-]+\s+){0,3}?)("
    r"(?:vision-language|language|base|pretrained|pre-trained|foundation) models?|"
    r"graphics cards?|" + "|".join(sorted(NAMED_KINDS)) + r")"
)
# What may follow the asked kind before its verb: a prepositional phrase ("which corpus in the
# main example, and ...").
_KIND_TAIL = r"(?:\s+(?:of|in|on|for|from|at|with)(?:\s+[\w-]+){1,3})?"
# A noun that may follow the kind and name the same thing ("which benchmark suite", "which GPU
# model").
_KIND_HEAD = r"(?:\s+(?:suites?|models?|famil(?:y|ies)|collections?|sets?|versions?|variants?))?"
# An aside in parentheses between the kind and its verb ("which LLMs (of what scale) does X
# use") leaves the kind asked for.
_ASIDE = r"(?:\s*\([^()]*\))?"
_KIND_ASKED = re.compile(
    _KIND
    + r"(?="
    + _KIND_HEAD
    + _KIND_TAIL
    + _ASIDE
    + r"\s*(?:[,?]|$|\s(?:is|are|was|were|does|do|did|has|have|had|and|or|can|could|would)\b))",
    re.IGNORECASE,
)
_KIND_DOING = re.compile(
    _KIND + r"(?=\s+(?:[a-z]+s|[a-z]{3,}ed)\s+(?:the|a|an|its|their|(?-i:[A-Z][\w-]*))\b)",
    re.IGNORECASE,
)
# With a named paper, a generic kind asked for by name ("which pairwise model of responses is
# assumed in X", "what dependence measure does X use", "which privacy mechanisms does X cover",
# "which scaling equations does X obtain"): the paper names the one it uses.
_GENERIC_KIND = re.compile(
    r"\b(?:which|what)\s+((?:[\w-]+\s+){1,4}?)(models?|algorithms?|measures?|metrics?|"
    r"architectures?|mechanisms?|equations?)"
    r"(?=" + _KIND_TAIL + r"\s*(?:[,?]|$|\s(?:is|are|was|were|does|do|did|serves?)\b))",
    re.IGNORECASE,
)

# A generic kind that a paper is compared with ("which models does X outperform", "what methods
# did they compare it against"): the answer names the paper's baselines.
_COMPARED_KIND = re.compile(
    r"\b(?:which|what)\s+((?:[\w-]+\s+){0,3}?)(models?|methods?|algorithms?|approaches|"
    r"techniques|systems)(?=\s+(?:does|do|did|is|are|was|were|has|have)\s+"
    r"(?:(?!to\b|in\b|for\b)[\w-]+\s+){0,4}?(?:compared?|outperforms?|outperformed|beats?|"
    r"beaten|surpass(?:es|ed)?)\b)",
    re.IGNORECASE,
)

DATA_KINDS = frozenset(
    "dataset datasets benchmark benchmarks corpus corpora collection collections".split()
)
# A chatbot is a large language model: a paper names "GPT-4" among "larger language models".
CHAT_KINDS = frozenset("llm llms chatbot chatbots language languages model models".split())
# What runs the experiments goes by many words: a paper names "an A100 GPU" for "which chip".
HARDWARE_KINDS = frozenset(
    """gpu gpus graphics card cards accelerator accelerators chip chips hardware device
    devices""".split()
)
EXPERIMENT_WORDS = frozenset(
    "experiment experiments experimental evaluate evaluated evaluation test tested".split()
)


# Generic kinds whose instances a paper may describe in lowercase words ("sparse quartz
# regression" for "which sparse models").
GENERIC_KINDS = frozenset(
    "model models algorithm algorithms measure measures metric metrics architecture "
    "architectures".split()
)


def describes_one(sentence: str, modifiers: str, kind: str) -> bool:
    """Whether `sentence` writes the asked generic kind's `modifiers` before other words than
    the kind's: an instance of it, described ("which sparse models": "sparse quartz
    regression")."""
    words = [w for w in modifiers.split() if w.lower() not in ("and", "or")]
    if kind.lower() not in GENERIC_KINDS or not words:
        return False
    own = {kind.lower(), kind.lower().rstrip("s")}
    joined = r"[\s-]+".join(re.escape(w) for w in words)
    for match in re.finditer(
        rf"(?<![\w-]){joined}\s+([a-z][\w-]+)\s+([a-z][\w-]+)", sentence, re.I
    ):
        following = [w.lower() for w in match.groups()]
        if not any(w in FUNCTION_WORDS or w.rstrip("s") in own for w in following):
            return True
    return False


# A capitalised long form with the short form it defines, and the word after it ("the Quartz
# Zipper (QZ) algorithm", "an adapted Quartz Mechanism (QM)").
_DEFINED_NAME = re.compile(
    r"(?<![\w-])((?:[A-Z][\w-]*\s+){0,4}[A-Z][\w-]*)\s+\(([A-Za-z][\w-]*)\)(?:\s+([a-z]+))?"
)


def defines_instance(sentence: str, kind: str, asked: str, own: Collection[str] = ()) -> bool:
    """Whether `sentence` names a thing of `kind` by a capitalised long form and the short form
    it defines, the kind's word ending the long form or right after it ("the Quartz Zipper (QZ)
    algorithm", "an adapted Quartz Mechanism (QM)" for a mechanism): not a name `asked` (the
    question) writes, nor one of `own` (the methods the papers introduce), nor a plural, which
    names a class of things ("Small Language Models (SLMs)")."""
    words = {w.lower() for w in kind_words(kind)}
    words |= {w.rstrip("s") for w in words}
    for match in _DEFINED_NAME.finditer(sentence):
        long_form, short_form, after = match.group(1), match.group(2), match.group(3) or ""
        if any(
            re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", asked, re.IGNORECASE)
            for n in (short_form, long_form)
        ):
            continue
        if short_form in own or long_form in own:
            continue
        ends = long_form.split()[-1].lower()
        if ends.endswith("s") or short_form.endswith("s"):
            continue  # a plural names a class of things ("Small Language Models (SLMs)")
        if {ends, after.lower(), after.lower().rstrip("s")} & words:
            return True
    return False


def kind_words(kind: str) -> set[str]:
    """The words a paper may use for a kind: a dataset's are those of benchmarks and corpora,
    a GPU's those of any hardware."""
    if kind.lower() in DATA_KINDS:
        return set(DATA_KINDS)
    if set(kind.lower().split()) & HARDWARE_KINDS:
        return set(HARDWARE_KINDS)
    if kind.lower().startswith("chatbot"):
        return set(CHAT_KINDS)
    return {kind}


def named_kinds(question: str, named_paper: bool = False) -> list[tuple[str, str]]:
    """The kinds of named thing the question asks for, each with the words before it ("which
    OCR datasets" -> ("OCR", "datasets")). With a `named_paper`, also a kind followed by its own
    verb and object ("which LLM drives the agents of X")."""
    kinds = []
    question = _POSSESSIVE.sub("", question)
    matches = list(_KIND_ASKED.finditer(question))
    if named_paper:
        matches += list(_KIND_DOING.finditer(question))
        # A count alone does not narrow a generic kind ("which three mechanisms" may be described,
        # not named).
        matches += [
            m
            for m in _GENERIC_KIND.finditer(question)
            if not all(w.isdigit() or w in _NUMBER_WORDS for w in m.group(1).lower().split())
        ]
        matches += list(_COMPARED_KIND.finditer(question))
    for match in matches:
        # Modifiers may be coordinated ("which vision and audio datasets").
        between = [w for w in match.group(1).lower().split() if w not in ("and", "or")]
        if not any(w in _PHRASE_END or w in _DETERMINERS or w in ASKING_WORDS for w in between):
            kinds.append((match.group(1).strip(), match.group(2)))
    return kinds


# Words that say how many or which sort, not which one ("datasets such as several ...").
_NOT_AN_INSTANCE = frozenset(
    """several various many multiple diverse different other others both all some any each
    numerous standard popular common existing new our their its these those the a an""".split()
)


# First parts of compounds that count or size a thing ("the two-stage method"), not name it.
_COUNTING = (
    "one|two|three|four|five|six|seven|eight|nine|ten|single|dual|double|triple|multi|many|few|"
    "first|second|third|last|high|low|large|small|full|half|end|so"
)


def states_instance(sentence: str, kind: str) -> bool:
    """Whether `sentence` says in so many words which thing of `kind` is meant, named or not:
    "X as a/the (base) KIND" ("the soft actor-critic as a base algorithm"), "KIND such as X",
    "KIND including X", "KIND, namely X" (the usual phrasings of "X is a KIND"), "the X-Y KIND"
    (a compound naming it: "the actor-critic algorithm"); not "KIND such as several ..." nor
    "the two-stage KIND"."""
    kinds = "|".join(re.escape(k) for k in sorted(kind_words(kind), key=len, reverse=True))
    if not kinds:
        return False
    kind_pattern = rf"(?:{kinds})(?:e?s)?"
    patterns = (
        # "X as a base KIND": X is the word right before "as"
        rf"([\w-]+)\s+as\s+(?:a|an|the|our|its|their)\s+(?:[\w-]+\s+){{0,2}}?{kind_pattern}\b",
        rf"\b{kind_pattern}\s*,?\s+(?:such\s+as|including|like|namely|e\.g\.,?)\s+([\w-]+)",
        # "the actor-critic algorithm": a compound right before the kind names a known one
        rf"\bthe\s+((?!(?:{_COUNTING})-)[A-Za-z]+(?:-[A-Za-z]+)+)\s+{kind_pattern}\b",
    )
    own = kind_words(kind)

    def listed_kind(after: str) -> bool:
        """Whether the listed things are of another kind: "benchmarks including sorting and
        tiling tasks" lists tasks, not benchmarks."""
        clause = re.split(r"[,;:.()]", after, maxsplit=1)[0]
        return any(
            w in ANSWER_KINDS and w not in own and w.rstrip("s") not in own
            for w in clause.lower().split()
        )

    words = [
        found.group(1).lower()
        for i, pattern in enumerate(patterns)
        for found in re.finditer(pattern, sentence, re.IGNORECASE)
        if i != 1 or not listed_kind(sentence[found.end() :])
    ]
    return any(w not in _NOT_AN_INSTANCE | FUNCTION_WORDS and not w.isdigit() for w in words)


# Where a name stands to name a thing of a kind: at most INSTANCE_BEFORE words before a word
# for the kind ("the GSM8K benchmark", "RTX3060 and A100 GPUs"; not "Llama-70B inference over 8
# GPUs"), or at most INSTANCE_AFTER words after it, introduced ("benchmarks like RULER, ...",
# "datasets (QZR-1, ...)").
INSTANCE_BEFORE = 3
INSTANCE_AFTER = 8
_INTRODUCING = re.compile(r"\b(?:like|such as|including|e\.g\.|namely|from)\b|[(:]", re.I)


def names_an_instance(
    sentence: str, kind: str, asked: str, title: str, abstract: str, weights: TermWeights
) -> bool:
    """Whether `sentence` of a paper (`title`, `abstract`) names a thing of `kind` that the
    question (`asked`) does not name: in so many words (see `states_instance`), or by a name
    written where it names one (see INSTANCE_BEFORE), not the paper's own method, a short form
    it defines, a word of its title, nor (for data) a method it is compared with."""
    if states_instance(sentence, kind):
        return True
    short = defined_abbreviations(abstract, any_case=True)
    own_words = " ".join([title, *short.values()]).lower()
    names = instance_names(sentence, asked, short, own_words, {method_name(abstract)} - {""})
    names = [n for n in names if n.lower().rstrip("s") not in kind_words(kind)]
    if kind.lower() in DATA_KINDS:
        names = [n for n in names if n not in compared_names(sentence)]
    return bool(names) and named_near(sentence, names, kind, weights)


def named_near(sentence: str, names: Sequence[str], kind: str, weights: TermWeights) -> bool:
    """Whether one of `names` stands where it names a thing of `kind` in `sentence` (see
    INSTANCE_BEFORE and INSTANCE_AFTER)."""
    kind_terms = weights.terms(" ".join(kind_words(kind)))
    spans = [(m.start(), m.end(), m.group()) for m in re.finditer(r"[^\s,;]+", sentence)]
    kinds = [i for i, (_, _, w) in enumerate(spans) if weights.terms(w) & kind_terms]
    named = [
        i for i, (_, _, w) in enumerate(spans) if any(w.strip(".()").startswith(n) for n in names)
    ]
    for k in kinds:
        for i in named:
            if 0 < k - i <= INSTANCE_BEFORE:
                return True
            between = sentence[spans[k][1] : spans[i][0]]
            if 0 < i - k <= INSTANCE_AFTER and _INTRODUCING.search(between):
                return True
    return False


# Where a sentence names the methods a paper is compared with: after a word of comparison, up to
# the end of the clause ("faster than Llama- and Mamba-based LLMs", "outperforms FooNet and
# BarNet on ..."), and before "-based" / "-style" (an architecture a model is built on).
_COMPARISON = re.compile(
    r"\b(?:compared\s+(?:to|with)|than|against|versus|vs\.?|outperform\w*|surpass\w*|beat\w*|"
    r"over)\s+(?P<span>[^,;:.]*?)(?=\s+(?:on|in|across|at|for|by|while|when|with)\b|[,;:.]|$)",
    re.IGNORECASE,
)
_BUILT_ON = re.compile(r"([\w.]+)-?(?=(?:\s+(?:and|or)\s+[\w.]+-)?(?:based|style|like)\b)")


def compared_names(sentence: str) -> set[str]:
    """The names a sentence writes as what it is compared with or built on."""
    spans = [m.group("span") for m in _COMPARISON.finditer(sentence)]
    found = {n for span in spans for n in query_names(span)}
    found |= {name_base(n) for n in found}
    found |= {m.group(1) for m in _BUILT_ON.finditer(sentence)}
    return found


def reported_for(name: str, sentence: str) -> bool:
    """Whether `sentence` reports a value for `name` the way results are listed, the value in
    parentheses right after the name ("FooSet (70.61%)", "FooSet (0.82)"): a measure asked of
    that name is stated even where the sentence calls it "performance"."""
    return bool(
        re.search(
            rf"(?<![\w-]){re.escape(name)}\s*\(\s*\d+(?:\.\d+\s*\\?%|\.\d+|\s*\\?%)",
            sentence,
        )
    )


def instance_names(
    sentence: str,
    asked: str,
    short: Collection[str] = (),
    own_words: str = "",
    own_names: Collection[str] = (),
) -> list[str]:
    """The names `sentence` writes that could name an instance of a kind ("CIFAR-10", "GPT-4"):
    not written in `asked` (the question and its subject's names), not a short form its
    abstract defines (`short`: "graph neural networks (GNNs)" stands for words), not a word of
    `own_words` (the papers' titles, the long forms) nor one of `own_names` (the methods the
    papers introduce), not a word of a spelled-out term ("Optical Character Recognition (OCR)")
    nor an adjective made from a name ("Hessian")."""
    asked = asked.lower()
    spelled = {w for run in _TITLE_CASE_RUN.findall(sentence) for w in run.split()}

    def compound_of_short_form(name: str) -> bool:
        """ "PDE-solving", "LLM-based": a defined short form and a word make a modifier."""
        head, _, tail = name.rpartition("-")
        return bool(head) and head.rstrip("s") in short and len(tail) >= 4 and tail.islower()

    def cited_author(name: str) -> bool:
        """ "Chhabra et al. 2024": an author of cited work, not a name of a thing."""
        return bool(re.search(rf"(?<!\w){re.escape(name)}\s+et\s+al\b", sentence))

    def opening_capital(name: str) -> bool:
        """ "Pre-trained models are ...": a word capitalised only because it opens the
        sentence."""
        return sentence.lstrip().startswith(name) and name[1:].replace("-", "").islower()

    return [
        n
        for n in dict.fromkeys(
            name_base(n) for n in query_names(without_math(sentence)) if not opening_capital(n)
        )
        if n.lower().rstrip("s") not in asked
        and _compact(n) not in _compact(asked)
        and n.rstrip("s") not in short
        and n not in short
        and n.lower() not in own_words
        and n not in own_names
        and not _NAME_ADJECTIVE.fullmatch(n)
        and n not in spelled
        and not compound_of_short_form(n)
        and not cited_author(n)
    ]


def subject_terms(names: Sequence[str], weights: TermWeights) -> set[str]:
    """Terms of the paper names a question uses (its subject, e.g. a method name)."""
    return set().union(*(weights.terms(n) for n in names))


def coverage(
    question: str, text: str, weights: TermWeights, subject_names: Sequence[str] = ()
) -> float:
    """IDF-weighted share of the question's topic terms (its subject's name and the words that
    only name the kind of answer aside) that `text` holds (1.0 for a question without such
    terms)."""
    relating = " ".join(w for w in _WORD.findall(question) if w.lower() in RELATING_WORDS)
    terms = topic_terms(question, weights) - subject_terms(subject_names, weights)
    terms -= weights.terms(relating) if relating else set()
    text_terms = weights.terms(text)
    total = sum(weights.idf(t) for t in terms)
    return sum(weights.idf(t) for t in terms if t in text_terms) / total if total else 1.0


def _stated_share(wanted: set[str], found: set[str], weights: TermWeights) -> float | None:
    """IDF-weighted share of `wanted` terms among `found` (None when nothing is wanted)."""
    total = sum(weights.idf(t) for t in wanted)
    return sum(weights.idf(t) for t in wanted & found) / total if total else None


def _named_instance_of(phrase: str, text: str, question: str) -> bool:
    """Whether `text` names an instance of the asked `phrase`'s head noun with a name the
    question does not write: a capitalised word inside a sentence right before the head ("which
    combinatorial dimension": "finite Littlestone dimension"). The name narrows the kind as the
    phrase's other words do."""
    words = _WORD.findall(phrase)
    if len(words) < 2:
        return False
    head = re.escape(words[-1].rstrip("s"))
    pattern = rf"(?<=[a-z0-9,;(] )([A-Z][A-Za-z0-9-]*)\s+(?i:{head}s?)\b"
    asked = {w.lower() for w in _WORD.findall(question)}
    return any(m.group(1).lower() not in asked for m in re.finditer(pattern, text))


def _phrase_stated(wanted: set[str], found: set[str], weights: TermWeights) -> bool:
    """Whether `found` terms state an asked-for phrase: enough of its weight, or all its words
    but one."""
    share = _stated_share(wanted, found, weights)
    return share is None or share >= PHRASE_COVERAGE or _all_but_one(wanted, found)


def _all_but_one(asked: set[str], found: set[str]) -> bool:
    """A phrase of three or more terms with one missing still counts (the last word of a
    longer phrase is often the verb that follows it)."""
    return len(asked) >= PHRASE_WORDS and len(asked - found) <= 1


def _mentions(name: str, text: str) -> bool:
    """Whether `text` names `name` (a plural -s aside; a hyphenated name may be written with
    spaces or other dashes between its parts, in order: "Mamba 2" for "Mamba-2", never "Mamba"
    and a "2" elsewhere)."""
    variants = {name, name.rstrip("s")} if len(name) > 3 else {name}
    if any(re.search(rf"(?<![\w]){re.escape(v)}", text, re.IGNORECASE) for v in variants):
        return True
    compact = _compact(name)  # written with or without its hyphens ("Data-2" / "data2")
    if compact != name.lower() and compact in _compact(text):
        return True
    parts = [p for p in name.split("-") if p]
    joined = r"[\s\u2010-\u2015-]+".join(re.escape(p) for p in parts)
    return len(parts) > 1 and bool(re.search(rf"(?<![\w]){joined}(?![\w])", text, re.IGNORECASE))


def _compact(text: str) -> str:
    """`text` lowercased, without hyphens and spaces."""
    return re.sub(r"[-\s]+", "", text.lower())


def unmentioned_name(question: str, retrieved: str) -> str | None:
    """The first name `question` uses that `retrieved` (the retrieved papers' text) never
    mentions, if any."""
    typed = ""  # the text as names are typed ("$\\mu$FooNet" -> "muFooNet"), made when needed
    for name in dict.fromkeys(name_base(n) for n in query_names(question)):
        if _NAME_ADJECTIVE.fullmatch(name):
            continue  # "a Euclidean bound" describes; it names nothing the papers must write
        # A short form may be spelled out ("GNNs": "graph neural networks", "RL": "reinforcement
        # learning"). Two letters spell some pair of adjacent words in many texts, but the
        # two-letter names questions use are field terms (RL, KV, DP), not made-up names.
        # A word hyphenated to a short form is written out too ("local-DP": "local
        # differential privacy").
        spelled = spelled_out(name, retrieved) or qualified_spelled_out(name, retrieved)
        if _mentions(name, retrieved) or spelled:
            continue
        typed = typed or as_typed(retrieved)
        if not _mentions(name, typed):
            return name
    return None


def check_answerable(
    question: str,
    passages: Sequence[ContextPassage],
    weights: TermWeights,
    *,
    min_coverage: float,
    subject_names: Sequence[str] = (),
    abstracts: Mapping[str, str] | None = None,
    subject_papers: Sequence[str] = (),
    asked: str | None = None,
    near: NearWords | None = None,
    followup: bool = False,
) -> Answerability:
    """Whether the selected passages plausibly contain the answer (see module doc).
    `subject_names` are the names in the question that name a paper of the collection;
    `abstracts` (paper id -> text) lets the checks read the passages' whole abstracts;
    `subject_papers` are the papers those names name: a detail asked about a named paper must
    be stated by that paper, not by another one. `asked` is the question as the user wrote it
    when `question` is a standalone query that carries earlier turns: names, numbers and the
    asked-for phrase come from it (those of earlier turns were answered already). `near`
    finds the asked words that the text states in other words (see `NearWords`). A `followup`
    leans on the paper under discussion: its words are not checked against the papers' words,
    only the details it asks for are."""
    if not passages:
        return Answerability(False, 0.0, "no passages")
    question = without_venues(question)
    current = without_venues(asked) if asked is not None else question
    # Names and asked-for details are looked up in everything retrieved, not only in the
    # sentences selected for the context; each text is split into sentences on its own (an
    # abstract's last words never run into the next one's first sentence).
    parts = [
        *(f"{p.title} {p.text}" for p in passages),
        *(x.text for p in passages for x in p.hit.passages),
        *(abstracts or {}).values(),
    ]
    retrieved = " ".join(parts)

    name = unmentioned_name(current, retrieved)
    if name is not None:
        return Answerability(False, 0.0, f"the papers never mention {name}")
    for number in _NUMBER_IN_QUESTION.findall(current):
        if len(number) >= 2 and number not in retrieved:
            return Answerability(False, 0.0, f"the papers never mention {number}")
    subject_parts = [t for t in ((abstracts or {}).get(pid, "") for pid in subject_papers) if t]
    subject_text = " ".join(subject_parts)
    # Code asked of a named paper is found in that paper's abstract, or nowhere.
    if _CODE_QUESTION.search(question) and _CODE_EVIDENCE.search(subject_text or retrieved):
        return Answerability(True, 1.0, "code link found")
    # Only a sentence that asks can ask for code ("Both write code. Which dataset ships with X?"
    # asks for a dataset).
    if subject_text and _CODE_REQUEST.search(" ".join(asking_parts(current))):
        name = subject_names[0] if len(subject_names) == 1 else "these papers"
        return Answerability(False, 0.0, f"the abstract of {name} gives no link to code")
    # The words of a name the question writes are no evidence; a follow-up ("which errors do they
    # bound") asks in its own words, even where the title of the paper an earlier turn named uses
    # them too.
    subject = subject_terms([n for n in subject_names if _mentions(n, current)], weights)
    retrieved_terms = weights.terms(retrieved)
    stated_terms = weights.terms(subject_text) if subject_text else retrieved_terms
    where = (
        f"the abstract of {subject_names[0]} does"
        if len(subject_names) == 1 and subject_text
        else "the papers do"
    )
    where_text = subject_text or retrieved

    short = defined_abbreviations(where_text)  # "sparse autoencoders (SAEs)": SAEs says both

    @cache
    def sentences() -> list[str]:
        """The sentences of the text a detail must be stated in (split once, when needed)."""
        return [t[x.start : x.end] for t in subject_parts or parts for x in split_sentences(t)]

    def stated(
        phrase: str, wanted: set[str], found: set[str], text: str, bar: float | None = None
    ) -> bool:
        """Whether `text` (whose terms are `found`) states the asked `phrase`; a word it puts
        differently (big/large, speed/fast) counts."""
        for family in _CHANGE_WORDS:  # "gains" are stated where "improvement" is
            change = weights.terms(family)
            if found & change:
                found = found | change
        if _phrase_stated(wanted, found, weights):
            return True
        if _named_instance_of(phrase, text, question):
            return True
        if _YEAR_ASKED.search(phrase) and _YEAR.search(text):  # "in which year": "(2010)"
            return True
        missing = [x for x in _WORD.findall(phrase) if weights.terms(x) & (wanted - found)]
        # A short form the text spells out ("LMs" for "language models") is stated, and so is
        # a phrase the text writes as a short form ("question-answer pairs" / "Q&As").
        found = found | {t for x in missing if spelled_out(x, text) for t in weights.terms(x)}
        found = found | weights.terms(" ".join(abbreviated(_WORD.findall(phrase), text)))
        if near is not None:
            near_ones = near(missing, text) if bar is None else near(missing, text, bar)
            found = found | set().union(*(weights.terms(x) for x in near_ones))
        return _phrase_stated(wanted, found, weights)

    @cache
    def own() -> tuple[set[str], str, set[str]]:
        """What the papers call themselves, read once and only when a named kind is asked: the
        methods their abstracts introduce, the words of their titles and of the long forms the
        abstract defines (not names of an instance: "Small Language Models (SLMs)"), and their
        titles' terms (the papers' topic)."""
        introduced = {method_name(t) for t in (abstracts or {}).values()} - {""}
        words = " ".join([*(p.title for p in passages), *short.values()]).lower()
        # The topic is the named paper's when there is one, not every retrieved paper's.
        topical = [p for p in passages if p.paper_id in subject_papers] if subject_text else []
        return introduced, words, weights.terms(" ".join(p.title for p in topical or passages))

    @cache
    def own_sentences() -> list[str]:
        """The sentences of the subject's abstract, else of the retrieved papers' abstracts
        (each split on its own, so that no title runs into a sentence)."""
        # Without a named subject, the paper the question describes is the one retrieved first.
        papers = list(subject_papers) if subject_text else [p.paper_id for p in passages][:1]
        texts = [(abstracts or {}).get(pid, "") for pid in dict.fromkeys(papers)]
        texts = [t for t in texts if t] or [p.text for p in passages]
        return [t[x.start : x.end] for t in texts for x in split_sentences(t)]

    def names_one(sentence: str, modifiers: str, kind: str, part: str) -> bool:
        """Whether `sentence` writes a name that `part` of the question does not (nor the name
        of its subject, nor a short form the abstract defines, nor a paper's own name), next to
        a word for a named kind or for experiments, or to one of the `modifiers` of the asked
        kind ("OCR" in "which OCR datasets")."""
        introduced, own_words, title_terms = own()
        new = instance_names(
            sentence, " ".join([part, *subject_names]), short, own_words, introduced
        )
        # The kind's own word is no instance of it ("a single GPU" for "which graphics card").
        new = [n for n in new if n.lower().rstrip("s") not in kind_words(kind)]
        if kind.lower() in DATA_KINDS:  # a method compared against is no data it ran on
            new = [n for n in new if n not in compared_names(sentence)]
        # Where a paper names one: next to a word for the kind or for the experiments run on
        # it, to a modifier of the asked kind, or to another word of the question that is not
        # the papers' topic (their titles' words).
        beside = weights.terms(" ".join(sorted(kind_words(kind) | EXPERIMENT_WORDS)))
        terms = weights.terms(f"{sentence} {expand(sentence, short)}")
        asked = content_terms(part, weights) - subject - title_terms
        if states_instance(sentence, kind) or defines_instance(
            sentence, kind, " ".join([part, *subject_names]), introduced
        ):
            return True
        # A short form the abstract defines by all the words of the asked kind's modifiers
        # names one ("which risk measure": "conditional value at risk (CVaR)").
        narrowing = weights.terms(modifiers) - subject
        if narrowing and any(
            narrowing <= weights.terms(long)
            and re.search(rf"(?<![\w-]){re.escape(short_form)}(?![\w-])", sentence)
            for short_form, long in short.items()
        ):
            return True
        if not new:
            return False
        # A sentence that puts the kind in other words names one where a name stands by that
        # word ("model structures (QZ-Net, ZirNet)" for "which architectures"), or is that
        # word ("on the Quartzvidia Xp" for "which GPU").
        if near is not None and not terms & beside and near([kind], sentence):
            for word in dict.fromkeys(_WORD.findall(sentence)):
                if (
                    word.lower() not in FUNCTION_WORDS
                    and near([kind], word)
                    and (word in new or named_near(sentence, new, word, weights))
                ):
                    return True
        if set(kind.lower().split()) & HARDWARE_KINDS:
            # Hardware is named next to its word ("an A100 GPU"); another name in the sentence
            # names something else ("trained on a single GPU ... data from Europe").
            return named_near(sentence, new, kind, weights)
        return bool(terms & (beside | asked | narrowing))

    def counted_in_context(part: str, thing: str) -> bool:
        """Whether a sentence counts something ("five domains", "up to four steps") where it
        states what the rest of `part` says (the counted thing may be put in other words: "how
        many fields is it evaluated on" / "evaluation across five domains"): at least
        COUNT_CONTEXT_TERMS of the part's other content words, and COUNT_CONTEXT of their
        weight."""
        clause = next(
            (
                c
                for c in _CLAUSE.split(part)
                if re.search(rf"how many\s+{re.escape(thing)}", c, re.I)
            ),
            part,
        )
        rest = content_terms(_HOW_MANY.sub(" ", clause), weights) - subject
        rest -= phrase_terms(thing, weights)
        if len(rest) < COUNT_CONTEXT_TERMS:
            return False
        for sentence in sentences():
            if not _COUNT.search(sentence):
                continue
            found = weights.terms(f"{sentence} {expand(sentence, short)}")
            share = _stated_share(rest, found, weights) or 0.0
            if len(rest & found) >= COUNT_CONTEXT_TERMS and share >= COUNT_CONTEXT:
                return True
        return False

    def named_in_context(part: str, phrase: str) -> bool:
        """Whether a sentence of the paper writes a name where it states what the rest of `part`
        says: "which solver runs on the shrunk instances" is answered by "QuartzSAT then runs on
        the shrunk instances", although the sentence never says "solver" (the answer to "which
        X" is an instance of X, written by its name, as with a counted thing in
        `counted_in_context`)."""
        loose = " ".join(
            w for w in _WORD.findall(part) if w.lower() in RELATING_WORDS | ANSWER_KINDS
        )
        rest = content_terms(part, weights) - subject - phrase_terms(phrase, weights)
        rest -= weights.terms(loose) if loose else set()
        if len(rest) < COUNT_CONTEXT_TERMS:
            return False
        introduced, own_words, _ = own()
        asked_text = " ".join([part, *subject_names])
        for sentence in own_sentences():
            found = weights.terms(f"{sentence} {expand(sentence, short)}")
            share = _stated_share(rest, found, weights) or 0.0
            if len(rest & found) < COUNT_CONTEXT_TERMS or share < COUNT_CONTEXT:
                continue
            if instance_names(sentence, asked_text, short, own_words, introduced):
                return True
        return False

    def unstated(part: str) -> tuple[str, float] | None:
        """Why `part` of the question asks for a detail the papers do not state (None when it
        asks for none, or for one they state)."""
        # "What are its limitations?": a sentence must say what the paper's own work cannot do,
        # not what earlier work cannot (abstracts motivate a method by others' limits).
        if asks_own_limits(part) and not any(states_own_limit(x) for x in own_sentences()):
            return (
                f"{where} not state {'its' if where.endswith('does') else 'their'} limitations",
                0.0,
            )
        # "Which five tile sets": the count is the asker's; a paper that writes "five tile sets"
        # and never lists them gives the count, not which.
        given = given_count(part)
        if (
            given is not None
            and any(echoes_count(x, *given) for x in own_sentences())
            and not any(lists_counted(x, *given) for x in own_sentences())
        ):
            return f"{where} not say which {given[0]} {given[1]}", 0.0
        # "Which datasets": a sentence must name one, not only say "several datasets".
        named = set()
        for modifiers, kind in named_kinds(part, named_paper=bool(subject_names)):
            if not any(
                names_one(x, modifiers, kind, part) or describes_one(x, modifiers, kind)
                for x in own_sentences()
            ):
                return f"{where} not name the {kind}", 0.0
            named |= {kind.lower(), modifiers.lower(), *kind.lower().split()}
        # "How does X decide which inputs ...": the part asks how, and the clause after "which"
        # describes what X does; it asks for no phrase of its own.
        phrases = [] if _ASKS_HOW.match(part) else asked_phrases(part, subject_names)
        # "How many fields ... evaluated": "evaluated on five domains" (checked once per thing).
        in_context = {t for t in counted_things(part, subject_names) if counted_in_context(part, t)}
        # "What accuracy on FooSet": "FooSet (70.6%)" reports the measure without its word.
        measured = measured_things(part, subject_names)
        others = [n for n in query_names(part) if n not in subject_names]
        reported = (
            set(measured)
            if measured and any(reported_for(n, x) for n in others for x in sentences())
            else set()
        )
        # "How many points": points of a measure, stated as a percentage or in points.
        points = {
            t for t in [*phrases, *counted_things(part, subject_names)] if _POINTS.fullmatch(t)
        }
        if points and any(_IN_POINTS.search(x) for x in sentences()):
            reported |= points
        for phrase in phrases:
            if phrase in in_context or phrase in reported:
                continue
            if phrase.lower().split()[-1] in named or phrase.lower() in named:
                # A sentence names one: "which city" is answered by "Lyon", and "which OCR
                # datasets" by a name written next to its experiments (a name does not say
                # what kind of data it holds).
                continue
            wanted = phrase_terms(phrase, weights) - subject
            if not stated(phrase, wanted, stated_terms, where_text) and not named_in_context(
                part, phrase
            ):
                share = _stated_share(wanted, stated_terms, weights) or 0.0
                return f"{where} not state {phrase!r}", share
        # "How many X", "what accuracy": a sentence must state a number together with X (a
        # measure's value is written in digits or as a multiple, not as "four"; the digit of
        # "top-5" is part of the name of the measure).
        counted = [(t, _DIGIT, "how many") for t in counted_things(part, subject_names)]
        counted += [(t, _MEASURE_VALUE, "the") for t in measured]
        for thing, value, asking in counted:
            wanted = phrase_terms(thing, weights) - subject
            if (asking == "how many" and thing in in_context) or thing in reported:
                continue
            if wanted and not any(
                value.search(re.sub(re.escape(thing), " ", x, flags=re.IGNORECASE))
                and (
                    stated(
                        thing,
                        wanted,
                        weights.terms(f"{x} {expand(x, short)}"),
                        x,
                        NEAR_MEASURE,
                    )
                    # The words a number counts may put the counted thing loosely ("8 custom
                    # chips" for "how many accelerators"): they say how many of it there are.
                    or (
                        asking == "how many"
                        and any(
                            stated(thing, wanted, weights.terms(run), run)
                            for run in _COUNTED.findall(x)
                        )
                    )
                )
                for x in sentences()
            ):
                return f"{where} not state {asking} {thing}", 0.0
        return None

    # Every part of the question must be answerable: a detail asked for and not stated is
    # refused even next to one that is (answering the other parts instead, as if they were all
    # that was asked, refused 84 fewer of 272 not-stated tune questions). The parts that are
    # stated are reported, for the refusal to say what the papers do state about them.
    asked_parts = asking_parts(current) or [current]
    missing = [(part, unstated(part)) for part in asked_parts]
    reasons = [why for _, why in missing if why is not None]
    if reasons:
        answerable = [part for part, why in missing if why is None]
        answered = with_parts(current, answerable) if answerable else ""
        return Answerability(False, reasons[0][1], reasons[0][0], answered)
    terms = content_terms(question, weights) - subject
    covered = coverage(question, retrieved, weights, subject_names)
    # A follow-up ("How does it pick its inputs?") cannot be judged by word coverage: it leans
    # on the paper under discussion, which may put it in other words; so can a question with
    # one content word ("What does it improve?"), and one that names its paper (the gates above
    # judge what it asks of that paper; on bench/qa/tune*.jsonl this refused one answerable
    # question, paraphrased, and no unanswerable one). A question that describes one paper in
    # its own words is judged by coverage too unless a paper is close to it in meaning (see
    # DESCRIBED_MEANING): sparing it whenever one paper stands out among those retrieved (see
    # `stands_out` in rag/answer/context.py) answered two paraphrased tune questions, but on
    # the held-out test split it answered a question about a topic no paper covers.
    vague = followup or (asked is not None and len(content_terms(current, weights) - subject) <= 1)
    described = max(p.hit.dense_similarity for p in passages) >= DESCRIBED_MEANING
    if covered < min_coverage and not vague and not subject_text and not described:
        return Answerability(False, covered, "the papers hold too little of what is asked")
    if asks_amount(current):
        # Any sentence of the retrieved papers' abstracts, not only those picked for the context.
        # A sentence that uses a short form its abstract defines states the long form too.
        # An amount asked of a named paper must be stated by that paper.
        if subject_text:
            candidates, papers = [], list(subject_papers)
        else:
            candidates = [(x.text, short) for p in passages for x in p.sentences]
            papers = [*(p.paper_id for p in passages), *(abstracts or {})]
        for paper_id in dict.fromkeys(papers):
            text = (abstracts or {}).get(paper_id, "")
            defined = defined_abbreviations(text)
            candidates += [(text[x.start : x.end], defined) for x in split_sentences(text)]
        for sentence, defined in candidates:
            if states_amount(sentence) and (
                weights.terms(f"{sentence} {expand(sentence, defined)}") & terms
            ):
                return Answerability(True, covered, "quantity found")
        if subject_text and near is not None:
            # The named paper may state the amount in other words ("how much faster": "68.7%
            # speed-ups").
            asked_words = [w for w in _WORD.findall(current) if weights.terms(w) & terms]
            for sentence, _ in candidates:
                if states_amount(sentence) and asked_words and near(asked_words, sentence):
                    return Answerability(True, covered, "quantity found")
        return Answerability(False, covered, "no passage states the asked-for amount")
    return Answerability(True, covered, "covered")


# Acclaim no abstract or metadata field records: awards, citations, rankings of papers ("the best
# paper", "the most influential papers", "award-winning work"). Only the review outcome (oral,
# spotlight, poster) is known.
_ACCLAIM = re.compile(
    r"\b(?:best|top|greatest|most\s+(?:influential|cited|popular|important|impactful|"
    r"significant|famous|notable))\s+(?:\w+\s+)?(?:papers?|works?|articles?|publications?)\b"
    r"|\b(?:won|wins?|received?|receives|got)\s+(?:an?\s+|the\s+)?(?:\w+\s+){0,2}awards?\b"
    r"|\baward-winning\b|\bcitation\s+counts?\b|\bhow\s+many\s+citations\b|\bmost\s+cited\b",
    re.IGNORECASE,
)
ACCLAIM_REASON = (
    "abstracts and the conference's metadata record no awards, citations or rankings of papers "
    "(only oral, spotlight or poster)"
)


def asks_for_acclaim(question: str) -> bool:
    """Whether the question asks which papers are acclaimed (see _ACCLAIM)."""
    return bool(_ACCLAIM.search(question))


# Which datasets, benchmarks, models or methods the collection uses most: no field records them
# per paper, and names in abstracts do not say which is which.
_USAGE_RANKING = re.compile(
    r"\b(?:most|more)\s+(?:common(?:ly\s+used)?|popular|frequent(?:ly\s+used)?|used|widely\s+used)"
    r"\s+(?:\w+\s+)?(?:datasets?|benchmarks?|models?|methods?|baselines?|architectures?|"
    r"optimizers?|metrics?|libraries|frameworks?|tools?)\b"
    r"|\b(?:datasets?|benchmarks?|models?|methods?|baselines?|architectures?|metrics?)\s+"
    r"(?:are|is)\s+(?:(?:the\s+)?(?:most|more)\s+(?:common|popular|frequent|used|widely\s+used)|"
    r"used\s+(?:the\s+)?most)\b",
    re.IGNORECASE,
)
USAGE_REASON = (
    "no field records which datasets, models or methods each paper uses, so they cannot be "
    'ranked; ask how many papers use a given one ("How many papers use ImageNet?")'
)


def affiliation_reason(source: str) -> str:
    """Why papers "from" an institution cannot be listed."""
    return (
        f"the collection records its papers' authors, not their affiliations, and no author is "
        f"named {source}"
    )


# Where papers come from, asked of the collection: "Which university has the most papers?",
# "What companies publish at ICML?", "How many papers come from each country?", "the authors'
# affiliations". Only the authors' names are recorded.
_INSTITUTION = (
    r"(?:universit(?:y|ies)|institut(?:e|es|ion|ions)|compan(?:y|ies)|labs?|laborator(?:y|ies)|"
    r"countr(?:y|ies)|organi[sz]ations?|affiliations?|schools?|colleges?)"
)
_INSTITUTIONS = re.compile(
    rf"\b(?:which|what|whose)\s+(?:\w+\s+)?{_INSTITUTION}\b[^?.!]*?"
    r"\b(?:most|more|papers?|publications?|publish\w*|contribut\w*|represented|submitted|"
    r"authors?)\b"
    rf"|\b(?:papers?|publications?|authors?)\s+(?:\w+\s+){{0,2}}?(?:from|by|per|of)\s+"
    rf"(?:each|which|what|every|different)\s+{_INSTITUTION}\b"
    r"|\b(?:authors'?|their|its)\s+affiliations?\b",
    re.IGNORECASE,
)
INSTITUTION_REASON = (
    "the collection records its papers' authors by name, not their affiliations or countries"
)


def asks_institutions(question: str) -> bool:
    """Whether the question asks where the collection's papers come from (see _INSTITUTIONS)."""
    return bool(_INSTITUTIONS.search(question))


def asks_usage_ranking(question: str) -> bool:
    """Whether the question asks which datasets, models or methods are used most."""
    return bool(_USAGE_RANKING.search(question))


def asks_for_code(question: str) -> bool:
    """Whether the question asks about code (answered by a link in the abstract)."""
    return bool(_CODE_QUESTION.search(question))


def asks_amount(question: str) -> bool:
    """Whether the question asks for an amount ("how much", "by how many", "what share")."""
    return bool(_QUANTITY.search(without_chosen_amounts(question)))


# "decides how many crops to keep", "learns how much to prune", "what caps how many tokens it
# reads": how an amount is chosen or bounded (a clause after a verb of choosing or limiting),
# not the amount itself.
_CHOSEN_AMOUNT = re.compile(
    r"\b((?:decid|determin|choos|chose|select|control|adjust|learn|limit|restrict|constrain|"
    r"cap|bound|govern)\w*)\s+how\s+(?:many|much)\b",
    re.IGNORECASE,
)


def without_chosen_amounts(question: str) -> str:
    """`question` without the "how many" / "how much" of amounts it asks how are chosen."""
    return _CHOSEN_AMOUNT.sub(r"\1", question)


# "What are its limitations?", "What are the weaknesses of FooNet?", "Where does it fail?": the
# asked paper's own limits.
_LIMIT_NOUN = (
    r"(?i:limitations?|weakness(?:es)?|drawbacks?|shortcomings?|downsides?|"
    r"failure\s+(?:modes?|cases?))"
)
_OWN_LIMITS = re.compile(
    r"\b(?:(?i:its|their|the\s+paper'?s|the\s+method'?s)|[A-Z][\w-]*'s)\s+"
    rf"(?:(?i:main|key|known)\s+)?{_LIMIT_NOUN}\b"
    rf"|\b{_LIMIT_NOUN}\s+(?i:of)\s+"
    r"(?:(?i:it|them|this\s+(?:paper|method|work|approach))|[A-Z][\w-]*)\s*[?.]?\s*$"
    r"|\b(?i:where\s+(?:does|do)\s+(?:it|they)\s+fail)\b",
)
# A sentence stating a limit: what cannot be done or is left open.
_LIMIT = re.compile(
    r"\b(?:limitations?|limited\s+to|restricted\s+to|fails?\s+(?:to|on|when)|cannot|can\s*not|"
    r"unable|does\s+not\s+(?:scale|apply|hold|handle|generali[sz]e)|only\s+(?:applies|works|holds)|"
    r"future\s+work|remains?\s+(?:an\s+)?open|drawbacks?|weakness(?:es)?|shortcomings?)\b",
    re.IGNORECASE,
)
# ... of earlier work: "existing methods cannot ...", "prior approaches are limited to ...".
_OTHERS_LIMIT = re.compile(
    r"\b(?:existing|previous|prior|current|conventional|traditional|standard|earlier|most|many|"
    r"these|such)\s+(?:[\w-]+\s+){0,2}(?:methods?|approaches|works?|models?|techniques?|systems?|"
    r"algorithms?|solutions?|studies|frameworks?)\b",
    re.IGNORECASE,
)


def asks_own_limits(question: str) -> bool:
    """Whether the question asks for the limitations of the paper it is about."""
    return bool(_OWN_LIMITS.search(question))


def states_own_limit(sentence: str) -> bool:
    """Whether a sentence states a limit of the paper's own work (not of earlier work)."""
    return bool(_LIMIT.search(sentence)) and not _OTHERS_LIMIT.search(sentence)


def is_model_refusal(text: str) -> bool:
    """Whether a model's answer declines: its first sentence says the passages do not answer.
    A refusal phrase later in an answer qualifies what came before; it is not a refusal."""
    spans = split_sentences(text.strip())
    first = text.strip()[spans[0].start : spans[0].end] if spans else text
    return bool(_MODEL_REFUSAL.search(first))


# A word used by this share of the papers or more does not say which paper or topic is meant
# ("data", "perform"): in the dev and tune questions that stand alone, the rarest content word of
# every question is used by at most 14% of all papers.
COMMON_SHARE = 0.25
# A first question whose subject is a pronoun describes that subject when at least
# DESCRIBING_TERMS of its words are each used by at most DESCRIBING_SHARE of the papers. In ICML
# 2025, questions that say nothing of what "it" is ("How accurate is it on image
# classification?", "How much faster is it?") have at most one such word ("faster": 4%); a
# description of what a paper does has several.
DESCRIBING_SHARE = 0.05
DESCRIBING_TERMS = 3
SMALL_TALK_REASON = (
    "a greeting or thanks asks nothing about the papers: ask about a paper, method or topic"
)
NO_SUBJECT_REASON = (
    "the question does not say which paper or topic it is about, and there is no earlier answer "
    "for it to refer to: name the paper, method or topic"
)


# English comparatives and superlatives of quality, size and speed: on their own they name no
# subject, only a way of choosing among things.
_COMPARATIVES = (
    "better best worse worst faster fastest slower slowest larger largest smaller smallest "
    "bigger biggest higher highest lower lowest stronger strongest weaker weakest more most "
    "less least cheaper cheapest easier easiest harder hardest newer newest older oldest"
).split()
_QUANTIFIERS = frozenset("more most less least".split())
# Words that place a thing after or before another one ("a second loss", "an earlier method").
_POSITIONS = frozenset(
    "second third fourth fifth sixth seventh eighth ninth tenth earlier later".split()
)


# A question whose subject is a pronoun, right after its question word and the asked noun
# ("What problem does it solve?", "How much faster are they?"): nothing in it says what "it" is.
_PRONOUN_SUBJECT = re.compile(
    r"^\s*(?:what|which|how|why|where|when|who)\b(?:\s+[\w-]+){0,3}?\s+(?:does|do|did|is|are|"
    r"was|were|can|could|will|would|has|have|had)\s+(?:it|they|this|these)\b",
    re.IGNORECASE,
)


def names_no_subject(
    question: str, weights: TermWeights, document_frequency: Callable[[str], int], n_papers: int
) -> bool:
    """Whether a question, asked without earlier turns, has nothing to be about: no content word
    at all ("What does it do?", "Summarize them"), a pronoun for its subject ("What problem
    does it solve?"), or only words too common to pick anything out while it refers back to
    something unsaid ("What data does it use?")."""
    terms = topic_terms(question, weights)
    if not terms:
        return True
    if _PRONOUN_SUBJECT.search(question):
        # "What problem does it solve?" says nothing of what "it" is; "What does it use to
        # re-base a task vector when the pretrained transformer changes?" describes it by what
        # it does, in several words few papers use.
        rare = [t for t in terms if document_frequency(t) <= DESCRIBING_SHARE * n_papers]
        return len(rare) < DESCRIBING_TERMS
    # "Which is better?": a comparative or superlative alone picks among things unsaid.
    if terms <= weights.terms(" ".join(_COMPARATIVES)):
        return True
    if not refers_back(question):
        return False
    return all(document_frequency(t) >= COMMON_SHARE * n_papers for t in terms)
