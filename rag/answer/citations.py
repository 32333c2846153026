"""Citations, done by the system rather than trusted to the model.

Parses [n], [n, m], [n-m] and [n][m] markers, drops markers that point to no passage, renumbers
references by first appearance (several passages of one paper are one reference), attributes
uncited sentences to the passage that best supports them, and labels each sentence's support.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from rag.answer.context import ContextPassage
from rag.answer.numbers import unstated_numbers
from rag.records import Answer, AnswerSentence, Citation, PaperHit
from rag.text.sentences import split_sentences

MARKER = re.compile(r"\[\s*(\d+(?:\s*(?:[,;]|–|-|and)\s*\d+)*)\s*\]")
SUPPORTED, WEAK, UNSUPPORTED = "supported", "weak", "unsupported"

# similarity(answer sentence, passage sentences) -> best score in [0, 1]
Similarity = Callable[[str, Sequence[str]], float]


@dataclass
class CitedSentence:
    text: str  # without markers
    passages: list[int]  # passage numbers (1-based) cited or attributed, in order
    attributed: bool = False
    support: str = UNSUPPORTED
    support_score: float = 0.0


@dataclass
class CitationResult:
    sentences: list[CitedSentence] = field(default_factory=list)
    passage_to_ref: dict[int, int] = field(default_factory=dict)  # passage n -> reference number
    dropped_markers: list[int] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # why each removed sentence went


def parse_marker_numbers(body: str) -> list[int]:
    """'1, 3' -> [1, 3]; '2-4' -> [2, 3, 4] (bounded)."""
    numbers: list[int] = []
    for part in re.split(r"\s*(?:[,;]|and)\s*", body):
        bounds = re.split(r"\s*[-–]\s*", part.strip())
        if len(bounds) == 2 and all(b.isdigit() for b in bounds):
            low, high = int(bounds[0]), int(bounds[1])
            if low <= high and high - low < 20:
                numbers.extend(range(low, high + 1))
        elif part.strip().isdigit():
            numbers.append(int(part.strip()))
    return numbers


def split_cited_sentences(answer: str) -> list[tuple[str, list[int]]]:
    """Answer sentences with their raw marker numbers; markers that open a sentence belong to
    the sentence before ("... cache. [1] It ...")."""
    pieces: list[tuple[str, list[int]]] = []
    for span in split_sentences(answer.strip()):
        raw = answer.strip()[span.start : span.end]
        leading = re.match(r"^((?:\s*\[[^\]]*\])+)\s*", raw)
        if leading and pieces:
            numbers = [
                n
                for m in MARKER.finditer(leading.group(1))
                for n in parse_marker_numbers(m.group(1))
            ]
            pieces[-1][1].extend(numbers)
            raw = raw[leading.end() :]
        numbers = [n for m in MARKER.finditer(raw) for n in parse_marker_numbers(m.group(1))]
        text = MARKER.sub("", raw)
        text = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()
        if text:
            pieces.append((text, numbers))
    return pieces


def resolve_citations(
    answer: str,
    passage_texts: Sequence[Sequence[str]],
    passage_papers: Sequence[str],
    similarity: Similarity,
    *,
    attribute_threshold: float = 0.45,
    supported_threshold: float = 0.62,
    weak_threshold: float = 0.45,
    generated: bool = False,
    asked_papers: Collection[str] = (),
) -> CitationResult:
    """Turn a model's answer into cited sentences.

    `passage_texts[i]` are the sentences of passage i+1; `passage_papers[i]` its paper id. For
    `generated` text, a sentence no passage supports, or that states a number its passages do
    not state with that unit, is removed (and `removed` says why); so is one that cites none of
    the `asked_papers` (the paper a question about one paper asks about), when given, and one
    that cites it keeps only its markers.
    """
    result = CitationResult()
    n_passages = len(passage_texts)
    asked = set(asked_papers)
    for text, numbers in split_cited_sentences(answer):
        valid: list[int] = []
        for n in numbers:
            if 1 <= n <= n_passages:
                if n not in valid:
                    valid.append(n)
            else:
                result.dropped_markers.append(n)
        sentence = CitedSentence(text, valid)
        if not valid and n_passages:
            scores = [similarity(text, passage_texts[i]) for i in range(n_passages)]
            best = max(range(n_passages), key=lambda i: scores[i])
            if scores[best] >= attribute_threshold:
                sentence.passages = [best + 1]
                sentence.attributed = True
        if generated and asked & {passage_papers[n - 1] for n in sentence.passages}:
            # On a question about one paper, a sentence that cites it is about it: the markers of
            # other papers beside its own only add papers nobody asked about.
            sentence.passages = [n for n in sentence.passages if passage_papers[n - 1] in asked]
        if sentence.passages:
            score = max(similarity(text, passage_texts[n - 1]) for n in sentence.passages)
            sentence.support_score = score
            sentence.support = (
                SUPPORTED
                if score >= supported_threshold
                else WEAK
                if score >= weak_threshold
                else UNSUPPORTED
            )
        if generated:
            reason = removal_reason(sentence, passage_texts)
            cited = {passage_papers[n - 1] for n in sentence.passages}
            if not reason and asked_papers and cited and not cited & set(asked_papers):
                reason = f'Removed "{sentence.text}": it is about another paper.'
            if reason:
                if reason not in result.removed:
                    result.removed.append(reason)
                continue
        result.sentences.append(sentence)

    # Renumber by first appearance; passages of the same paper share one reference.
    paper_ref: dict[str, int] = {}
    for sentence in result.sentences:
        for n in sentence.passages:
            paper = passage_papers[n - 1]
            if paper not in paper_ref:
                paper_ref[paper] = len(paper_ref) + 1
            result.passage_to_ref[n] = paper_ref[paper]
    return result


def removal_reason(sentence: CitedSentence, passage_texts: Sequence[Sequence[str]]) -> str:
    """Why a generated sentence may not stay ('' when it may): no passage supports it, or it
    states a number that its cited passages do not state with the same unit."""
    if sentence.support == UNSUPPORTED:
        return f'Removed "{sentence.text}": no cited passage supports it.'
    cited = [text for n in sentence.passages for text in passage_texts[n - 1]]
    wrong = unstated_numbers(sentence.text, cited)
    if wrong:
        return f'Removed "{sentence.text}": the cited passage does not state {", ".join(wrong)}.'
    return ""


def render_sentence(text: str, refs: Sequence[int]) -> str:
    """'Cake cuts TTFT.' + [1, 2] -> 'Cake cuts TTFT [1][2].'"""
    if not refs:
        return text
    markers = "".join(f"[{r}]" for r in dict.fromkeys(refs))
    if text and text[-1] in ".!?":
        return f"{text[:-1]} {markers}{text[-1]}"
    return f"{text} {markers}"


def lexical_containment(sentence: str, passage_sentences: Sequence[str]) -> float:
    """Share of the sentence's words found in the best-matching passage sentence."""
    words = re.findall(r"\w+", sentence.lower())
    if not words:
        return 0.0
    best = 0.0
    for passage in passage_sentences:
        vocabulary = set(re.findall(r"\w+", passage.lower()))
        best = max(best, sum(1 for w in words if w in vocabulary) / len(words))
    return best


