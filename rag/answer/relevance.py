"""Deciding, paper by paper, whether a paper is on a topic, over a wide candidate set: used to
list, count and summarize papers (not the top few retrieved chunks).

A paper is about the topic when its title and abstract contain one of the topic's most
distinctive terms (the CORE_TERMS with the highest IDF in the collection; a question often
explains its topic in other words) and its IDF-weighted coverage of the topic's terms plus the
cosine similarity of its best chunk to the topic, plus a bonus when its title uses one of those
distinctive terms (a title names what a paper is about; an abstract also names what it only
mentions), reach a threshold. A short form the topic defines and its long form are one ("quantum
kernel trick (qKT)": a paper that writes either has both). Terms no abstract uses cannot anchor
the decision but count against every paper's coverage. Calibrated on the `tune` question split
(bench/qa/tune.jsonl and tune3.jsonl, list and summary questions), never on `test`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import pairwise

import numpy as np

from rag.answer.context import TermWeights
from rag.answer.refusal import kind_compounds, topic_terms
from rag.records import PaperHit
from rag.text.abbreviations import defined_abbreviations
from rag.text.names import name_base, query_names

# Candidates examined per topic: the papers hybrid retrieval ranks first, plus every paper whose
# abstract uses one of the topic's anchor terms (so a count covers the whole collection), at most
# MAX_EXAMINED in all.
CANDIDATES = 40
MAX_EXAMINED = 1500
# coverage + similarity needed (coverage in [0, 1], cosine of the best chunk), and how many of
# the topic's rarest terms may anchor it. On the 12 list questions of bench/qa/tune.jsonl
# (listed papers that match / matching papers found): 0.9 with 2 anchors 0.77 / 0.75, 0.85 with
# 3 anchors 0.75 / 0.85, 0.8 with 3 anchors 0.72 / 0.91 (and one more absent topic answered).
# With the title bonus (session 11, same questions): 1.1 with 0.2 gives lists 0.84 / 0.80 and
# summaries 0.60 / 0.91 (papers on topic / topic papers found), against 0.75 / 0.83 and
# 0.50 / 0.94 without it at 0.9.
THRESHOLD = 1.1
TITLE_BONUS = 0.2
CORE_TERMS = 2
# An anchor after the first is used by at most this many times as many papers as the first (on
# the same questions: listed papers that match 0.84 -> 0.89, found 0.80 -> 0.79).
ANCHOR_SPREAD = 10
# An anchor must be distinctive of the topic's papers: the NEAREST candidates most similar to the
# topic use it at least MIN_LIFT times as often as the collection does (at least two of them, for
# the term added as the most distinctive). On bench/qa/tune.jsonl and tune3.jsonl: lists
# 0.91 / 0.79 and 0.60 / 0.54 -> 0.91 / 0.79 and 0.66 / 0.60 (listed papers that match /
# matching papers found), summaries 0.80 / 0.78 and 0.72 / 0.81 -> 0.80 / 0.78 and 0.75 / 0.81,
# absent topics all refused; MIN_LIFT 2 or 10 and NEAREST 20 were no better.
NEAREST = 10
MIN_LIFT = 5.0
# A term that more than 1 / MIN_LIFT of the collection uses cannot reach that lift ("LLMs" is in
# a fifth of ICML 2025's abstracts). When every word of a topic is that common, a word is
# distinctive of it when at least NEAR_ALL of the nearest papers use it, unless more than
# MAX_ANCHOR_SHARE of the collection does (such a word names no topic: "learning", "model"). A
# topic with a rarer word is picked out by that word, or by none.
NEAR_ALL = 0.8
MAX_ANCHOR_SHARE = 0.5
# A word no paper of a collection this large uses says the topic is not in it (in the 19
# bundled papers most words are unused).
UNUSED_TELLS = 2 * int(MIN_LIFT) * NEAREST
# When more papers are relevant than a summary holds, it covers the topic's core: a paper stays
# only when its embedding is at least CORE_SIMILARITY cosine-similar to the mean embedding of the
# topic's CORE_PAPERS highest-scoring papers (pseudo-relevance feedback: papers about a topic
# resemble its clearest papers; one that only uses the topic's words does not). On the summary
# questions of bench/qa/tune.jsonl, tune3, tune7 and tune8 (papers on topic / on-topic papers
# covered): 0.80/0.78, 0.75/0.81, 0.49/0.72, 0.53/0.90 -> 0.85/0.80, 0.80/0.80, 0.54/0.70,
# 0.75/0.95; 3 or 4 papers or a bar of 0.6 / 0.7 traded more recall. For lists it bought 0-4
# points of precision for a point of recall, so lists keep every relevant paper.
CORE_PAPERS = 5
CORE_SIMILARITY = 0.65
# A list topic put in the asker's own words ("papers on how a FooNet slices its input into
# tiles"): when no paper qualifies, and the paper closest in meaning is at least
# ASKER_WORDS_BAR similar to the topic, the topic's words that none of the NEAREST papers most
# similar to it uses are the asker's, not the papers' ("slices"), and coverage counts the
# others. On the list questions of bench/qa/tune*.jsonl (simulated on their recorded
# decisions): listed papers that match 0.57 -> 0.60, matching papers found 0.68 -> 0.72, lists
# refused 11 -> 6 of 114, topics absent from the collection refused 26 of 29 before and after
# (the closest paper of those it would answer was at most 0.40 similar; 0.42 refused 4 lists).
ASKER_WORDS_BAR = 0.45
# In a collection large enough to tell (see UNUSED_TELLS), the papers that pass the anchor test
# and score at least CONTENDER_SCORE are rated together by a logistic model over their features
# (CONTENDER_FEATURES: each paper's own, and where it stands among the contenders), and those
# rated at least RATED_BAR are about the topic. A fixed score bar weighs each paper alone; which
# papers stand out among the candidates says more (a paper whose title is much less like the
# topic than the best title is not about it). Weights fitted by bench/fit_relevance.py on the
# list and summary questions of bench/qa/tune*.jsonl (logistic regression, C=1), never on test.
# The tune topics hold 2-11 papers each: a topic more than MAX_RATED papers pass the score bar
# on is broader than any the model was fitted on (it would cut "diffusion models" from 246
# papers to one), and its papers are decided by the score bar. Cross-validated by question file
# (204 questions; each file's rated by a model fitted without them), against the score bar:
# lists 0.637 / 0.675 -> 0.653 / 0.708 (listed papers that match / matching papers found),
# summaries 0.622 / 0.678 -> 0.660 / 0.703 (papers on topic / on-topic papers covered). A bar of
# 0.2 gives 0.682 / 0.684 and 0.682 / 0.668 (summaries cover less): 0.15 gains on all four.
# Only a topic some paper passes the score bar on is rated: the contenders of a topic the
# collection does not hold may rate high among themselves.
CONTENDER_SCORE = 0.8
MAX_RATED = 25
RATED_BAR = 0.15
CONTENDER_FEATURES = (
    "coverage",
    "similarity",
    "title_similarity",
    "titled",
    "score",
    "score_below_best",
    "similarity_below_best",
    "title_similarity_below_best",
    "rank_share",
    "core_resemblance",
    "log_passing",
    "passes_bar",
)
CONTENDER_WEIGHTS = (
    2.039,
    1.266,
    2.151,
    -0.294,
    3.246,
    0.572,
    1.834,
    2.784,
    1.091,
    3.120,
    -1.225,
    1.637,
)
CONTENDER_INTERCEPT = -7.745


@dataclass(frozen=True)
class Judgement:
    hit: PaperHit
    coverage: float
    similarity: float
    has_core: bool
    titled: bool = False  # the title uses one of the topic's distinctive terms
    rating: float | None = None  # the contenders' model's probability (see RATED_BAR)

    @property
    def score(self) -> float:
        return self.coverage + self.similarity + (TITLE_BONUS if self.titled else 0.0)

    @property
    def passes(self) -> bool:
        """Whether the paper passes the anchor test and the score bar."""
        return self.has_core and self.score >= THRESHOLD

    @property
    def contender(self) -> bool:
        return self.has_core and self.score >= CONTENDER_SCORE


@dataclass(frozen=True)
class TopicDecision:
    topic_terms: list[str]
    core: str  # the most distinctive term the collection uses ("" when there is none)
    judged: list[Judgement]
    # Words of the topic's name that no paper uses, nor any alternative "or" offers for them
    # ("malware or phishing"): the topic is about something the collection never mentions.
    unused: tuple[str, ...] = ()
    # The topic's words no paper near it uses, left out of the coverage (see ASKER_WORDS_BAR).
    askers_words: tuple[str, ...] = ()
    # When no paper qualifies: the decision without the asker's own words, if it has any.
    reworded: TopicDecision | None = None

    @property
    def settled(self) -> TopicDecision:
        """This decision, or when no paper qualifies by the topic's words, the one without the
        asker's own words (see ASKER_WORDS_BAR), if there is one."""
        if not self.relevant and self.reworded is not None:
            return self.reworded
        return self

    @property
    def rated(self) -> bool:
        """Whether the contenders were rated together (see RATED_BAR)."""
        return any(j.rating is not None for j in self.judged)

    @property
    def relevant(self) -> list[PaperHit]:
        """The papers about the topic, most relevant first: the contenders rated at least
        RATED_BAR (at least the best rated), or without ratings those passing the score bar,
        by score."""
        if self.rated:
            ranked = sorted(
                (j for j in self.judged if j.rating is not None),
                key=lambda j: (-(j.rating or 0.0), j.hit.paper_id),
            )
            chosen = [j for j in ranked if (j.rating or 0.0) >= RATED_BAR]
            return [j.hit for j in chosen or ranked[:1]]
        chosen = [j for j in self.judged if j.passes]
        chosen.sort(key=lambda j: (-j.score, j.hit.paper_id))
        return [j.hit for j in chosen]

    @property
    def ratable(self) -> bool:
        """Whether the contenders' model applies: 1 to MAX_RATED papers pass the score bar."""
        return 0 < sum(j.passes for j in self.judged) <= MAX_RATED

    @property
    def contenders(self) -> list[PaperHit]:
        """The papers the contenders' model rates (see CONTENDER_SCORE)."""
        return [j.hit for j in self.judged if j.contender]

    def closest(self, n: int, min_similarity: float) -> list[PaperHit]:
        """The `n` candidates nearest to the topic (coverage + similarity), at least
        `min_similarity` similar to it."""
        ranked = sorted(self.judged, key=lambda j: -j.score)
        return [j.hit for j in ranked if j.similarity >= min_similarity][:n]

    def nearest_in_meaning(self, bar: float, band: float) -> list[PaperHit]:
        """The candidates most similar in meaning to the topic: the closest, when it is at least
        `bar` similar, and those within `band` of it (most similar first)."""
        ranked = sorted(self.judged, key=lambda j: (-j.similarity, j.hit.paper_id))
        if not ranked or ranked[0].similarity < bar:
            return []
        return [j.hit for j in ranked if j.similarity >= ranked[0].similarity - band]

    def rule(self) -> str:
        """How papers were decided, in words."""
        # Terms as written: "e_valu" (a letter joined to a word, see rag.text.terms) is "e-valu".
        counted = [t.replace("_", "-") for t in self.topic_terms if t not in self.askers_words]
        rule = (
            f"{len(self.judged)} candidate papers examined; a paper counts when its abstract "
            f"uses the topic's most distinctive words and covers enough of {', '.join(counted)}"
        )
        if self.askers_words:
            unused = ", ".join(t.replace("_", "-") for t in self.askers_words)
            rule += f" (not {unused}: no paper close to the topic uses them)"
        if self.rated:
            rule += ", and stands out among the candidates in title and meaning"
        return rule


