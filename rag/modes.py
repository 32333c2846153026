"""Compare and summarize modes.

The system builds the structure (a comparison table, a themed summary with a bibliography) from
the abstracts' own sentences, every cell and line cited; a generative LLM only adds a short
contrast or overview. A 135M model cannot be trusted with tables, and the extractive backend
needs none.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rag.chunking import split_sentences
from rag.context import ContextPassage, format_passages
from rag.errors import PaperTalkError
from rag.injection import escape_passage_text, looks_like_injection, safe_title, strip_injection
from rag.records import PaperHit

if TYPE_CHECKING:
    from rag.answer import Answer, Answerer, AnswerEvent, Citation

COLUMNS = ("problem", "approach", "data/setting", "key result")
_CUES: dict[str, re.Pattern[str]] = {
    "problem": re.compile(
        r"\b(challeng|problem|limit|however|remain|lack|suffer|issue|gap|difficult|costly|"
        r"bottleneck|fail|hinder|constrain|struggl|expensive)",
        re.I,
    ),
    "approach": re.compile(
        r"\b(we (propose|present|introduce|develop|design|study|analy[sz]e|provide)|this paper|"
        r"our (method|approach|framework)|framework|introduces|proposes|we show that|called|"
        r"termed|named)\b",
        re.I,
    ),
    "data/setting": re.compile(
        r"\b(dataset|benchmark|experiment|evaluat|tasks?|simulat|real-world|synthetic|setting|"
        r"MNIST|ImageNet|CIFAR|models? (such as|like)|systems?)\b",
        re.I,
    ),
    "key result": re.compile(
        r"(\d|\b(outperform|improv|achiev|reduc|speed|faster|state-of-the-art|surpass|"
        r"demonstrat|significant|better|gain|accura))",
        re.I,
    ),
}
MAX_CELL_WORDS = 28


def abstract_sentences(answerer: Answerer, paper_id: str) -> list[str]:
    """All sentences of a paper's abstract, from the lexical index's chunk table."""
    table = answerer.searcher.lexical.table
    rows = sorted(
        (table.starts[i], table.texts[i])
        for i, pid in enumerate(table.paper_ids)
        if pid == paper_id
    )
    sentences: list[str] = []
    seen: set[str] = set()
    for _, text in rows:
        for span in split_sentences(text):
            # Instructions to a model are cut out: they are never quoted in a table or summary.
            sentence = strip_injection(text[span.start : span.end])
            if sentence and sentence not in seen:
                seen.add(sentence)
                sentences.append(sentence)
    return sentences


def classify(sentences: Sequence[str]) -> dict[str, str]:
    """One sentence per column: the first sentence matching the column's cues, unused ones first."""
    cells: dict[str, str] = {}
    used: set[int] = set()
    for column in ("approach", "key result", "problem", "data/setting"):
        pattern = _CUES[column]
        candidates = [i for i, s in enumerate(sentences) if pattern.search(s)]
        if column == "key result":
            candidates = sorted(candidates, key=lambda i: -i)  # results come late in abstracts
        if column == "problem" and not candidates and sentences:
            candidates = [0]
        choice = next((i for i in candidates if i not in used), None)
        if choice is None and candidates:
            choice = candidates[0]
        if choice is not None:
            used.add(choice)
            cells[column] = shorten(sentences[choice])
    return cells


def shorten(sentence: str) -> str:
    words = sentence.split()
    text = sentence if len(words) <= MAX_CELL_WORDS else " ".join(words[:MAX_CELL_WORDS]) + " …"
    return text.replace("|", "/").replace("\n", " ")


def quote_citation(ref: int, hit: PaperHit, quoted: list[str]) -> Citation:
    """Reference `ref` to `hit`, whose passage is the abstract sentences quoted from it."""
    from rag.answer import Citation

    return Citation(
        ref,
        hit.paper_id,
        hit.title,
        list(hit.authors),
        hit.url,
        " ".join(quoted),
        attributed=False,
        status=hit.status,
        pmlr_url=hit.pmlr_url,
        supporting=quoted,
    )


def short_title(title: str) -> str:
    head = safe_title(title).partition(":")[0].strip().replace("|", "/")
    return head if len(head) <= 60 else head[:57] + "…"


