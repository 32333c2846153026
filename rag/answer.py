"""The answering chain: standalone query → hybrid retrieval → numbered context → generation
(streamed) → system-side citations, support labels and refusals.

`stream_answer` yields events (for CLIs and UIs); `answer` returns the final `Answer`. Both take
optional `llm` and `searcher` so tests can pass their own; defaults are built from settings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rag.citations import (
    SUPPORTED,
    WEAK,
    EmbeddingSimilarity,
    render_sentence,
    resolve_citations,
)
from rag.context import ContextPassage, TermWeights, build_context, format_passages
from rag.conversation import (
    Turn,
    is_about_the_last_paper,
    is_followup,
    rewrite_is_faithful,
    standalone_query,
)
from rag.errors import PaperTalkError
from rag.extractive import compose_extractive
from rag.injection import guard_generated, safe_title
from rag.llm import EXTRACTIVE, check_backend, parse_llm_spec
from rag.prompts import render
from rag.questions import clean_question
from rag.records import PaperHit
from rag.refusal import CANNOT_ANSWER, check_answerable, is_model_refusal
from rag.retrieval import HybridSearcher, SearchFilters
from rag.settings import Settings

Mode = Literal["ask", "compare", "summarize"]
MODES: tuple[str, ...] = ("ask", "compare", "summarize")


@dataclass
class Citation:
    n: int
    paper_id: str
    title: str
    authors: list[str]
    url: str
    passage: str
    attributed: bool
    status: str = ""
    pmlr_url: str = ""
    spans: list[tuple[int, int]] = field(default_factory=list)  # passage offsets in abstract
    supporting: list[str] = field(default_factory=list)  # answer sentences citing it

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "paper_id": self.paper_id,
            "title": self.title,
            "authors": self.authors,
            "url": self.url,
            "passage": self.passage,
            "attributed": self.attributed,
        }


@dataclass
class AnswerSentence:
    text: str
    citations: list[int]
    support: str

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "citations": self.citations, "support": self.support}


@dataclass
class Answer:
    question: str
    answer: str
    mode: str
    llm: str
    refused: bool
    citations: list[Citation] = field(default_factory=list)
    sentences: list[AnswerSentence] = field(default_factory=list)
    related: list[PaperHit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    query: str = ""
    error: str | None = None
    extractive: bool = False
    bibtex: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "mode": self.mode,
            "llm": self.llm,
            "refused": self.refused,
            "citations": [c.to_json() for c in self.citations],
            "sentences": [s.to_json() for s in self.sentences],
            "related": [{"paper_id": h.paper_id, "title": h.title} for h in self.related],
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
        }

    @property
    def cited_paper_ids(self) -> list[str]:
        return [c.paper_id for c in self.citations]


@dataclass
class AnswerEvent:
    """`retrieved` (hits known), `token` (a piece of generated text), `final` (the Answer)."""

    kind: Literal["retrieved", "token", "final"]
    text: str = ""
    hits: list[PaperHit] = field(default_factory=list)
    answer: Answer | None = None


class Answerer:
    """Holds the searcher, the LLM and helpers for one settings object; answers questions."""

    def __init__(
        self,
        settings: Settings,
        *,
        searcher: HybridSearcher | None = None,
        llm: Any = None,
        llm_spec: str | None = None,
    ) -> None:
        from rag.retrieval import open_searcher

        self.settings = settings
        self.searcher = searcher or open_searcher(settings)
        self.spec = parse_llm_spec(llm_spec or settings.llm)
        if llm is None:
            check_backend(self.spec)
        self._llm = llm
        self._llm_ready = llm is not None or self.spec.kind == EXTRACTIVE

    @property
    def llm_label(self) -> str:
        return self.spec.label

    @property
    def llm(self) -> Any:
        if not self._llm_ready:
            from rag.llm import make_chat_model

            self._llm = make_chat_model(self.spec, self.settings)
            self._llm_ready = True
        return self._llm

    @property
    def is_extractive(self) -> bool:
        return self.spec.kind == EXTRACTIVE and self._llm is None

    def weights(self) -> TermWeights:
        from rag.lexical import tokenize

        index = self.searcher.lexical
        return TermWeights(tokenize, index.df, len(index.table))

    def count_tokens(self, text: str) -> int:
        # ~0.75 words per token for English prose; cheap and close enough for budgeting.
        return int(len(text.split()) * 1.35) + 1

    # ------------------------------------------------------------------------------------------
    def stream(
        self,
        question: str,
        *,
        mode: str = "ask",
        history: Sequence[Turn] = (),
        history_papers: Sequence[str] = (),
        filters: SearchFilters | None = None,
    ) -> Iterator[AnswerEvent]:
        started = time.perf_counter()
        question = clean_question(question)
        if mode not in MODES:
            raise PaperTalkError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        timings: dict[str, float] = {}
        result = Answer(question, "", mode, self.llm_label, False, extractive=self.is_extractive)

        query = self._retrieval_query(question, history)
        result.query = query
        weights = self.weights()
        hits = self._retrieve(question, query, mode, history, history_papers, filters)
        timings["retrieve"] = _ms(started)
        yield AnswerEvent("retrieved", hits=hits)

        budget = self.settings.context_tokens
        if self.is_extractive or mode != "ask":
            budget = max(budget, 600)
        per_paper = 2 if mode == "ask" else 3
        passages = build_context(
            query,
            hits,
            weights,
            self.count_tokens,
            budget_tokens=budget,
            max_sentences_per_paper=per_paper,
        )
        refusal = self._refusal_reason(question, query, hits, passages, weights, mode)
        if refusal is not None:
            result.refused = True
            result.answer = CANNOT_ANSWER
            result.related = hits[:3]
            timings["first_token"] = _ms(started)
            timings["total"] = _ms(started)
            result.timings_ms = timings
            yield AnswerEvent("final", answer=result)
            return

        from rag import modes

        if mode == "compare":
            yield from modes.stream_compare(
                self, question, hits, passages, result, started, timings
            )
            return
        if mode == "summarize":
            yield from modes.stream_summarize(
                self, question, hits, passages, result, started, timings
            )
            return

        raw = ""
        if self.is_extractive:
            raw = compose_extractive(passages)
            timings["first_token"] = _ms(started)
            yield AnswerEvent("token", text=raw)
        else:
            messages = self.messages(
                "answer_user", passages=format_passages(passages), question=question
            )
            try:
                for piece in self.generate(messages):
                    if not raw:
                        timings["first_token"] = _ms(started)
                    raw += piece
                    yield AnswerEvent("token", text=piece)
            except PaperTalkError as exc:
                result.error = str(exc)
                result.related = hits
                timings.setdefault("first_token", _ms(started))
                timings["total"] = _ms(started)
                result.timings_ms = timings
                yield AnswerEvent("final", answer=result)
                return
            timings.setdefault("first_token", _ms(started))
        self.finish(result, raw, passages, hits)
        timings["total"] = _ms(started)
        result.timings_ms = timings
        yield AnswerEvent("final", answer=result)

    def answer(self, question: str, **kwargs: Any) -> Answer:
        final = None
        for event in self.stream(question, **kwargs):
            if event.kind == "final":
                final = event.answer
        assert final is not None
        return final

    # Steps ------------------------------------------------------------------------------------
    def _retrieval_query(self, question: str, history: Sequence[Turn]) -> str:
        query = standalone_query(question, history)
        if history and is_followup(question) and not self.is_extractive and self.settings.condense:
            condensed = self._condense(question, history)
            if condensed and condensed.lower() != question.lower():
                query = f"{condensed} {query}"
        return query

    def _condense(self, question: str, history: Sequence[Turn]) -> str:
        lines = "\n".join(f"User: {q}\nAssistant: {a}" for q, a in history[-2:])
        try:
            text = "".join(
                self.generate(
                    self.raw_messages(render("condense", history=lines, question=question)),
                    max_tokens=48,
                )
            )
        except PaperTalkError:
            return ""
        text = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not 3 <= len(text) <= 300 or not rewrite_is_faithful(text, question, history[-2:]):
            return ""
        return text

    def _retrieve(
        self,
        question: str,
        query: str,
        mode: str,
        history: Sequence[Turn],
        history_papers: Sequence[str],
        filters: SearchFilters | None,
    ) -> list[PaperHit]:
        k = self.settings.passages if mode == "ask" else max(self.settings.passages, 6)
        hits = self.searcher.search(query, k, filters)
        if mode == "compare":
            named = self.named_papers(question)
            if len(named) >= 2:
                return self.searcher.search(
                    query, len(named), SearchFilters(paper_ids=frozenset(named))
                )
        if history and is_followup(question):
            remembered = list(history_papers) or self.named_papers(
                " ".join(a for _, a in history[-1:]) + " " + " ".join(q for q, _ in history[-1:])
            )
            if remembered:
                boosted = self.searcher.search(
                    query, len(remembered), SearchFilters(paper_ids=frozenset(remembered))
                )
                if boosted and len(remembered) == 1 and is_about_the_last_paper(question):
                    return boosted  # other papers' passages would only invite conflation
                boosted_ids = {h.paper_id for h in boosted}
                hits = boosted + [h for h in hits if h.paper_id not in boosted_ids]
                hits = hits[:k]
        return hits

    def named_papers(self, text: str) -> list[str]:
        """Papers whose short name (title before ':' or a method name) the text mentions."""
        return self.searcher.lexical.names.papers_named_in(text)

    def _refusal_reason(
        self,
        question: str,
        query: str,
        hits: Sequence[PaperHit],
        passages: Sequence[ContextPassage],
        weights: TermWeights,
        mode: str,
    ) -> str | None:
        if not hits or not passages:
            return "nothing retrieved"
        if max(h.dense_similarity for h in hits) < self.settings.min_similarity:
            return "nothing relevant enough"
        if mode != "ask":
            return None
        verdict = check_answerable(
            query, passages, weights, min_coverage=self.settings.min_coverage
        )
        return None if verdict.answerable else verdict.reason

    # LLM calls --------------------------------------------------------------------------------
    def raw_messages(self, user: str) -> list[Any]:
        from langchain_core.messages import HumanMessage

        return [HumanMessage(content=user)]

    def messages(self, prompt: str, **values: str) -> list[Any]:
        from langchain_core.messages import HumanMessage, SystemMessage

        return [
            SystemMessage(content=render("answer_system")),
            HumanMessage(content=render(prompt, **values)),
        ]

    def generate(self, messages: list[Any], *, max_tokens: int | None = None) -> Iterator[str]:
        """Stream text from the LLM; backend failures become one-line PaperTalkErrors."""
        llm = self.llm
        if llm is None:
            raise PaperTalkError("the extractive backend does not generate text")
        kwargs: dict[str, Any] = {}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
            if self.spec.kind == "openai":
                kwargs["extra_body"] = {"max_tokens": max_tokens}
        try:
            for chunk in llm.stream(messages, **kwargs):
                text = chunk.content if isinstance(chunk.content, str) else ""
                if text:
                    yield text
        except PaperTalkError:
            raise
        except Exception as exc:
            raise PaperTalkError(describe_llm_error(self.llm_label, exc)) from exc

    # Finishing --------------------------------------------------------------------------------
    def finish(
        self, result: Answer, raw: str, passages: Sequence[ContextPassage], hits: Sequence[PaperHit]
    ) -> None:
        """Citations, support labels and refusal detection for a generated or extractive text."""
        if not raw.strip() or (not result.extractive and is_model_refusal(raw)):
            result.refused = True
            result.answer = CANNOT_ANSWER
            result.related = list(hits[:3])
            return
        raw = strip_echoed_titles(raw, [p.title for p in passages])
        if not result.extractive:
            raw = self.guard(raw, passages, result.question, result.query)
        self._cite(result, raw, passages)
        if not result.extractive and not any(
            s.support in (SUPPORTED, WEAK) for s in result.sentences
        ):
            # Nothing the model wrote is backed by a passage: quote the passages instead.
            result.extractive = True
            result.llm = f"{self.llm_label} (extractive fallback)"
            self._cite(result, compose_extractive(passages), passages)
        if not any(s.citations for s in result.sentences):
            # Nothing said could be tied to a paper: that is not an answer.
            result.refused = True
            result.answer = CANNOT_ANSWER
            result.sentences = []
            result.citations = []
            result.related = list(hits[:3])

    def guard(self, text: str, passages: Sequence[ContextPassage], *questions: str) -> str:
        """Generated text without sentences that follow an instruction or are not about the
        passages or the question (rag/injection.py); empty when nothing is left."""
        weights = self.weights()
        shown = [safe_title(p.title) + " " + p.text for p in passages]
        known = weights.terms(" ".join([*shown, *questions]))
        return guard_generated(text, weights.terms, known)

    def _cite(self, result: Answer, raw: str, passages: Sequence[ContextPassage]) -> None:
        """Fill the answer's sentences, citations and text from `raw` (with [n] markers)."""
        similarity = EmbeddingSimilarity(self.searcher.embedder.embed_documents)
        passage_texts = [[s.text for s in p.sentences] for p in passages]
        resolved = resolve_citations(raw, passage_texts, [p.paper_id for p in passages], similarity)
        by_ref: dict[int, Citation] = {}
        result.sentences = []
        for sentence in resolved.sentences:
            refs = [resolved.passage_to_ref[n] for n in sentence.passages]
            result.sentences.append(
                AnswerSentence(sentence.text, sorted(set(refs)), sentence.support)
            )
            for n in sentence.passages:
                ref = resolved.passage_to_ref[n]
                passage = passages[n - 1]
                citation = by_ref.get(ref)
                if citation is None:
                    citation = by_ref[ref] = _citation(ref, passage, sentence.attributed)
                elif not sentence.attributed:
                    citation.attributed = False
                citation.supporting.append(sentence.text)
        result.citations = [by_ref[r] for r in sorted(by_ref)]
        result.answer = " ".join(render_sentence(s.text, s.citations) for s in result.sentences)