# "X or Y": the words either side of an "or" are alternatives ("generate or edit CAD models").
_OR = re.compile(r"([A-Za-z][\w-]*)\s*,?\s+or\s+(?:other\s+|either\s+)?([A-Za-z][\w-]*)", re.I)


def or_groups(topic: str, weights: TermWeights) -> list[set[str]]:
    """Sets of terms of which a paper needs only one: the words on both sides of each "or"."""
    groups = []
    for left, right in _OR.findall(topic):
        group = weights.terms(left) | weights.terms(right)
        if len(group) > 1:
            groups.append(group)
    return groups


# Where a topic's name ends and its explanation begins: "X, i.e. ...", "X such as ...", "X, where
# ...", "X, against ..." (a comma and a preposition open an adjunct), "X (a multi-word gloss)".
# A one-word parenthesis is the name's short form: "(GANs)".
_EXPLANATION = re.compile(
    r"\s*,?\s*(?:\((?=[^()]*\s[^()]*\))|\b(?:i\.e\.|e\.g\.|such as|namely|that is|where|in which)"
    r"(?!\w)|,\s*(?:the|a|an|which|who|whose|against|for|with|under|via|using|by|in|on)\b)",
    re.IGNORECASE,
)


def topic_name(topic: str) -> str:
    """The topic as named, without the explanation that may follow it ("dataset distillation,
    i.e. condensing a training set" -> "dataset distillation")."""
    return _EXPLANATION.split(topic, maxsplit=1)[0]