def stream_compare(
    answerer: Answerer,
    question: str,
    hits: Sequence[PaperHit],
    passages: Sequence[ContextPassage],
    result: Answer,
    started: float,
    timings: dict[str, float],
) -> Iterator[AnswerEvent]:
    from rag.answer import AnswerEvent

    papers = list(hits[: max(2, min(4, len(hits)))])
    if len(papers) < 2:
        result.refused = True
        from rag.refusal import CANNOT_ANSWER

        result.answer = CANNOT_ANSWER
        result.related = list(hits)
        timings["first_token"] = timings["total"] = _ms(started)
        result.timings_ms = timings
        yield AnswerEvent("final", answer=result)
        return
    header = "| paper | " + " | ".join(COLUMNS) + " |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 1)]
    citations = []
    for ref, hit in enumerate(papers, start=1):
        sentences = abstract_sentences(answerer, hit.paper_id)
        cells = classify(sentences)
        row = [f"{short_title(hit.title)} [{ref}]"]
        row += [f"{cells[c]} [{ref}]" if c in cells else "—" for c in COLUMNS]
        lines.append("| " + " | ".join(row) + " |")
        used = [cells[c] for c in COLUMNS if c in cells]
        citations.append(quote_citation(ref, hit, used))
    table = "\n".join(lines)
    timings["first_token"] = _ms(started)
    yield AnswerEvent("token", text=table + "\n\n")
    contrast = yield from _contrast(answerer, question, papers, passages, result)
    result.citations = citations
    result.answer = table + ("\n\n" + contrast if contrast else "")
    _sentences_for_table(result, papers)
    timings["total"] = _ms(started)
    result.timings_ms = timings
    yield AnswerEvent("final", answer=result)


def _contrast(
    answerer: Answerer,
    question: str,
    papers: Sequence[PaperHit],
    passages: Sequence[ContextPassage],
    result: Answer,
) -> Generator[AnswerEvent, None, str]:
    """A sentence or two of contrast: from the LLM when there is one, else from the table."""
    from rag.answer import AnswerEvent

    names = ", ".join(f"[{i}] {short_title(h.title)}" for i, h in enumerate(papers, start=1))
    if answerer.is_extractive:
        text = (
            f"The papers differ in approach: see the rows above for {names}; each cell quotes its "
            "abstract."
        )
        yield AnswerEvent("token", text=text)
        return text
    # Renumber passages so [i] is the i-th compared paper.
    ordered = [p for h in papers for p in passages if p.paper_id == h.paper_id]
    for i, p in enumerate(ordered, start=1):
        p.n = i
    text = ""
    try:
        for piece in answerer.generate(
            answerer.messages(
                "compare_user",
                passages=format_passages(ordered),
                question=question,
                papers=escape_passage_text(names),
            )
        ):
            text += piece
            yield AnswerEvent("token", text=piece)
    except PaperTalkError as exc:
        result.error = str(exc)
    return answerer.guard(" ".join(text.split()), ordered, question)


def _sentences_for_table(result: Answer, papers: Sequence[PaperHit]) -> None:
    from rag.answer import AnswerSentence

    for citation in result.citations:
        for text in citation.supporting:
            result.sentences.append(AnswerSentence(text, [citation.n], "supported"))


def stream_summarize(
    answerer: Answerer,
    question: str,
    hits: Sequence[PaperHit],
    passages: Sequence[ContextPassage],
    result: Answer,
    started: float,
    timings: dict[str, float],
) -> Iterator[AnswerEvent]:
    from rag.answer import AnswerEvent, AnswerSentence

    relevant = [h for h in hits if h.dense_similarity >= answerer.settings.min_similarity]
    relevant = relevant or list(hits[:1])
    themes = group_by_theme(answerer, relevant)
    parts: list[str] = []
    citations: list[Citation] = []
    ref_of: dict[str, int] = {}
    for theme, members in themes:
        parts.append(f"**{theme}**")
        for hit in members:
            ref = ref_of.setdefault(hit.paper_id, len(ref_of) + 1)
            sentences = abstract_sentences(answerer, hit.paper_id)
            cells = classify(sentences)
            line = cells.get("approach") or (sentences[0] if sentences else safe_title(hit.title))
            result_line = cells.get("key result")
            text = f"- {short_title(hit.title)}: {line} [{ref}]"
            if result_line and result_line != line:
                text += f" {result_line} [{ref}]"
            parts.append(text)
            supporting = [line] + ([result_line] if result_line and result_line != line else [])
            citations.append(quote_citation(ref, hit, supporting))
            for s in supporting:
                result.sentences.append(AnswerSentence(s, [ref], "supported"))
        parts.append("")
    body = "\n".join(parts).strip()
    timings["first_token"] = _ms(started)
    yield AnswerEvent("token", text=body)
    overview = ""
    if not answerer.is_extractive:
        ordered = [p for c in citations for p in passages if p.paper_id == c.paper_id]
        for p in ordered:
            p.n = next(c.n for c in citations if c.paper_id == p.paper_id)
        try:
            yield AnswerEvent("token", text="\n\n")
            for piece in answerer.generate(
                answerer.messages(
                    "summarize_user", passages=format_passages(ordered), question=question
                )
            ):
                overview += piece
                yield AnswerEvent("token", text=piece)
        except PaperTalkError as exc:
            result.error = str(exc)
    bibliography = format_bibliography(citations)
    result.citations = citations
    overview = answerer.guard(" ".join(overview.split()), passages, question) if overview else ""
    result.answer = "\n\n".join(x for x in (body, overview, bibliography) if x)
    result.bibtex = bibtex(citations)
    timings["total"] = _ms(started)
    result.timings_ms = timings
    yield AnswerEvent("final", answer=result)