def _citation(ref: int, passage: ContextPassage, attributed: bool) -> Citation:
    hit = passage.hit
    return Citation(
        n=ref,
        paper_id=hit.paper_id,
        title=hit.title,
        authors=list(hit.authors),
        url=hit.url,
        passage=passage.text,
        attributed=attributed,
        status=hit.status,
        pmlr_url=hit.pmlr_url,
        spans=[(s.start, s.end) for s in passage.sentences],
    )


def strip_echoed_titles(text: str, titles: Sequence[str]) -> str:
    """Remove passage titles a small model copies into its answer ('[1] "Title": ...'): their
    punctuation would split sentences and they are not claims."""
    import re

    for title in sorted(set(titles), key=len, reverse=True):
        if title:
            text = re.sub(r'["“]?' + re.escape(title) + r'["”]?\s*:?', " ", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def describe_llm_error(label: str, exc: BaseException) -> str:
    name = type(exc).__name__
    text = (str(exc).strip().splitlines() or [""])[0][:200]
    if "Connection" in name or "connect" in text.lower():
        return f"the LLM backend {label} is unreachable ({text or name})"
    if "Timeout" in name or "timed out" in text.lower():
        return f"the LLM backend {label} timed out"
    return f"the LLM backend {label} failed: {name}: {text}"


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def supported_share(answer: Answer) -> float:
    if not answer.sentences:
        return 0.0
    return sum(1 for s in answer.sentences if s.support == SUPPORTED) / len(answer.sentences)