def anchor_terms(
    topic: str, weights: TermWeights, document_frequency: Callable[[str], int]
) -> list[str]:
    """The topic's most distinctive terms that the collection uses (highest IDF first), taken
    from its name when the name has any (an explanation's rare words are the asker's, not the
    papers'); a term far more common than the rarest one is not distinctive ("network" next to
    "hypernetwork")."""
    named = _anchors(topic_name(topic), weights, document_frequency)
    return named or _anchors(topic, weights, document_frequency)


def _anchors(
    topic: str, weights: TermWeights, document_frequency: Callable[[str], int]
) -> list[str]:
    terms = sorted(topic_terms(topic, weights), key=lambda t: (-weights.idf(t), t))
    used = [t for t in terms if document_frequency(t) > 0][:CORE_TERMS]
    return [t for t in used if document_frequency(t) <= ANCHOR_SPREAD * document_frequency(used[0])]


def adjacent_pairs(text: str, weights: TermWeights) -> set[str]:
    """The text's stemmed terms two in a row, as phrases ("state space")."""
    stems = weights.tokenize([text])[0]
    return {f"{a} {b}" for a, b in pairwise(stems) if a != b}


def topic_phrases(topic: str, weights: TermWeights) -> set[str]:
    """The phrases of two content terms in the topic's name ("state space models" -> "state
    space")."""
    name = topic_name(topic)
    content = topic_terms(name, weights)
    return {p for p in adjacent_pairs(name, weights) if all(t in content for t in p.split())}


