"""The `extractive` backend: an answer composed of the retrieved abstracts' best sentences.

No generative model: deterministic, fast, and every sentence is a quotation with its citation.
With the question at hand, sentences are chosen to cover every part of it ("what X does, and how
much it saves" needs the sentence with X and the sentence with the amount), not only the single
best-matching ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence

from rag.answer.citations import MARKER
from rag.answer.context import ContextPassage, Sentence, TermWeights, overlap_score
from rag.answer.intent import wants_comparison, wants_identity
from rag.answer.modes.quotes import (
    is_link,
    overcomes_problem,
    states_approach,
    states_problem,
    takes_up_problem,
)
from rag.answer.refusal import (
    EXPERIMENT_WORDS,
    asks_amount,
    asks_for_code,
    content_terms,
    instance_names,
    kind_words,
    measured_things,
    named_kinds,
    subject_terms,
)
from rag.answer.safety import looks_like_injection, safe_title
from rag.text.abbreviations import defined_abbreviations, expand
from rag.text.names import method_name, query_names
from rag.text.questions import question_parts
from rag.text.terms import FUNCTION_WORDS

EXTRACTIVE_LABEL = "Extractive answer (sentences quoted from the abstracts)"

_NUMBER = re.compile(r"\d")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
# "How does X ...": a question about how something works.
_HOW = re.compile(r"\bhow\s+(?:does|do|did|is|are|was|were|can)\b", re.IGNORECASE)
# Asking what a paper is for: "What problem does X solve?", "Which challenge does it address?".
_ASKS_PROBLEM = re.compile(
    r"\b(?:what|which)\s+(?:\w+\s+)?(?:problems?|challenges?|issues?|limitations?|gaps?|"
    r"bottlenecks?)\s+(?:does|do|did|is|are|was|were)\b[^?]*?\b(?:solve|address|tackle|"
    r"overcome|fix|target|mitigate|remedy|resolve|handle|alleviate)\w*",
    re.IGNORECASE,
)


# Greedy choice. A sentence joins the answer when it covers question terms not yet covered (or
# gives the amount or method a part asks for): from the first sentence's paper when it adds at
# least SAME_PAPER_GAIN of the first sentence's gain, from another paper at least
# OTHER_PAPER_GAIN (another paper is cited only when it adds something); checked on
# bench/qa/tune.jsonl (facts 0.74 -> 0.80, citations alike).
SAME_PAPER_GAIN = 0.25
OTHER_PAPER_GAIN = 0.7
# A question that compares nothing is about one paper: another paper joins only when it adds half
# again as much as the first sentence (on the tune splits, citation precision 0.94-0.97 ->
# 0.97-0.99 at equal recall; questions about several papers keep OTHER_PAPER_GAIN).
ONE_PAPER_GAIN = 1.5
# A part of the question is answered when the chosen sentences hold this IDF-weighted share of
# its words; else the first paper's sentence that holds most of the rest joins.
PART_COVERED = 0.5
# Without a question, and after the greedy choice, a sentence of the first paper is quoted when
# it scores at least this share of the best (0.7: on bench/qa/tune.jsonl, citation precision
# 0.94 against 0.90 at 0.6, facts alike).
RELATIVE_FLOOR = 0.7
# How something works takes more telling: a "how does X ..." question may quote this many more
# sentences of the first paper, down to this share of the best score (on bench/qa/tune.jsonl and
# tune2.jsonl, facts 0.82 / 0.58 -> 0.84 / 0.62, method questions 0.60 / 0.40 -> 0.70 / 0.60,
# citations unchanged; one more sentence at 0.5 gave 0.83 / 0.59).
MORE_FOR_HOW = 2
HOW_FLOOR = 0.4
# A model's answer gives a quote's content when it has this share of the quote's terms (by IDF);
# the quotes it does not give are added after it. On bench/qa/tune.jsonl with the bundled model:
# facts 0.60 -> 0.78, citation precision / recall 0.92 / 0.87 -> 0.94 / 0.92 (0.35: facts 0.74,
# 0.65: 0.78); tune2.jsonl facts 0.27 -> 0.43.
COVERED = 0.5
# A model's sentence restates a quote when this share of its terms are the quote's.
DRAWN = 0.8


def compose_extractive(
    passages: Sequence[ContextPassage],
    question: str = "",
    weights: TermWeights | None = None,
    *,
    max_sentences: int = 3,
    relative_floor: float = RELATIVE_FLOOR,
    named: Collection[str] = (),
    compared: bool = False,
) -> str:
    """The best sentences across passages, each followed by its passage marker (`quotes_for`)."""
    quotes = quotes_for(
        passages,
        question,
        weights,
        max_sentences=max_sentences,
        relative_floor=relative_floor,
        named=named,
        compared=compared,
    )
    return " ".join(with_marker(text, n) for text, n in quotes)


def quotes_for(
    passages: Sequence[ContextPassage],
    question: str = "",
    weights: TermWeights | None = None,
    *,
    max_sentences: int = 3,
    relative_floor: float = RELATIVE_FLOOR,
    named: Collection[str] = (),
    compared: bool = False,
) -> list[tuple[str, int]]:
    """The sentences that answer `question`, each with its passage number, in answer order.

    Without a question: the best-scoring sentences, each kept when its score is at least
    `relative_floor` of the best one, so a single clear match isn't diluted by weaker papers.
    With a question: `cover_question` picks them; `named` are the ids of the papers the question
    calls by name, `compared` whether it asks about several of them (how they differ, what each
    does): then each one's method is quoted. Sentences that address an AI model are never
    quoted (context selection already leaves them out; this holds for any passages).
    """
    ranked = sorted(
        ((s, p.n) for p in passages for s in p.sentences if not looks_like_injection(s.text)),
        key=lambda item: -item[0].score,
    )
    if not ranked:
        return []
    if question and not asks_for_code(question):
        ranked = [(s, n) for s, n in ranked if not is_link(s.text)] or ranked
    if question and weights is not None:
        if not about_several(question):
            # A question about one paper is answered first from the first passage's paper (the
            # one retrieval ranks first by all its text, or that a first question describes
            # best: `described_first`): a question that describes a paper matches it across
            # sentences, while another paper's background sentence may match best alone.
            first = next((i for i, (_, n) in enumerate(ranked) if n == passages[0].n), 0)
            ranked = [ranked[first], *ranked[:first], *ranked[first + 1 :]]
        # A paper the question names is named by its citation: each of its sentences covers the
        # name, so a question about two papers is answered from both.
        names = query_names(question)
        writers = {
            x: [p.n for p in passages if x.lower() in f"{p.title} {p.text}".lower()] for x in names
        }
        owned = {
            p.n: subject_terms([x for x in names if p.n in writers[x]], weights) for p in passages
        }
        short = {p.n: defined_abbreviations(f"{p.title}. {p.text}") for p in passages}
        # A paper's title says what every sentence of it is about: the question's words its
        # title uses pick the paper, and its sentences are chosen for the rest ("Does the
        # re-basin method for task vectors need data?" is answered by "data-free").
        asked = weights.terms(question)
        titled = {p.n: weights.terms(p.title) & asked for p in passages}
        # The passages of the papers the question calls by their names.
        named_passages = {p.n for p in passages if p.paper_id in named}
        chosen = cover_question(
            question,
            ranked,
            weights,
            max_sentences=max_sentences,
            owned=owned,
            short=short,
            each_method=named_passages if compared else (),
            titled=titled,
        )
        # Papers the question calls by name: by the caller's lookup, or a name of the question
        # that their passage alone writes ("How do AlphaNet and BetaNet ...?" is about both; a
        # name several passages write, "VAEs", is a topic).
        called = named_passages | {w[0] for w in writers.values() if len(w) == 1}
        if about_one(question) and len(called) < 2:
            chosen = one_paper(chosen, passages)
        if chosen and wants_identity(question) and not named_passages:
            # "Which paper does X?" is answered by the paper's name (the one its title gives, or
            # else the one its abstract introduces), then what it says.
            n = chosen[0][1]
            paper = next(p for p in passages if p.n == n)
            name = paper_name(paper.title) or method_name(paper.text)
            return [
                (_named(s.text, name) if i == 0 else s.text, m) for i, (s, m) in enumerate(chosen)
            ]
        # A paper's sentences read in its abstract's order ("We present X ..." before what X
        # achieves); the papers keep the order of their best sentences. ("Which paper ...?" is
        # answered above by its name first, then its best sentence.)
        rank_of: dict[int, int] = {}
        for i, (_, n) in enumerate(chosen):
            rank_of.setdefault(n, i)
        # Papers the question names come in the order it names them ("X and Y: what does
        # each ...?" is answered about X first), before any other.
        mention = list(dict.fromkeys(named))
        named_at = {p.n: mention.index(p.paper_id) for p in passages if p.paper_id in named}
        if len(set(named_at.values())) < 2:
            named_at = {}
        chosen = sorted(
            chosen,
            key=lambda item: (named_at.get(item[1], len(mention)), rank_of[item[1]], item[0].start),
        )
    else:
        best = ranked[0][0].score
        chosen = [
            (s, n)
            for s, n in ranked[:max_sentences]
            if s.score >= relative_floor * best or s is ranked[0][0]
        ]
    return [(s.text, n) for s, n in chosen]


def one_paper(
    chosen: Sequence[tuple[Sentence, int]], passages: Sequence[ContextPassage]
) -> list[tuple[Sentence, int]]:
    """The `chosen` sentences of one paper: a question about one paper is answered from the
    chosen paper closest to it in meaning (its best chunk's cosine similarity to the question;
    another paper's sentence may match a part of the question better alone, but is about
    another paper). On the 16 tune splits this picked the right paper in 7 of the 9 questions
    about one paper that were answered from two, as many as held it among the two; the most
    word overlap, or the paper retrieval ranks first, picked it in 6."""
    papers = list(dict.fromkeys(n for _, n in chosen))
    if len(papers) < 2:
        return list(chosen)
    closeness = {p.n: p.hit.dense_similarity for p in passages}
    best = max(papers, key=lambda n: (closeness.get(n, 0.0), -papers.index(n)))
    return [(s, n) for s, n in chosen if n == best]


def left_out(
    said: Sequence[str], quotes: Sequence[tuple[str, int]], weights: TermWeights
) -> list[tuple[str, int]]:
    """The quotes whose content the `said` sentences (a model's answer) do not give: a figure
    of the quote was not said, or less than COVERED of the quote's terms' IDF weight is in them
    and no sentence was drawn from the quote (DRAWN of its terms in the quote's)."""
    sentences = [weights.terms(MARKER.sub(" ", text)) for text in said]
    everything = set().union(*sentences)
    numbers = set(_FIGURE.findall(" ".join(said)))
    out = []
    for quote, n in quotes:
        terms = weights.terms(quote)
        total = sum(weights.idf(t) for t in terms)
        given = sum(weights.idf(t) for t in terms & everything) >= COVERED * total
        drawn = any(x and len(x & terms) >= DRAWN * len(x) for x in sentences)
        # A figure is a fact of its own: a quote's figures must all have been said.
        figures = set(_FIGURE.findall(quote)) <= numbers
        if total and not (figures and (given or drawn)):
            out.append((quote, n))
    return out


def cover_question(
    question: str,
    ranked: Sequence[tuple[Sentence, int]],
    weights: TermWeights,
    *,
    max_sentences: int = 3,
    owned: Mapping[int, set[str]] | None = None,
    short: Mapping[int, Mapping[str, str]] | None = None,
    each_method: Collection[int] = (),
    titled: Mapping[int, set[str]] | None = None,
) -> list[tuple[Sentence, int]]:
    """Sentences (best-scored first in `ranked`, with their passage numbers) chosen greedily to
    cover the question's content terms and what each part asks for (an amount, a method);
    returned in the order chosen. `owned` (passage number -> terms) adds terms that every
    sentence of a passage covers; `short` (passage number -> abbreviations it defines) lets a
    sentence that uses a short form cover its long form's terms. For the passages in
    `each_method` (papers a question names when it asks how they differ, or what each does),
    the sentence presenting each one's method is quoted, with the sentence after it."""
    split = question_parts(question)
    # A part asking for an amount is answered by a sentence with a digit, one asking how
    # something works by the sentence presenting the method; either with the part's own terms
    # (the names of what the question is about don't count: every sentence of that paper may
    # carry them).
    named = subject_terms(query_names(question), weights)
    defined = {form for forms in (short or {}).values() for form in forms}
    wanted = set().union(*(content_terms(p, weights) for p in split)) if split else set()
    # Nor do the words of the first paper's title: they say which paper is asked about ("Does
    # the re-basin method for task vectors need data?"), not what is asked of it.
    subject = named | (titled or {}).get(ranked[0][1], set()) if ranked else named
    parts = [
        (content_terms(p, weights) - subject | _kind_terms(p, weights), _answer_kind(p, defined))
        for p in split
    ]
    terms = [
        weights.terms(f"{s.text} {expand(s.text, (short or {}).get(n, {}))}")
        | (owned or {}).get(n, set())
        for s, n in ranked
    ]
    covered: set[str] = set()
    met = [kind is None for _, kind in parts]

    def answers(i: int) -> list[bool]:
        """Which parts' kind of answer sentence `i` gives."""
        text = ranked[i][0].text
        return [kind is not None and kind(text) and bool(terms[i] & part) for part, kind in parts]

    def gain(i: int) -> float:
        new = sum(weights.idf(t) for t in (terms[i] & wanted) - covered)
        new += sum(
            max((weights.idf(t) for t in part), default=0.0)
            for (part, _), done, gives in zip(parts, met, answers(i), strict=True)
            if gives and not done
        )
        return new / (1.0 + 0.15 * math.log1p(max(1, len(terms[i]))))

    def take(i: int) -> None:
        nonlocal met
        chosen.append(i)
        covered.update(terms[i] & wanted)
        met = [done or gives for done, gives in zip(met, answers(i), strict=True)]

    # The best-scored sentence opens the answer; each paper the question names adds its best
    # sentence; the others join by what they add.
    chosen: list[int] = []
    first_gain = gain(0)
    take(0)
    names = set().union(*(owned or {}).values())
    named_done = names & terms[0]
    while names - named_done:
        left = [
            i for i in range(len(ranked)) if i not in chosen and terms[i] & (names - named_done)
        ]
        if not left:
            break
        # Best a sentence that writes the name itself (a short one that doesn't covers little).
        best = max(
            left,
            key=lambda i: (bool(weights.terms(ranked[i][0].text) & names), gain(i), -i),
        )
        take(best)
        named_done |= names & terms[best]
    # A part asking for an amount or a mechanism that is still unanswered gets the best
    # sentence of the papers chosen so far that gives it.
    papers = {ranked[i][1] for i in chosen}
    for k in range(len(parts)):
        left = [
            i
            for i in range(len(ranked))
            if not met[k] and i not in chosen and ranked[i][1] in papers and answers(i)[k]
        ]
        if (
            not left
            and not met[k]
            and parts[k][1] is states_approach
            and not any(states_approach(ranked[j][0].text) for j in chosen)
        ):
            # Asked how it works in words the abstract doesn't use: the sentence presenting
            # the method of the first paper says it best.
            left = [
                i
                for i in range(len(ranked))
                if i not in chosen
                and ranked[i][1] == ranked[0][1]
                and states_approach(ranked[i][0].text)
            ]
        if not left and not met[k] and parts[k][1] is states_problem:
            # "What problem does X solve?": the sentence before "To address this, we propose X"
            # states it, else a sentence of the first paper that states a problem.
            left = [j for i in chosen if (j := _before(ranked, i)) is not None and j not in chosen]
            left = left or [
                i
                for i in range(len(ranked))
                if i not in chosen
                and ranked[i][1] == ranked[0][1]
                and states_problem(ranked[i][0].text)
            ]
        if left:
            take(max(left, key=lambda i: (gain(i), -i)))
    if each_method:
        # How named papers differ is how their methods differ: each one's method sentence.
        for n in sorted(each_method):
            if any(ranked[j][1] == n and states_approach(ranked[j][0].text) for j in chosen):
                continue
            left = [
                i
                for i in range(len(ranked))
                if ranked[i][1] == n and i not in chosen and states_approach(ranked[i][0].text)
            ]
            if left:
                take(max(left, key=lambda i: (gain(i), -i)))
    limit = max(max_sentences, len(chosen) + 1)
    other_gain = OTHER_PAPER_GAIN if about_several(question) else ONE_PAPER_GAIN
    while len(chosen) < min(limit, len(ranked)):
        best_gain, best = max((gain(i), -i) for i in range(len(ranked)) if i not in chosen)
        best = -best
        same = ranked[best][1] == ranked[0][1]
        if best_gain <= 0 or best_gain < (SAME_PAPER_GAIN if same else other_gain) * first_gain:
            break
        take(best)
    # Each part of the question gets a sentence of the first paper that states its words when
    # those chosen so far hold less than PART_COVERED of them ("..., and what trait of rewards
    # motivates it?").
    for own, _ in parts:
        total = sum(weights.idf(t) for t in own)
        if not total or sum(weights.idf(t) for t in own & covered) >= PART_COVERED * total:
            continue
        left = [i for i in range(len(ranked)) if i not in chosen and ranked[i][1] == ranked[0][1]]
        best_part = max(
            left,
            key=lambda i: (sum(weights.idf(t) for t in (terms[i] & own) - covered), -i),
            default=None,
        )
        if best_part is not None and (terms[best_part] & own) - covered:
            take(best_part)
    # Then, as without a question, the first paper's other sentences that score nearly as well
    # (a "how does X work" answer often uses words the question doesn't; it may take more).
    how = bool(each_method) or any(kind is states_approach for _, kind in parts)
    if how:
        limit += MORE_FOR_HOW
    floor = HOW_FLOOR if how else RELATIVE_FLOOR
    for i in range(1, min(limit, len(ranked))):
        if len(chosen) >= limit:
            break
        same = ranked[i][1] == ranked[0][1]
        if same and i not in chosen and ranked[i][0].score >= floor * ranked[0][0].score:
            chosen.append(i)
    if how:
        # How each paper does it: the sentence after the one presenting its method says more
        # (on bench/qa/tune2.jsonl, method questions' facts 0.60 -> 0.85; tune unchanged).
        for i in list(chosen):
            if not states_approach(ranked[i][0].text):
                continue
            nxt = _after(ranked, i)
            if nxt is not None and nxt not in chosen:
                chosen.append(nxt)
        # A quoted problem ("sampling them is costly") is followed by how the paper overcomes
        # it, when the next sentence says so ("we overcome these limitations by ...").
        for i in list(chosen):
            nxt = _after(ranked, i)
            if nxt is not None and nxt not in chosen and overcomes_problem(ranked[nxt][0].text):
                chosen.append(nxt)
    return [ranked[i] for i in chosen]


def _after(ranked: Sequence[tuple[Sentence, int]], i: int) -> int | None:
    """The sentence right after sentence `i` in its abstract, when it is among `ranked`."""
    sentence, n = ranked[i]
    after = [
        j for j in range(len(ranked)) if ranked[j][1] == n and ranked[j][0].start >= sentence.end
    ]
    return min(after, key=lambda j: ranked[j][0].start, default=None)


def _before(ranked: Sequence[tuple[Sentence, int]], i: int) -> int | None:
    """The sentence right before sentence `i` in its abstract, when `i` takes up the problem
    that sentence states ("To address this challenge, ...") and it is among `ranked`."""
    sentence, n = ranked[i]
    if not takes_up_problem(sentence.text):
        return None
    before = [
        j for j in range(len(ranked)) if ranked[j][1] == n and ranked[j][0].end <= sentence.start
    ]
    return max(before, key=lambda j: ranked[j][0].start, default=None)


def answering_sentences(
    question: str, sentences: Sequence[str], weights: TermWeights, *, max_sentences: int = 2
) -> list[str]:
    """The sentences of one abstract that answer `question` (`cover_question` over them, scored
    as the context scores sentences); none when no sentence shares a term with it."""
    asked = weights.terms(question)
    scored = []
    for i, text in enumerate(sentences):
        if looks_like_injection(text) or (is_link(text) and not asks_for_code(question)):
            continue
        scored.append((Sentence(text, i, i, overlap_score(asked, text, weights)), 1))
    ranked = sorted(scored, key=lambda item: -item[0].score)
    if not ranked or ranked[0][0].score <= 0:
        return []
    chosen = cover_question(question, ranked, weights, max_sentences=max_sentences)
    return [s.text for s, _ in sorted(chosen, key=lambda item: item[0].start)]


# "each other" is reciprocal: it says nothing of how many papers are asked about.
_SEVERAL = re.compile(
    r"\b(both|each(?!\s+other\b)|either|neither|several|two|three)\b", re.IGNORECASE
)


def about_several(question: str) -> bool:
    """Whether a question is about several papers: it compares them, or says "both", "each"."""
    return wants_comparison(question) or bool(_SEVERAL.search(question))


_SEVERAL_PAPERS = re.compile(
    r"\b(?:papers|works|studies|articles|both|each(?!\s+other\b)|either|neither)\b",
    re.IGNORECASE,
)


def about_one(question: str) -> bool:
    """Whether a question is about one paper (unless it names several): it compares nothing,
    asks about no papers in the plural and says no "both" or "each" (how many things it asks of
    its paper does not matter: "which two losses does it use")."""
    return not wants_comparison(question) and not _SEVERAL_PAPERS.search(question)


def paper_name(title: str) -> str:
    """The name a paper goes by when its title gives one ("HeadCut: Pruning Heads ..." ->
    "HeadCut"); empty otherwise."""
    head, sep, _ = safe_title(title).partition(":")
    return head.strip() if sep and 1 <= len(head.split()) <= 3 else ""


def _named(text: str, name: str) -> str:
    """A quoted sentence labelled with its paper's name, unless it already says the name."""
    return text if not name or name.lower() in text.lower() else f"{name}: {text}"


def _states_amount(sentence: str) -> bool:
    return bool(_NUMBER.search(sentence))


# "Which <...> <plural noun>" asks for several things ("which tasks", "what sorts of inputs");
# an abstract gives them as an enumeration ("A, B and C", "(e.g., A, B)", "such as A").
_ASKS_PLURAL = re.compile(
    r"\b(?:which|what)\s+((?:[\w-]+\s+){0,3}?)([a-z]{2,}[^s\W]s)\b", re.IGNORECASE
)
_AUXILIARIES = frozenset("does has is was are were do did".split())
_ENUMERATION = re.compile(
    r"[\w)-]+,\s+[^,.;]{1,40},?\s+(?:and|or)\s+\w"
    r"|\((?:e\.g\.,?\s*)?[^()]{2,40},\s*[^()]{2,40}\)"
    r"|\b(?:such as|including|namely)\b"
)


def _asks_several(part: str) -> bool:
    """Whether a question part asks for several things of a kind ("which tasks")."""
    for match in _ASKS_PLURAL.finditer(part):
        words = [*match.group(1).lower().split(), match.group(2).lower()]
        if not any(w in FUNCTION_WORDS or w in _AUXILIARIES for w in words):
            return True
    return False


# "What does FooNet stand for?", "what is QZR short for?": the sentence that spells the name out.
_ASKS_EXPANSION = re.compile(
    r"\bstands?\s+for\b|\bexpand(?:s|ed)?\s+to\b|\bshort\s+for\b|\b(?:acronym|abbreviation)\b",
    re.IGNORECASE,
)
# A name and its long form side by side, one in parentheses: "QZR (Quartz Zone Routing)" or
# "Quartz Zone Routing (QZR)".
_SPELLED_OUT = re.compile(
    r"[\w`'’-]+\W{0,2}\s*\((?:[A-Za-z][\w-]*\s+){1,8}[A-Za-z][\w-]*\)"
    r"|\w\s*\([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*\)"
)


def _spells_out(sentence: str) -> bool:
    return bool(_SPELLED_OUT.search(sentence))


def _answer_kind(part: str, short: Collection[str] = ()) -> Callable[[str], bool] | None:
    """What a sentence must state to answer a question part: an amount (also a measured value,
    "what accuracy"), a name ("which datasets"; not one of the `short` forms the abstracts
    define), several things ("which tasks": an enumeration or a name), a method, a name's long
    form, or anything."""
    if asks_amount(part):
        return _states_amount
    if _ASKS_EXPANSION.search(part):
        return _spells_out
    measures = measured_things(part)
    if measures:  # a number, not the digit of "top-5" in the measure's own name
        unnamed = re.compile("|".join(re.escape(m) for m in measures), re.IGNORECASE)
        return lambda sentence: _states_amount(unnamed.sub(" ", sentence))
    if named_kinds(part):
        return lambda sentence: bool(instance_names(sentence, part, short))
    if _asks_several(part):
        return lambda sentence: bool(
            _ENUMERATION.search(sentence) or instance_names(sentence, part, short)
        )
    if _ASKS_PROBLEM.search(part):
        return states_problem
    if _HOW.search(part):
        return states_approach
    return None


def _kind_terms(part: str, weights: TermWeights) -> set[str]:
    """Words of the sentences that name an instance of the kind a part asks for: the kind's own
    words (a dataset's also those of benchmarks and corpora) and those of experiments
    ("experiments on X", "evaluated on Y")."""
    words: set[str] = set()
    for _, kind in named_kinds(part):
        words |= kind_words(kind)
    return weights.terms(" ".join(sorted(words | EXPERIMENT_WORDS))) if words else set()


def with_marker(text: str, n: int) -> str:
    """`text` cited to passage `n`: the marker before its final full stop."""
    text = text.strip()
    if text and text[-1] in ".!?":
        return f"{text[:-1]} [{n}]{text[-1]}"
    return f"{text} [{n}]."
