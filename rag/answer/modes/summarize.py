"""Summarize mode: the relevant papers grouped into themes, one cited line each (its approach and
key result, quoted), an overview from the LLM when there is one, and a bibliography."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from rag.answer.bibtex import bibtex, format_bibliography
from rag.answer.citations import citation_for
from rag.answer.context import TermWeights, format_passages
from rag.answer.intent import summary_topic, topic_of
from rag.answer.modes.base import ModeInput, ModeTools, stream_checked
from rag.answer.modes.quotes import classify, quote_support, short_title
from rag.answer.refusal import ASKING_WORDS
from rag.answer.relevance import resembling_core
from rag.answer.safety import safe_title
from rag.errors import PaperTalkError
from rag.records import AnswerEvent, AnswerSentence, Citation, PaperHit
from rag.text.terms import FUNCTION_WORDS, letter_compounds_joined

# Fewer papers than this are one theme.
MIN_THEMED = 4
# Papers summarized line by line (the most relevant first); further relevant papers are named
# after them. On bench/qa/tune.jsonl and tune3.jsonl (summaries), 10 against 12: papers on topic
# 0.71 / 0.69 -> 0.80 / 0.72, on-topic papers covered 0.79 / 0.83 -> 0.78 / 0.81 (8: 0.85 / 0.76
# on topic, 0.68 / 0.77 covered).
MAX_SUMMARIZED = 10
# Further relevant papers named after the summary, at most (a broad topic has hundreds).
MAX_NAMED = 25
# When no paper is about the whole request, this many of the closest papers are summarized.
CLOSEST = 5


def run(inp: ModeInput, tools: ModeTools) -> Iterator[AnswerEvent]:
    result = inp.result
    if inp.picked:  # "Summarize them": the papers of the previous answer, as they came
        n = len(inp.hits)
        intro = f"The {n} papers of the previous answer:" if n > 1 else ""
        yield from _summarize(inp, tools, list(inp.hits), intro, topic_of(inp.query))
        return
    decision = tools.judge_papers(summary_topic(inp.question), inp.hits, inp.config, inp.filters)
    relevant = decision.relevant
    if not relevant:
        # No paper covers the whole request (often several topics at once): summarize the
        # closest papers, and say so.
        relevant = decision.closest(CLOSEST, tools.settings.min_similarity)
        if not relevant:
            yield inp.refuse(f"no paper is about this ({decision.rule()})")
            return
        result.refusal_reason = ""
        parts_intro = "No paper covers all of this; the closest papers:"
    else:
        parts_intro = ""
        if len(relevant) > MAX_SUMMARIZED and not decision.rated:  # its core first (rated
            # papers are rated by how they resemble the core already)
            relevant = resembling_core(
                relevant, tools.paper_vectors([h.paper_id for h in relevant])
            )
    yield from _summarize(inp, tools, relevant, parts_intro, summary_topic(inp.question))


def _summarize(
    inp: ModeInput, tools: ModeTools, relevant: list[PaperHit], parts_intro: str, topic: str
) -> Iterator[AnswerEvent]:
    """The themed summary of `relevant` (most relevant first; those beyond MAX_SUMMARIZED are
    only named), themes named by what they share beyond `topic`."""
    result = inp.result
    more = relevant[MAX_SUMMARIZED:]
    relevant = relevant[:MAX_SUMMARIZED]
    parts: list[str] = [parts_intro] if parts_intro else []
    citations: list[Citation] = []
    ref_of: dict[str, int] = {}
    for theme, members in group_by_theme(tools, relevant, topic):
        noun = "paper" if len(members) == 1 else "papers"
        if len(relevant) > 1:  # one paper is no theme
            parts.append(f"**{theme}** ({len(members)} {noun}).")
        for hit in members:
            ref = ref_of.setdefault(hit.paper_id, len(ref_of) + 1)
            sentences = tools.abstract_sentences(hit.paper_id)
            cells = {k: without_opener(v) for k, v in classify(sentences).items()}
            line = cells.get("approach") or (
                without_opener(sentences[0]) if sentences else safe_title(hit.title)
            )
            result_line = cells.get("key result")
            text = f"- {short_title(hit.title)}: {line} [{ref}]"
            if result_line and result_line != line:
                text += f" {result_line} [{ref}]"
            parts.append(text)
            supporting = [line] + ([result_line] if result_line and result_line != line else [])
            citations.append(citation_for(ref, hit, " ".join(supporting), supporting=supporting))
            for quote in supporting:  # labelled by checking the quote against the abstract
                result.sentences.append(
                    AnswerSentence(quote, [ref], quote_support(quote, sentences))
                )
        parts.append("")
    if more:
        named = "; ".join(short_title(h.title) for h in more[:MAX_NAMED])
        rest = f"; and {len(more) - MAX_NAMED} more" if len(more) > MAX_NAMED else ""
        parts.append(f"Also about this ({len(more)} more): {named}{rest}")
    body = "\n".join(parts).strip()
    inp.clock.mark("first_token")
    yield AnswerEvent("token", text=body)
    overview = ""
    if not tools.is_extractive:
        ordered = [p for c in citations for p in inp.passages if p.paper_id == c.paper_id]
        for p in ordered:
            p.n = ref_of[p.paper_id]
        try:
            yield AnswerEvent("token", text="\n\n")
            values = {"passages": format_passages(ordered), "question": inp.question}
            check = tools.sentence_check(ordered, inp.question, numbered=True)
            pieces = tools.generate("summarize", values, inp.config)
            overview = yield from stream_checked(pieces, check, inp.clock)
        except PaperTalkError as exc:
            result.error = str(exc)
        overview = tools.guard(" ".join(overview.split()), ordered, inp.question)
        if overview:
            overview, checked, removed = tools.cite_prose(overview, ordered)
            result.sentences += checked
            result.removed += removed
    result.citations = citations
    result.answer = "\n\n".join(x for x in (body, overview, format_bibliography(citations)) if x)
    result.bibtex = bibtex(citations)
    yield inp.final()


def group_by_theme(
    tools: ModeTools, hits: Sequence[PaperHit], topic: str = ""
) -> list[tuple[str, list[PaperHit]]]:
    """Greedy clustering of papers by title+passage embedding similarity; each theme is named
    by what its papers share beyond the topic itself."""
    if len(hits) <= 1:
        return [("Papers", list(hits))]
    texts = [f"{h.title}. {h.passages[0].text if h.passages else ''}" for h in hits]
    vectors = np.asarray(tools.embed(texts), dtype=np.float64)
    # Average-linkage clustering on cosine distance, cut into about sqrt(n) themes: a summary
    # of a dozen papers reads as three or four groups, whatever the topic's spread.
    from scipy.cluster.hierarchy import fcluster, linkage  # deferred: scipy loads in ~0.3 s

    wanted = max(1, round(len(hits) ** 0.5)) if len(hits) >= MIN_THEMED else 1
    labels = fcluster(linkage(vectors, method="average", metric="cosine"), wanted, "maxclust")
    groups: list[list[int]] = []
    for label in dict.fromkeys(labels):  # themes in the order of their best paper
        groups.append([i for i in range(len(hits)) if labels[i] == label])
    weights = tools.weights()
    asked = weights.terms(topic)
    named: list[tuple[str, list[PaperHit]]] = []
    for members in groups:
        papers = [hits[i] for i in members]
        texts_of = [f"{h.title}. {' '.join(tools.abstract_sentences(h.paper_id))}" for h in papers]
        taken = {name.lower() for name, _ in named}
        named.append((theme_name(papers, texts_of, weights, asked, taken), papers))
    return named


_LABEL_WORD = re.compile(r"\b[A-Za-z](?:[A-Za-z]|-(?=[A-Za-z])){2,}\b")
_URL = re.compile(r"https?://\S+|\S+\.(?:com|org|io|net)\S*")
# Words of the stock phrases abstracts share whatever their topic ("Recent advances in ...",
# "extensive experiments demonstrate ..."): they name no theme.
_STOCK_WORDS = frozenset(
    """recent recently advance advances advancement advancements existing extensive experiments
    experimental results demonstrate demonstrates novel significant significantly superior
    promising remarkable impressive various numerous wide widely""".split()
)
_NOT_LABELS = ASKING_WORDS | FUNCTION_WORDS | _STOCK_WORDS
# A theme name read on to the end of the topic's name ("pruning large language models") has at
# most this many words.
MAX_LABEL_WORDS = 4


def theme_name(
    members: Sequence[PaperHit],
    texts: Sequence[str],
    weights: TermWeights,
    asked: AbstractSet[str] = frozenset(),
    taken: AbstractSet[str] = frozenset(),
) -> str:
    """What a theme's papers do: the phrase (two or three adjacent words, else one word) that
    most of them use (titles count more), weighted by how distinctive its words are in the
    collection; a phrase may hold a word of the topic asked about but not only such words, and
    a name in `taken` (an earlier theme's) is not used again. A one-paper theme is named by its
    title."""
    if len(members) == 1:
        return short_title(members[0].title)
    share: dict[tuple[str, ...], float] = {}  # members using it, title uses counting 1.5
    members_with: Counter[tuple[str, ...]] = Counter()
    in_titles: set[tuple[str, ...]] = set()  # a label says what a paper's title says
    surface: dict[tuple[str, ...], Counter[str]] = {}
    for hit, text in zip(members, texts, strict=True):
        seen: set[tuple[str, ...]] = set()
        for source, weight in ((hit.title, 1.5), (text, 1.0)):
            for key, written in _phrases(_URL.sub(" ", source), weights, asked):
                surface.setdefault(key, Counter())[written] += 1
                if source is hit.title:
                    in_titles.add(key)
                if key not in seen:
                    seen.add(key)
                    members_with[key] += 1
                    share[key] = share.get(key, 0.0) + weight

    def rarity(key: tuple[str, ...]) -> float:
        return min(weights.idf(t) for t in key if t not in asked)

    def score(key: tuple[str, ...]) -> tuple[float, int, tuple[str, ...]]:
        return (share[key] * rarity(key), -len(key), key)

    def shown(key: tuple[str, ...]) -> str:
        return _first_upper(surface[key].most_common(1)[0][0])

    # Words that more than about one paper in seven of the collection uses (IDF below 2) say
    # little about a theme ("large", "language").
    usable = [k for k in share if shown(k).lower() not in taken and rarity(k) >= 2.0]
    telling = [k for k in usable if members_with[k] >= 2 and k in in_titles]
    phrases = [k for k in telling if len(k) > 1]
    # A phrase that most of the theme's abstracts write names it as well, when no title shares
    # one.
    phrases = phrases or [
        k for k in usable if len(k) > 1 and members_with[k] >= max(2, len(members) / 2)
    ]
    if phrases:
        best = max(phrases, key=score)
        # The longer phrase the same papers write says it whole ("stochastic differential
        # equations", not "stochastic differential").
        longer = [
            k
            for k in phrases
            if len(k) == len(best) + 1
            and best in (k[:-1], k[1:])
            and members_with[k] == members_with[best]
        ]
        return shown(max(longer, key=score) if longer else best)
    singles = [k for k in telling if len(k) == 1]
    return shown(max(singles, key=score)) if singles else "Other approaches"


# Punctuation ends a phrase: no label spans "learning (MARL)" or "tasks, models".
_SEGMENT = re.compile(r"[^\w\s-]+")


def _phrases(
    text: str, weights: TermWeights, asked: AbstractSet[str]
) -> list[tuple[tuple[str, ...], str]]:
    """The one- to three-word phrases of `text` that could name a theme (stemmed key, words as
    shown): no function or asking word in them, not made of asked words only (a single word
    not asked at all), and not cutting the topic's name in two: "pruning large language" is
    shown to the name's end, "pruning large language models" (MAX_LABEL_WORDS at most)."""
    found = []
    for segment in _SEGMENT.split(letter_compounds_joined(text)):
        words = _LABEL_WORD.findall(segment)
        stems = weights.tokenize(words) if words else []  # one token list per word

        # at[j + 1]: whether word j is asked about (False one past either end)
        at = [False, *(bool(st) and st[0] in asked for st in stems), False]

        for i in range(len(words)):
            for n in (1, 2, 3):
                run = list(zip(words[i : i + n], stems[i : i + n], strict=True))
                if len(run) < n or any(not st or w.lower() in _NOT_LABELS for w, st in run):
                    break
                key = tuple(st[0] for _, st in run)
                if set(key) <= asked or (n == 1 and key[0] in asked):
                    continue
                # Two asked words at either end, and the run of asked words goes on: the phrase
                # cuts the topic's name.
                if at[i] and at[i + 1]:
                    continue
                shown = [w for w, _ in run]
                if at[i + n] and at[i + n + 1]:  # shown to the end of the name
                    end = i + n
                    while end < len(words) and at[end + 1]:
                        end += 1
                    shown = words[i:end]
                    if len(shown) > MAX_LABEL_WORDS or any(w.lower() in _NOT_LABELS for w in shown):
                        continue
                found.append((key, " ".join(_label_case(w) for w in shown)))
    return found


def _label_case(word: str) -> str:
    """A word as a label shows it: lowercase, unless it is written with capitals inside (MoE,
    LLMs, GFlowNet), which name something."""
    return word if any(c.isupper() for c in word[1:]) else word.lower()


def _first_upper(label: str) -> str:
    """`label` with its first letter capitalised and the rest as written ("MoE and devices")."""
    return label[:1].upper() + label[1:]


# A discourse opener ties a sentence to the one before it in the abstract ("However, ...", "To
# address this, ..."): out of context it reads wrongly, so quoted lines start after it.
_OPENER = re.compile(
    r"^(?:however|in contrast|consequently|additionally|furthermore|moreover|nevertheless|"
    r"instead|therefore|thus|hence|to this end|in this (?:work|paper)|specifically|in particular|"
    r"accordingly|as a result|in response|"
    r"to (?:address|tackle|overcome|solve|mitigate|bridge|fill) (?:this|these|that|the)"
    r"(?: [\w-]+){0,3}|"
    r"(?:motivated|inspired|guided|driven|based|building|built|grounded) (?:by|on|upon) "
    r"(?:this|these|that|those|such)(?: [\w-]+){0,3})\s*,\s*",
    re.IGNORECASE,
)


def without_opener(sentence: str) -> str:
    """The sentence without a leading discourse opener, capitalised."""
    rest = _OPENER.sub("", sentence.strip(), count=1)
    return rest[:1].upper() + rest[1:] if rest else sentence