def topical_anchors(
    topic: str,
    weights: TermWeights,
    document_frequency: Callable[[str], int],
    nearest: Sequence[str],
    n_papers: int,
) -> list[str]:
    """`anchor_terms`, kept only where they are distinctive of the topic's papers, plus the
    topic's most distinctive such term. A term is distinctive of the topic when the papers
    nearest to it (`nearest`: their texts, most similar first) use it at least MIN_LIFT times as
    often as the collection does: a word rare in abstracts but not about the topic ("look",
    "people", "turn") is not. A topic named only by common words is picked out by those most of
    the nearest papers use (see NEAR_ALL). Without `nearest`, or in a collection too small to
    tell, `anchor_terms`. A topic none of whose words is distinctive may be named by a phrase
    that is ("state space models": both words are common, the phrase is not); its most
    distinctive such phrase is then its anchor (`document_frequency` takes phrases too). A kind
    word and the word it modifies, written so by the topic's papers, anchor it as one phrase
    (see `named_by`)."""
    anchors = anchor_terms(topic, weights, document_frequency)
    near = [weights.terms(text) for text in nearest[:NEAREST]]
    compounds = [
        pair
        for compound in kind_compounds(topic_name(topic))
        for pair in adjacent_pairs(compound, weights)
        if document_frequency(pair) > 0
    ]

    def named_by(kept: list[str], compounds: list[str]) -> list[str]:
        """A compound of a kind word and the word it modifies ("algorithm selection", "model
        merging") anchors the topic in place of its words: alone, "selection" names a much
        broader topic."""
        inside = {t for pair in compounds for t in pair.split()}
        return list(dict.fromkeys([*compounds, *(t for t in kept if t not in inside)]))

    # A term only the nearest papers use reaches a lift of n_papers / len(near): in a small
    # collection (the 19 bundled papers) no lift is telling.
    if not near or n_papers < 2 * MIN_LIFT * len(near):
        return named_by(anchors, compounds)

    def share(term: str) -> float:
        return document_frequency(term) / max(1, n_papers)

    @cache
    def near_pairs() -> list[set[str]]:  # read only when a phrase is weighed
        return [adjacent_pairs(text, weights) for text in nearest[:NEAREST]]

    def lift(term: str) -> tuple[float, int]:
        used = sum(term in terms for terms in (near_pairs() if " " in term else near))
        return ((used / len(near)) / share(term) if share(term) else 0.0), used

    used_terms = [t for t in topic_terms(topic, weights) if document_frequency(t) > 0]
    common = bool(used_terms) and all(share(t) * MIN_LIFT > 1 for t in used_terms)

    def distinctive(term: str) -> bool:
        ratio, used = lift(term)
        if ratio >= MIN_LIFT:
            return True
        return common and share(term) <= MAX_ANCHOR_SHARE and used >= NEAR_ALL * len(near)

    # A name few papers write ("Muon") picks out those papers, whether or not they are among
    # the papers nearest in meaning (a rare name tells an embedding little).
    kept = [t for t in anchors if distinctive(t)]
    kept += [
        t
        for name in query_names(topic_name(topic))
        for t in sorted(weights.terms(name))
        if 0 < document_frequency(t) <= NEAREST
    ]
    # A kind word and the next are one name where the topic's papers write them so ("task
    # vectors"), not where they only happen to meet ("a model performs").
    compounds = [pair for pair in compounds if lift(pair)[1] >= 2 and distinctive(pair)]
    if compounds:
        return named_by(kept, compounds)
    for candidates in (
        topic_terms(topic_name(topic), weights),
        topic_terms(topic, weights),
        set() if kept else topic_phrases(topic, weights),
    ):
        scored = [(lift(t), t) for t in candidates if document_frequency(t) > 0]
        best = [t for (_, used), t in sorted(scored, reverse=True) if used >= 2 and distinctive(t)]
        if best:
            return list(dict.fromkeys([*kept, best[0]]))
    return list(dict.fromkeys(kept))


