"""Recognise papers named in text by their short names (e.g. 'D-Fusion', 'LEVIS', 'DreamDPO')."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from rag.text.abbreviations import defined_abbreviations, letters_in_order
from rag.text.latex import as_typed
from rag.text.questions import without_venues

_COMMON = {"the", "a", "an", "on", "of", "in", "for", "and", "to", "with", "when", "how", "why"}
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
# A hyphenated compound of capitalised words, as title case writes any compound.
_TITLE_CASED = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)+")
# A title with more capital letters than this share is written in capitals throughout.
ALL_CAPS_SHARE = 0.6
# A long form written by more abstracts than this is a field's term, not one paper's name (of
# the 240 long forms ICML 2025's introduced names spell out, 7 are written by 2-446 abstracts:
# "large language models", "Sequential Monte Carlo", "genetic algorithm", ...).
MAX_WRITERS = 3


def short_names(title: str) -> list[str]:
    """Names a paper goes by: the part of its title before ':' when it is short (one to three
    words), and method-like tokens in the title (CamelCase, acronyms, hyphenated capitals)."""
    names: list[str] = []
    head, sep, _ = title.partition(":")
    if sep and 1 <= len(head.split()) <= 3:
        names.append(head.strip())
        # The paper's name is its title's head; the acronyms after the colon are what it works
        # on ("EasyInv: Better DDIM Inversion" is not named DDIM).
        title = head
    letters = [c for c in title if c.isalpha()]
    if letters and sum(c.isupper() for c in letters) > ALL_CAPS_SHARE * len(letters):
        return names  # an all-capitals title: its words are not acronyms
    for token in re.findall(r"\b[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*\b", title):
        if token.lower() in _COMMON or len(token) < 3:
            continue
        inner_caps = sum(1 for c in token[1:] if c.isupper())
        if _TITLE_CASED.fullmatch(token):
            continue  # "Post-Training" in a title: capitals of title case, not of a name
        if inner_caps >= 1 and token[0].isupper() and token not in names:
            names.append(token)
    return [n for n in names if n.isupper() or len(n) > 3 or n[0].isupper()]


class NameIndex:
    """Short names of every paper, looked up by the word sequences of a text (built once): from
    its title, and the method name its abstract introduces ("we propose Cake, ...")."""

    def __init__(
        self, papers: Mapping[str, Mapping[str, Any]], abstracts: Mapping[str, str] | None = None
    ) -> None:
        # Lowercased words of a name -> (the name's words as written, its paper), per paper.
        self._by_words: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]] = {}
        self.longest = 1
        abstracts = abstracts or {}
        # The long forms of introduced names, and every abstract (lowercased, as typed), to tell
        # whether one is the field's term (see MAX_WRITERS), read when a text uses it.
        self._long_forms: set[tuple[tuple[str, ...], str]] = set()
        typed: list[str] = []
        self._common: dict[str, bool] = {}
        for paper_id, meta in papers.items():
            # Names as users type them: "$\\mu$FooNet" is typed "muFooNet".
            names = short_names(as_typed(str(meta.get("title", ""))))
            abstract = as_typed(abstracts.get(paper_id, ""))
            typed.append(abstract.lower())
            introduced = method_name(abstract)
            if introduced and introduced not in names:
                names.append(introduced)
            # The long form the abstract spells its name out in ("Model Label Learning (MLL)")
            # names the paper too.
            long_form = defined_abbreviations(abstract).get(introduced.rstrip("s"), "")
            if len(long_form.split()) > 1 and long_form not in names:
                names.append(long_form)
                self._long_forms.add((tuple(_TOKEN.findall(long_form)), paper_id))
            for name in names:
                written = tuple(_TOKEN.findall(name))
                words = tuple(w.lower() for w in written)
                if words:
                    self._by_words.setdefault(words, []).append((written, paper_id))
                    self.longest = max(self.longest, len(words))
        self._typed = "\n".join(typed)
        self._starts = list(accumulate((len(t) + 1 for t in typed[:-1]), initial=0))

    def _named(self, words: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
        """The names written as `words` (lowercased), with their papers; without a long form
        that more than MAX_WRITERS abstracts write (a field's term the paper spells its name out
        in is not its name: "large language models (LLMs)")."""
        named = self._by_words.get(words, [])
        return [
            (written, paper_id)
            for written, paper_id in named
            if (written, paper_id) not in self._long_forms or not self._common_phrase(words)
        ]

    def _common_phrase(self, words: tuple[str, ...]) -> bool:
        phrase = " ".join(words)
        if phrase not in self._common:
            writers: set[int] = set()
            at = self._typed.find(phrase)
            while at >= 0 and len(writers) <= MAX_WRITERS:
                writers.add(bisect_right(self._starts, at))
                at = self._typed.find(phrase, at + 1)
            self._common[phrase] = len(writers) > MAX_WRITERS
        return self._common[phrase]

    def papers_named_in(self, text: str) -> list[str]:
        """Ids of papers whose short name appears in `text` as whole words, in order of mention."""
        tokens = _TOKEN.findall(as_typed(text))
        words = [w.lower() for w in tokens]
        found: list[str] = []
        for start in range(len(words)):
            for size in range(self.longest, 0, -1):
                span = tuple(tokens[start : start + size])
                # A name in capitals is named in capitals ("LEAST", not the word "Least").
                named = [
                    (w, p)
                    for w, p in self._named(tuple(words[start : start + size]))
                    if not _in_capitals(w) or w == span
                ]
                # Names that differ only in capitals ("DiMA", "DiMa") are different papers':
                # written exactly as one of them, the text names that one.
                exact = [p for w, p in named if w == span]
                for paper_id in exact or [p for _, p in named]:
                    if paper_id not in found:
                        found.append(paper_id)
        return found

    def written_names_in(self, text: str) -> dict[str, list[str]]:
        """The names of two or more words ("Covered Forest") that `text` writes exactly as
        their papers do, capitals included (in lowercase they are a topic), with those papers."""
        tokens = _TOKEN.findall(as_typed(text))
        found: dict[str, list[str]] = {}
        for start in range(len(tokens)):
            for size in range(self.longest, 1, -1):
                span = tuple(tokens[start : start + size])
                key = tuple(w.lower() for w in span)
                for written, paper_id in self._named(key):
                    if written != span:
                        continue
                    papers = found.setdefault(" ".join(written), [])
                    if paper_id not in papers:
                        papers.append(paper_id)
        return found


def _in_capitals(written: tuple[str, ...]) -> bool:
    """Whether a name is one word written in capitals ("LEAST", "FIML")."""
    return len(written) == 1 and len(written[0]) > 1 and written[0].isupper()


# Identifier-like words: CamelCase, ACRONYMS, hyphenated names, or a capitalised word that does
# not open a sentence ("How much does Cake cut ...").
_NAME = re.compile(
    r"\b(?:[A-Za-z0-9]*[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+"  # D-Fusion, PDE-Controller
    r"|[A-Za-z0-9]+(?:-[A-Za-z0-9]*[A-Z][A-Za-z0-9]*)+"  # self-LoRA
    r"|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*"  # CamelCase: DreamDPO, PhySpec
    r"|[A-Z]{2,}[A-Za-z0-9]*"  # acronyms: FIML, LEVIS
    r"|[A-Z][a-z0-9]+\d[A-Za-z0-9]*"  # Llama3
    r"|[A-Z]\d+[A-Z][A-Za-z0-9]*|\d+[A-Z]{2,}[A-Za-z0-9]*)\b"  # P2FA, 3DGS
    r"|(?<=[a-z,;:] )[A-Z][a-z]{2,}\b"  # a capitalised word inside a sentence: Cake
)


_NOT_NAMES = frozenset(
    "What Which How Why When Where Who Whom Whose Does Do Did Is Are Was Were Can Could Would "
    "Should The This That These Those And But Also Both Compare Summarize Tell Give List Show "
    "Explain Describe".split()
)


# A quoted span ('A Guide to Scaling Law Estimation'): an apostrophe inside a word
# ("Hitchhiker's") neither opens nor closes it. One of at least TITLE_WORDS words is a title (a
# quoted name is shorter: "Quantum Harmonic Nets").
TITLE_WORDS = 4
_QUOTED = re.compile(r"(?<!\w)['\"“‘](.+?)['\"”’](?!\w)")
_CAPITALISED = re.compile(r"[A-Z][a-z]{2,}")


# A short form glossed by its long form ("STAR (Skill Training with Augmented Rotation)") or the
# other way round ("Skill Training with Augmented Rotation (STAR)").
_GLOSS_AFTER = re.compile(r"\b([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\s*\(([^()]+)\)")
_GLOSS_BEFORE = re.compile(r"((?:[A-Za-z][\w-]*\s+){1,8}?)\(([A-Z][A-Za-z0-9-]*[A-Z][\w-]*)\)")


def _glosses(text: str) -> list[tuple[int, int]]:
    """The spans of long forms that spell out a short form next to them (their capitalised
    words are the short form's letters, not names)."""
    spans = []
    for match in _GLOSS_AFTER.finditer(text):
        capitals = [c.lower() for c in match.group(1) if c.isupper()]
        initials = "".join(w[0].lower() for w in re.findall(r"[A-Za-z][\w]*", match.group(2)))
        if letters_in_order(capitals, initials):
            spans.append(match.span(2))
    for match in _GLOSS_BEFORE.finditer(text):
        capitals = [c.lower() for c in match.group(2) if c.isupper()]
        words = re.findall(r"[A-Za-z][\w]*", match.group(1))
        for n in range(len(words), 0, -1):  # the shortest run of words ending before "("
            initials = "".join(w[0].lower() for w in words[-n:])
            if initials and initials[0] == capitals[0] and letters_in_order(capitals, initials):
                spans.append(match.span(1))
                break
    return spans


def query_names(query: str) -> list[str]:
    """Identifier-like words in the query (candidates for exact-name matching), not counting a
    venue with its year ("ICML 2025" names the collection, not a paper), the capitalised words
    of a quoted title ('A Guide to Scaling Law Estimation': Law is a title's word) nor those of a
    long form that spells out a short form next to it ("STAR (Skill Training with ...)")."""
    text = as_typed(without_venues(query))
    quoted = [m.span(1) for m in _QUOTED.finditer(text) if len(m.group(1).split()) >= TITLE_WORDS]
    quoted += _glosses(text)
    names = (
        m.group(0)
        for m in _NAME.finditer(text)
        if not (_CAPITALISED.fullmatch(m.group(0)) and any(a <= m.start() < b for a, b in quoted))
    )
    return list(dict.fromkeys(n for n in names if n not in _NOT_NAMES))


# The lowercase end of a descriptive compound ("CNN-driven", "Mamba-based"): a participle or an
# adjective-forming word; the compound describes something by the name before it.
_DESCRIPTIVE_END = re.compile(
    r"-(?:[a-z]{2,}(?:ed|en)|based|aware|free|like|style|type|fold|level|wise|specific|scale|"
    r"grained|centric|agnostic|friendly|native|ready|only)$"
)


def name_base(name: str) -> str:
    """The name a descriptive compound is built on ("CNN-driven" -> "CNN", "Quartz-type" ->
    "Quartz"); other names as they are."""
    return _DESCRIPTIVE_END.sub("", name)


_METHOD_NAME = r"\**(?P<name>(?=[\w.+-]*[A-Z])[A-Za-z0-9](?:[\w+-]*[\w+])?(?:\.[\w+-]*[\w+])*)\**"
_AFTER_METHOD_NAME = (
    r"(?![\w+-])(?=\s*[,:;(]|\s*\.(?:\s|$)|\s*$|\s+(?:which|that|to|for)\b|\s+[-–—]\s)"
)
_NOUNS = (
    r"(?:framework|method|approach|model|algorithm|system|technique|benchmark|dataset|pipeline|"
    r"architecture|strategy|library|tool|toolkit|paradigm|metric|network|agent|procedure)s?"
)
_NAMING = r"(?:called|named|termed|dubbed|coined|known\s+as|referred\s+to\s+as)"
# The verbs by which an abstract introduces its own method, with the space after them (a short
# form defined right after "develop" or "devise" names it too; "design" also introduces attacks
# and standard techniques).
_INTRODUCES = r"\b(?:present|propose|introduce|develop|devise)s?\s+"
_METHOD_PATTERNS = (
    # "we present X,", "we propose a novel framework, **X**,", "introduces X, a method"
    re.compile(
        r"\b(?:present|propose|introduce)s?\s+"
        rf"(?:(?:a|an|the)\s+(?:[\w-]+\s+){{0,5}}?{_NOUNS}\s*,?\s+)?"
        rf"(?:{_NAMING}\s+)?{_METHOD_NAME}{_AFTER_METHOD_NAME}",
        re.IGNORECASE,
    ),
    # "called X", "named X"
    re.compile(rf"\b{_NAMING}\s+{_METHOD_NAME}{_AFTER_METHOD_NAME}"),
    # "the proposed X significantly improves ...": the paper's own method, by its name
    re.compile(
        r"\b(?:[Tt]he|[Oo]ur)\s+proposed\s+(?P<name>(?=[\w-]*[A-Z][\w-]*[A-Z0-9])[A-Za-z][\w+-]*)\b"
    ),
    # "termed Fast Incomplete Multi-view clustering by flexible anchor Learning (FIML)"
    re.compile(rf"\b{_NAMING}\s+[^.()]{{1,160}}?\s\((?P<name>[A-Za-z0-9][\w+-]*)\)"),
    # "we propose Tilted SAM (TSAM)", "introduce a novel Quartz Feature Alignment (QFA)": a
    # capitalised name right after the verb, and the short form it goes by
    re.compile(
        rf"{_INTRODUCES}(?:(?:a|an|the)\s+)?(?:(?:novel|new|simple)\s+)?"
        r"(?:[A-Z][\w-]*\s+){1,6}\((?P<name>[A-Za-z0-9][\w+-]*)\)"
    ),
)
# "we propose quartz tiling (QZT)", "we introduce a novel form, attention-level tiling (ALT)":
# what the verb introduces, in lowercase words, and the short form the abstract defines for
# exactly those words (checked in `method_name`: "we introduce a benchmark for large language
# models (LLMs)" introduces no LLMs).
_DEFINED_AFTER_VERB = re.compile(
    rf"{_INTRODUCES}(?:(?:a|an|the)\s+)?(?:(?:novel|new|simple)\s+)?"
    r"(?:[\w-]+\s*[,:\u2013\u2014]\s*)?(?P<long>(?:[\w-]+\s+){0,5}[\w-]+)\s+"
    r"\((?P<name>[A-Za-z0-9][\w+-]*)\)",
    re.IGNORECASE,
)
# "we introduce a Continuous QZ framework": capitalised words, the last with two capitals or
# more, before the noun that says what it is; read only when no other pattern names a method
# (in that place an abstract also writes its field: "a GNN framework", "an LLM-based agent").
_NAME_BEFORE_NOUN = re.compile(
    r"\b(?:present|propose|introduce)s?\s+(?:a|an|the)\s+(?:(?:novel|new|simple)\s+)?"
    r"(?P<name>(?:[A-Z][\w-]*\s+){0,2}(?=[\w-]*[A-Z][\w-]*[A-Z])[A-Z][\w-]*)\s+"
    rf"{_NOUNS}\b"
)
# A word that describes rather than names: "LLM-based", "Zero-Cost" (title case).
_DESCRIBING = re.compile(r"[\w]+(?:-[a-z]+)+|[A-Z][a-z]+(?:-[A-Z][a-z]+)+")
_NOT_METHOD_NAMES = frozenset(
    {"a", "an", "the", "this", "that", "these", "our", "we", "it", "its", "in", "to", "two"}
)


def _words(text: str) -> str:
    """`text` lowercased, its hyphens as spaces ("learning-based" is "learning based")."""
    return " ".join(text.replace("-", " ").lower().split())


def method_name(abstract: str) -> str:
    """The method name an abstract introduces ("we propose X,", "called X", "termed ... (X)"),
    the earliest one; empty when it names none."""
    best: tuple[int, str] | None = None
    for pattern in _METHOD_PATTERNS:
        for match in pattern.finditer(abstract):
            name = match.group("name")
            if len(name) < 2 or name.lower() in _NOT_METHOD_NAMES or not re.search("[A-Z]", name):
                continue
            if best is None or match.start() < best[0]:
                best = (match.start(), name)
            break
    defined: dict[str, str] | None = None  # read only when the verb is followed by a short form
    for match in _DEFINED_AFTER_VERB.finditer(abstract):
        if best is not None and match.start() >= best[0]:
            break
        defined = defined if defined is not None else defined_abbreviations(abstract)
        name = match.group("name")
        long = defined.get(name.rstrip("s")) or defined.get(name, "")
        if long and _words(match.group("long")) == _words(long):
            best = (match.start(), name)
            break
    if best is None:
        for match in _NAME_BEFORE_NOUN.finditer(abstract):
            name = match.group("name")
            if any(_DESCRIBING.fullmatch(w) for w in name.split()) or len(name) < 4:
                continue  # "a GNN framework", "an LLM-based agent": the field, not a name
            return name
    return best[1] if best else ""