_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def numbers_missing(sentence: str, passage_sentences: Sequence[str]) -> bool:
    """Whether the sentence states a number that none of the passage sentences contains."""
    passage_numbers = {n for p in passage_sentences for n in _NUMBER.findall(p)}
    return any(n not in passage_numbers for n in _NUMBER.findall(sentence))


class EmbeddingSimilarity:
    """Similarity of an answer sentence to passage sentences: the best of embedding cosine and
    word containment, capped below 'supported' when the sentence invents a number."""

    def __init__(self, embed: Callable[[list[str]], object], *, cap: float = 0.55) -> None:
        self._embed = embed
        self._cache: dict[str, object] = {}
        self._cap = cap

    def prime(self, texts: Sequence[str]) -> None:
        """Embed many texts in one batch (faster than one by one)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vectors = self._embed(missing)
            for text, vector in zip(missing, vectors, strict=True):  # type: ignore[call-overload]
                self._cache[text] = vector

    def __call__(self, sentence: str, passage_sentences: Sequence[str]) -> float:
        if not passage_sentences:
            return 0.0
        contained = lexical_containment(sentence, passage_sentences)
        if contained >= 0.95:
            score = 1.0
        else:
            self.prime([sentence, *passage_sentences])
            query = self._cache[sentence]
            cosine = max(float(query @ self._cache[p]) for p in passage_sentences)  # type: ignore[operator]
            score = max(cosine, contained * 0.9)
        if numbers_missing(sentence, passage_sentences):
            score = min(score, self._cap)
        return score


def citation_for(
    ref: int,
    hit: PaperHit,
    passage: str,
    *,
    attributed: bool = False,
    spans: Sequence[tuple[int, int]] = (),
    supporting: Sequence[str] = (),
) -> Citation:
    """Reference `ref` to the paper of `hit`, supported by `passage` (text of its abstract)."""
    return Citation(
        n=ref,
        paper_id=hit.paper_id,
        title=hit.title,
        authors=list(hit.authors),
        url=hit.url,
        passage=passage,
        attributed=attributed,
        status=hit.status,
        pmlr_url=hit.pmlr_url,
        venue=hit.venue,
        spans=list(spans),
        supporting=list(supporting),
    )


def passage_slots(
    passages: Sequence[ContextPassage], *, numbered: bool = False
) -> tuple[list[list[str]], list[str]]:
    """The sentences and paper of each passage slot: marker [n] means the n-th passage, or, when
    `numbered`, the passage whose `n` is n (prose about an answer's references)."""
    if not numbered:
        return [[s.text for s in p.sentences] for p in passages], [p.paper_id for p in passages]
    by_number = {p.n: p for p in passages}
    slots = range(1, max(by_number, default=0) + 1)
    texts = [[s.text for s in by_number[n].sentences] if n in by_number else [] for n in slots]
    return texts, [by_number[n].paper_id if n in by_number else "" for n in slots]


def checked_sentence(
    sentence: str,
    passage_texts: Sequence[Sequence[str]],
    papers: Sequence[str],
    similarity: Similarity,
    asked_papers: Collection[str] = (),
) -> str:
    """A generated sentence as it may be shown before the answer is complete: without markers,
    or '' when the final answer would remove it (see `resolve_citations`)."""
    resolved = resolve_citations(
        sentence, passage_texts, papers, similarity, generated=True, asked_papers=asked_papers
    )
    return " ".join(s.text for s in resolved.sentences)


def cite_answer(
    result: Answer,
    raw: str,
    passages: Sequence[ContextPassage],
    similarity: Similarity,
    asked_papers: Collection[str] = (),
) -> None:
    """Fill `result`'s sentences, citations and text from `raw` (with [n] markers to passages);
    a generated (not extractive) answer keeps only the sentences its passages support (and,
    with `asked_papers`, that cite one of them)."""
    passage_texts = [[s.text for s in p.sentences] for p in passages]
    resolved = resolve_citations(
        raw,
        passage_texts,
        [p.paper_id for p in passages],
        similarity,
        generated=not result.extractive,
        asked_papers=asked_papers,
    )
    result.removed += resolved.removed
    by_ref: dict[int, Citation] = {}
    result.sentences = []
    for sentence in resolved.sentences:
        refs = [resolved.passage_to_ref[n] for n in sentence.passages]
        result.sentences.append(AnswerSentence(sentence.text, sorted(set(refs)), sentence.support))
        for n in sentence.passages:
            ref = resolved.passage_to_ref[n]
            passage = passages[n - 1]
            citation = by_ref.get(ref)
            if citation is None:
                citation = by_ref[ref] = citation_for(
                    ref,
                    passage.hit,
                    passage.text,
                    attributed=sentence.attributed,
                    spans=[(s.start, s.end) for s in passage.sentences],
                )
            elif not sentence.attributed:
                citation.attributed = False
            citation.supporting.append(sentence.text)
    result.citations = [by_ref[r] for r in sorted(by_ref)]
    result.answer = " ".join(render_sentence(s.text, s.citations) for s in result.sentences)


def cite_prose(
    raw: str, passages: Sequence[ContextPassage], similarity: Similarity
) -> tuple[str, list[AnswerSentence], list[str]]:
    """Generated prose about passages whose numbers already are the answer's references
    (`passage.n`): markers that point to no passage are dropped, an uncited sentence is
    attributed to the passage that supports it, a sentence no passage supports (or with a
    number they do not state) is removed. Returns the text with its markers rendered, its
    sentences, and why each removed sentence went."""
    passage_texts, papers = passage_slots(passages, numbered=True)
    by_number = {p.n for p in passages}
    resolved = resolve_citations(raw, passage_texts, papers, similarity, generated=True)
    sentences = [
        AnswerSentence(cs.text, sorted(n for n in cs.passages if n in by_number), cs.support)
        for cs in resolved.sentences
    ]
    text = " ".join(render_sentence(s.text, s.citations) for s in sentences)
    return text, sentences, resolved.removed