def _phrase(words: str) -> re.Pattern[str]:
    """`words` written as a phrase, with spaces or hyphens between them, in any case."""
    parts = [re.escape(w) for w in re.split(r"[\s-]+", words) if w]
    return re.compile(r"(?<!\w)" + r"[\s-]+".join(parts), re.IGNORECASE)


# "Which papers evaluate on X?", "tested on X": how a paper is tested says nothing of what it is
# about (unlike "evaluation" or "test-time", which may be the topic).
_TESTED_ON = re.compile(
    r"\b(?:evaluat(?:e|es|ed|ing)|test(?:s|ed|ing)?|benchmark(?:s|ed|ing)?|validat(?:e|es|ed|ing))"
    r"\s+(?:\w+\s+)?(?:on|against|with|using)\b",
    re.IGNORECASE,
)


def judge_papers(
    topic: str,
    hits: Sequence[PaperHit],
    weights: TermWeights,
    paper_text: Callable[[str], str],
    similarities: dict[str, float],
    document_frequency: Callable[[str], int],
    anchors: Sequence[str] | None = None,
    n_papers: int = 0,
) -> TopicDecision:
    """Decide for every candidate whether it is about `topic` (see module doc). Terms joined by
    "or" count as one: covered when the paper has either, weighted by the rarer. `anchors` are
    the distinctive terms a paper must use (`anchor_terms` when not given). In a collection of
    `n_papers` large enough to tell (see UNUSED_TELLS), a word of the topic's name that no paper
    uses is reported in `unused`."""
    terms = sorted(topic_terms(_TESTED_ON.sub(" ", topic), weights) or topic_terms(topic, weights))
    groups = [g & set(terms) for g in or_groups(topic, weights)]
    groups = [g for g in groups if len(g) > 1]
    grouped = set().union(*groups) if groups else set()
    units = [{t} for t in terms if t not in grouped] + groups
    total = sum(max(weights.idf(t) for t in unit) for unit in units)
    # Anchors come from terms the collection uses: a word no abstract has cannot pick papers
    # (it still counts in the coverage, against every paper).
    anchor_list = (
        list(anchors) if anchors is not None else anchor_terms(topic, weights, document_frequency)
    )
    core = anchor_list[0] if anchor_list else ""
    anchor_set = set(anchor_list)
    joined = joined_anchors(topic, anchor_list, weights)
    # "quantum kernel trick (qKT)": a paper that writes either form writes both.
    forms = [
        (weights.terms(short), _phrase(long), weights.terms(long))
        for short, long in defined_abbreviations(topic, any_case=True).items()
    ]
    # A name counts where a paper writes it, not where a paper writes a word of its stem
    # ("QUARTZING" is not "quartz", "Transformers" not "transformation").
    identifiers = [n for n in query_names(topic) if name_base(n) == n]  # not "AI-generated"
    names = [(_written(name), weights.terms(name)) for name in identifiers]
    judged = []
    held: list[set[str]] = []  # each candidate's terms
    written_together = False  # some paper writes all the side-by-side anchors
    phrased = any(" " in a for a in anchor_list)  # a phrase anchors the topic
    for hit in hits:
        text = f"{hit.title} {paper_text(hit.paper_id)}"
        paper_terms = weights.terms(text) | (adjacent_pairs(text, weights) if phrased else set())
        for written, name_terms in names:
            if name_terms & paper_terms and not written.search(text):
                paper_terms = paper_terms - name_terms
        for short_terms, long_form, long_terms in forms:
            if (short_terms and short_terms <= paper_terms) or long_form.search(text):
                paper_terms = paper_terms | short_terms | long_terms
        held.append(paper_terms)
        covered = sum(max(weights.idf(t) for t in unit) for unit in units if unit & paper_terms)
        written_together = written_together or joined <= paper_terms
        judged.append(
            Judgement(
                hit,
                covered / total if total else 0.0,
                similarities.get(hit.paper_id, 0.0),
                bool(anchor_set & paper_terms),
                bool(anchor_set & weights.terms(hit.title))
                or (phrased and bool(anchor_set & adjacent_pairs(hit.title, weights))),
            )
        )
    if joined and n_papers >= UNUSED_TELLS and not written_together:
        # No paper uses the words that name the topic together ("federated unlearning"): each
        # names a broader field, and the topic itself is not in the collection.
        judged = [replace(j, has_core=False) for j in judged]
    unused = _unused(topic, weights, groups, document_frequency) if n_papers >= UNUSED_TELLS else ()
    decision = TopicDecision(terms, core, judged, unused)
    if decision.relevant or not judged or n_papers < UNUSED_TELLS or unused:
        return decision
    # No paper qualifies: the words no paper close to the topic uses may be the asker's own.
    nearest = sorted(range(len(judged)), key=lambda i: -judged[i].similarity)[:NEAREST]
    if judged[nearest[0]].similarity < ASKER_WORDS_BAR:
        return decision
    near_terms = set().union(*(held[i] for i in nearest))
    kept = [unit for unit in units if unit & near_terms]
    askers = tuple(sorted(set().union(*(u for u in units if not u & near_terms))))
    if not askers or not kept:
        return decision
    total = sum(max(weights.idf(t) for t in unit) for unit in kept)
    rejudged = [
        replace(
            j,
            coverage=sum(max(weights.idf(t) for t in u) for u in kept if u & terms_of) / total,
        )
        for j, terms_of in zip(judged, held, strict=True)
    ]
    return replace(decision, reworded=TopicDecision(terms, core, rejudged, unused, askers))