def group_by_theme(
    answerer: Answerer, hits: Sequence[PaperHit]
) -> list[tuple[str, list[PaperHit]]]:
    """Greedy clustering of papers by title+passage embedding similarity; each theme is named by
    the most distinctive word its papers share."""
    import numpy as np

    if len(hits) <= 1:
        return [("Papers", list(hits))]
    texts = [f"{h.title}. {h.passages[0].text if h.passages else ''}" for h in hits]
    vectors = np.asarray(answerer.searcher.embedder.embed_documents(texts))
    groups: list[list[int]] = []
    for i in range(len(hits)):
        best, best_sim = None, 0.0
        for g, members in enumerate(groups):
            sim = float(np.mean([vectors[i] @ vectors[j] for j in members]))
            if sim > best_sim:
                best, best_sim = g, sim
        if best is not None and best_sim >= 0.45:
            groups[best].append(i)
        else:
            groups.append([i])
    weights = answerer.weights()
    themes = []
    for members in groups:
        theme = _theme_name([hits[i] for i in members], weights)
        themes.append((theme, [hits[i] for i in members]))
    return themes


def _theme_name(members: Sequence[PaperHit], weights: Any) -> str:
    from collections import Counter

    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for hit in members:
        words = re.findall(r"[A-Za-z][A-Za-z-]{3,}", hit.title)
        for word in words:
            stems = weights.tokenize([word])[0]
            if stems:
                counts[stems[0]] += 1
                surface.setdefault(stems[0], word)
    if not counts:
        return "Other"
    shared = [t for t, c in counts.items() if c == max(counts.values())]
    term = max(shared, key=weights.idf)
    if len(members) == 1:
        return short_title(members[0].title)
    return surface[term].capitalize()


def format_bibliography(citations: Sequence[Any]) -> str:
    lines = ["References:"]
    for c in citations:
        names = author_names(c.authors)
        authors = ", ".join(names[:6]) + (" et al." if len(names) > 6 else "")
        lines.append(f"[{c.n}] {safe_title(c.title)}. {authors}. ICML 2025. {c.url}")
    return "\n".join(lines)


def author_names(authors: Sequence[str]) -> list[str]:
    """Author entries as answers show them: an 'author' that addresses an AI model is dropped."""
    return [a for a in authors if not looks_like_injection(a)]


def bibtex(citations: Sequence[Any]) -> str:
    entries = []
    for c in citations:
        authors, title = author_names(c.authors), safe_title(c.title)
        surname = (authors[0].split()[-1] if authors else "anon").lower()
        surname = re.sub(r"[^a-z]", "", surname) or "anon"
        first_word = re.sub(r"[^a-z]", "", title.split()[0].lower()) if title else "paper"
        key = f"{surname}2025{first_word}"
        fields = [
            f"  title = {{{title}}}",
            f"  author = {{{' and '.join(authors)}}}",
            "  booktitle = {Proceedings of the 42nd International Conference on Machine Learning}",
            "  year = {2025}",
            f"  url = {{{c.url}}}",
        ]
        if getattr(c, "pmlr_url", ""):
            fields.append(f"  note = {{PMLR: {c.pmlr_url}}}")
        entries.append(f"@inproceedings{{{key},\n" + ",\n".join(fields) + "\n}")
    return "\n\n".join(entries)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