def _written(name: str) -> re.Pattern[str]:
    """`name` as a paper writes it: whole, in any case (in capitals when it is written in
    capitals, as "QUARTZING" is), a plural -s aside, its parts joined by a hyphen or a space."""
    parts = [re.escape(p) for p in re.split(r"[\s-]+", name.rstrip("s") if len(name) > 3 else name)]
    flags = 0 if name.isupper() and len(name) > 1 else re.IGNORECASE
    return re.compile(r"(?<![\w-])" + r"[\s\u2010-\u2015-]?".join(parts) + r"s?(?![\w])", flags)


def joined_anchors(topic: str, anchors: Sequence[str], weights: TermWeights) -> set[str]:
    """The anchors that stand next to each other in the topic's name ("counterfactual
    fairness", "point clouds"): together they name one thing (one alone names a broader
    field)."""
    stems = [next(iter(weights.terms(w)), "") for w in re.findall(r"[\w]+", topic_name(topic))]
    joined: set[str] = set()
    for left, right in pairwise(stems):
        if left in anchors and right in anchors and left != right:
            joined |= {left, right}
    return joined


def _unused(
    topic: str,
    weights: TermWeights,
    groups: Sequence[set[str]],
    document_frequency: Callable[[str], int],
) -> tuple[str, ...]:
    """The words of the topic's name (see `topic_name`) that no paper uses, when no word they
    are alternatives to ("X or Y") is used either."""
    unused = []
    for word in re.findall(r"[A-Za-z][\w-]*", topic_name(topic)):
        terms = topic_terms(word, weights)
        if not terms or any(document_frequency(t) > 0 for t in terms):
            continue
        alternatives = set().union(*(g for g in groups if g & terms)) if groups else set()
        if not any(document_frequency(t) > 0 for t in alternatives):
            unused.append(word)
    return tuple(dict.fromkeys(unused))


def contender_features(
    decision: TopicDecision,
    title_similarity: Mapping[str, float],
    vectors: Mapping[str, np.ndarray],
) -> tuple[list[Judgement], np.ndarray]:
    """The contenders (highest score first) and their CONTENDER_FEATURES, one row each:
    `title_similarity` is each title's cosine similarity to the topic, `vectors` the papers'
    embeddings (a paper without one resembles the core at CORE_SIMILARITY)."""
    contenders = sorted(
        (j for j in decision.judged if j.contender), key=lambda j: (-j.score, j.hit.paper_id)
    )
    if not contenders:
        return [], np.zeros((0, len(CONTENDER_FEATURES)))
    titles = [title_similarity.get(j.hit.paper_id, 0.0) for j in contenders]
    best_score = contenders[0].score
    best_similarity = max(j.similarity for j in contenders)
    best_title = max(titles)
    centre = _core_centre([j.hit for j in contenders], vectors)
    passing = np.log1p(sum(j.passes for j in contenders))
    rows = []
    for i, (j, title) in enumerate(zip(contenders, titles, strict=True)):
        vector = vectors.get(j.hit.paper_id)
        resemblance = (
            float(vector @ centre) if vector is not None and centre is not None else CORE_SIMILARITY
        )
        rows.append(
            [
                j.coverage,
                j.similarity,
                title,
                float(j.titled),
                j.score,
                j.score - best_score,
                j.similarity - best_similarity,
                title - best_title,
                i / len(contenders),
                resemblance,
                passing,
                float(j.passes),
            ]
        )
    return contenders, np.asarray(rows, dtype=np.float64)


def rate_contenders(
    decision: TopicDecision,
    title_similarity: Mapping[str, float],
    vectors: Mapping[str, np.ndarray],
) -> TopicDecision:
    """`decision` with its contenders rated by the contenders' model (see RATED_BAR), its
    reworded decision too; a decision more than MAX_RATED papers pass the score bar in, or
    none, stays unrated."""
    reworded = decision.reworded
    if reworded is not None:
        reworded = rate_contenders(reworded, title_similarity, vectors)
    if not decision.ratable:
        return replace(decision, reworded=reworded)
    contenders, rows = contender_features(decision, title_similarity, vectors)
    logits = rows @ np.asarray(CONTENDER_WEIGHTS) + CONTENDER_INTERCEPT
    ratings = {
        j.hit.paper_id: float(1.0 / (1.0 + np.exp(-z)))
        for j, z in zip(contenders, logits, strict=True)
    }
    judged = [replace(j, rating=ratings.get(j.hit.paper_id)) for j in decision.judged]
    return replace(decision, judged=judged, reworded=reworded)


def resembling_core(
    papers: Sequence[PaperHit], vectors: Mapping[str, np.ndarray]
) -> list[PaperHit]:
    """`papers` (most relevant first) without those unlike the first CORE_PAPERS (see
    CORE_SIMILARITY); a paper without a vector stays."""
    centre = _core_centre(papers, vectors)
    if centre is None:
        return list(papers)
    return [
        h
        for i, h in enumerate(papers)
        if i < CORE_PAPERS
        or h.paper_id not in vectors
        or float(vectors[h.paper_id] @ centre) >= CORE_SIMILARITY
    ]


def _core_centre(
    papers: Sequence[PaperHit], vectors: Mapping[str, np.ndarray]
) -> np.ndarray | None:
    """The normalised mean embedding of the first CORE_PAPERS `papers` that have one."""
    core = [vectors[h.paper_id] for h in papers[:CORE_PAPERS] if h.paper_id in vectors]
    if not core:
        return None
    centre = np.mean(core, axis=0)
    return centre / (float(np.linalg.norm(centre)) or 1.0)
