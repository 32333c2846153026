"""The tutorial LangChain RAG, evaluated beside PaperTalk on the same corpus, embeddings and LLM.

What "the common tutorial" does, and only that:
- one Document per paper (`Title. Abstract`), split by
  `RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)`;
- a `langchain_chroma.Chroma` collection of its own (embedded, under `<home>/baseline`, default
  distance), embedded with PaperTalk's embedding model through a small LangChain `Embeddings`;
- `similarity_search(question, k=4)` on the raw question (no history, no query rewriting);
- the one-paragraph "use the following pieces of context" prompt (prompts/baseline_rag.txt) as
  one user message to the same LLM; citations = the retrieved chunks' papers;
- it refuses only when the LLM says so (`rag.answer.refusal.is_model_refusal`, "I don't know").
With `extractive` (no LLM) it answers with PaperTalk's own extractive composer over its own
retrieved chunks (the same sentence scoring, context budget, quoting and citation resolution), so
the comparison measures retrieval and refusal, not two different ways of writing an answer; its
citations are then the papers its quoted sentences come from, as for PaperTalk.

The corpus is read back from PaperTalk's own store (its chunk table), so both systems always see
the same papers. Re-runs only embed chunks the collection lacks and drop those no longer in the
corpus. Answer sentences are labelled supported/weak/unsupported against the retrieved chunks by
the labeller PaperTalk uses, so the support metric compares like with like. Both systems run
in the same `papertalk eval --baseline` run.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import RecursiveCharacterTextSplitter

from rag.answer.chain import EXTRACTIVE_CONTEXT_TOKENS, EXTRACTIVE_SENTENCES, Answerer
from rag.answer.citations import EmbeddingSimilarity, cite_answer, resolve_citations
from rag.answer.context import build_context
from rag.answer.modes.extractive import compose_extractive
from rag.answer.refusal import is_model_refusal
from rag.embed.base import model_identity, resolve_model_dir
from rag.errors import PaperTalkError
from rag.eval.dataset import QAItem, QuestionResult
from rag.eval.runner import RANK_DEPTH
from rag.records import Answer, PaperHit, Passage
from rag.settings import Settings
from rag.text.sentences import split_sentences

CHUNK_SIZE = 1000
CHUNK_OVERLAP = 200
K = 4
RANK_CANDIDATES = 60  # chunks fetched to rank RANK_DEPTH distinct papers for the metrics
ADD_BATCH = 256


class EmbedderEmbeddings(Embeddings):
    """LangChain `Embeddings` over a PaperTalk embedder (`rag.embeddings.make_embedder`)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [[float(x) for x in v] for v in self.embedder.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.embedder.embed_query(text)]


@dataclass(frozen=True)
class CorpusPaper:
    paper_id: str
    title: str
    abstract: str


def papers_from_table(table: Any) -> list[CorpusPaper]:
    """Each paper's title and abstract, stitched back from the lexical index's chunk table
    (chunks carry their offsets in the abstract, so overlaps and gaps are handled)."""
    rows: dict[str, list[tuple[int, int, str]]] = {}
    for pid, text, start, end in zip(
        table.paper_ids, table.texts, table.starts, table.ends, strict=True
    ):
        rows.setdefault(pid, []).append((start, end, text))
    papers = []
    for pid in sorted(rows):
        abstract = ""
        for start, _end, text in sorted(rows[pid]):
            if start >= len(abstract):
                abstract += " " * (start - len(abstract)) + text
            else:
                abstract += text[len(abstract) - start :]
        papers.append(CorpusPaper(pid, table.papers[pid]["title"], abstract.strip()))
    return papers


def split_documents(papers: Sequence[CorpusPaper]) -> list[Any]:
    """The tutorial's documents and splitter: `RecursiveCharacterTextSplitter(1000, 200)`."""

    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    documents = [
        Document(
            page_content=document_text(p),
            metadata={"paper_id": p.paper_id, "title": p.title},
        )
        for p in papers
    ]
    return splitter.split_documents(documents)


def document_text(paper: CorpusPaper) -> str:
    """`Title. Abstract` as one paragraph. (With a blank line between them the splitter would
    cut there first and make most titles a chunk of their own, as abstracts are ~1,200
    characters.)"""
    title = paper.title.strip()
    if title and title[-1] not in ".?!":
        title += "."
    return f"{title} {paper.abstract}".strip()


def document_id(document: Any) -> str:
    digest = hashlib.sha256(document.metadata["paper_id"].encode() + b"\0")
    digest.update(document.page_content.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def collection_name(settings: Any) -> str:

    model = model_identity(resolve_model_dir(settings.embedding_model))
    variant = f"{settings.embedding_backend}{'-int8' if settings.embedding_quantize else ''}"
    slug = "".join(c if c.isalnum() else "-" for c in f"{model}-{variant}".lower()).strip("-")
    return f"baseline-{slug}-rc{CHUNK_SIZE}-{CHUNK_OVERLAP}"


@dataclass
class BaselineAnswer:
    answer: str
    refused: bool
    papers: list[str]  # retrieved papers = citations
    chunks: list[Any]  # the k retrieved Documents
    timings_ms: dict[str, float]
    error: str | None = None
    support: list[str] | None = None  # labels, when the composer already gave them


class BaselineRAG:
    """The tutorial pipeline, with PaperTalk's LLM (or extractive composer) and embedder."""

    def __init__(self, vectorstore: Any, answerer: Answerer) -> None:
        self.vectorstore = vectorstore
        self.answerer = answerer
        self.embedder = answerer.searcher.embedder
        self.label = answerer.llm_label

    @classmethod
    def open(cls, settings: Settings, answerer: Answerer) -> BaselineRAG:
        """A baseline sharing `answerer`'s embedder and LLM, in `<home>/baseline`."""
        from chromadb.config import Settings as ChromaSettings  # deferred: slow import
        from langchain_chroma import Chroma

        directory = settings.home / "baseline"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            store = Chroma(
                collection_name=collection_name(settings),
                embedding_function=EmbedderEmbeddings(answerer.searcher.embedder),
                persist_directory=str(directory),
                client_settings=ChromaSettings(anonymized_telemetry=False),
            )
        except Exception as exc:
            raise PaperTalkError(f"cannot open the baseline store in {directory}: {exc}") from exc
        return cls(store, answerer)

    # Index ------------------------------------------------------------------------------------
    def sync(
        self,
        papers: Sequence[CorpusPaper],
        on_progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """Make the collection hold exactly the chunks of `papers`; embeds only missing ones."""
        documents = split_documents(papers)
        wanted = {document_id(d): d for d in documents}
        existing = set(self.vectorstore.get(include=[])["ids"])
        stale = sorted(existing - set(wanted))
        for start in range(0, len(stale), 5000):
            self.vectorstore.delete(ids=stale[start : start + 5000])
        missing = [i for i in wanted if i not in existing]
        for start in range(0, len(missing), ADD_BATCH):
            ids = missing[start : start + ADD_BATCH]
            self.vectorstore.add_documents([wanted[i] for i in ids], ids=ids)
            if on_progress is not None:
                on_progress(min(start + ADD_BATCH, len(missing)), len(missing))
        return {"chunks": len(wanted), "added": len(missing), "removed": len(stale)}

    # Answering --------------------------------------------------------------------------------
    def ranking(self, question: str, depth: int = RANK_DEPTH) -> list[str]:
        """Distinct papers in similarity order (for the retrieval metrics)."""
        chunks = self.vectorstore.similarity_search(question, k=RANK_CANDIDATES)
        return list(dict.fromkeys(d.metadata["paper_id"] for d in chunks))[:depth]

    def answer(self, question: str) -> BaselineAnswer:

        started = time.perf_counter()
        timings: dict[str, float] = {}
        chunks = self.vectorstore.similarity_search(question, k=K)
        timings["retrieve"] = _ms(started)
        papers = list(dict.fromkeys(d.metadata["paper_id"] for d in chunks))
        if self.answerer.is_extractive:
            composed = self.compose(question, chunks)
            timings["first_token"] = timings["total"] = _ms(started)
            return BaselineAnswer(
                composed.answer,
                False,
                list(dict.fromkeys(composed.cited_paper_ids)),
                chunks,
                timings,
                support=[x.support for x in composed.sentences],
            )
        context = "\n\n".join(d.page_content for d in chunks)
        text = ""
        try:
            values = {"context": context, "question": question}
            for piece in self.answerer.generate("baseline", values):
                if not text:
                    timings["first_token"] = _ms(started)
                text += piece
        except PaperTalkError as exc:
            timings.setdefault("first_token", _ms(started))
            timings["total"] = _ms(started)
            return BaselineAnswer("", False, [], chunks, timings, error=str(exc))
        timings.setdefault("first_token", _ms(started))
        timings["total"] = _ms(started)
        text = text.strip()
        refused = is_model_refusal(text)
        return BaselineAnswer(text, refused, [] if refused else papers, chunks, timings)

    def compose(self, question: str, chunks: Sequence[Any]) -> Answer:
        """PaperTalk's extractive answer over these chunks: the same sentence scoring, context
        budget, quoting and citation resolution as `rag.answer.modes.ask` with `extractive`."""
        answer = Answer(question, "", "ask", self.label, False, extractive=True)
        passages = build_context(
            question,
            chunks_as_hits(chunks),
            self.answerer.weights(),
            self.answerer.count_tokens,
            budget_tokens=max(self.answerer.settings.context_tokens, EXTRACTIVE_CONTEXT_TOKENS),
            max_sentences_per_paper=EXTRACTIVE_SENTENCES,
        )
        raw = compose_extractive(passages, question, self.answerer.weights())
        if raw:
            cite_answer(answer, raw, passages, EmbeddingSimilarity(self.embedder.embed_documents))
        return answer

    def support_labels(self, answer: BaselineAnswer) -> list[str]:
        """Each answer sentence labelled against the retrieved chunks (PaperTalk's labeller)."""
        if answer.support is not None:
            return answer.support

        if answer.refused or not answer.answer or not answer.chunks:
            return []
        passages = [
            [d.page_content[s.start : s.end] for s in split_sentences(d.page_content)]
            for d in answer.chunks
        ]
        resolved = resolve_citations(
            answer.answer,
            passages,
            [d.metadata["paper_id"] for d in answer.chunks],
            EmbeddingSimilarity(self.embedder.embed_documents),
        )
        return [s.support for s in resolved.sentences]


def chunks_as_hits(chunks: Sequence[Any]) -> list[PaperHit]:
    """The retrieved chunks as paper hits (one per paper, chunks in retrieval order), without the
    `Title.` that opens a paper's first chunk: it is a heading, not a statement to quote."""
    hits: dict[str, PaperHit] = {}
    for rank, document in enumerate(chunks):
        paper_id, title = document.metadata["paper_id"], document.metadata.get("title", "")
        text = document.page_content
        heading = document_text(CorpusPaper(paper_id, title, "")).strip()
        if heading and text.startswith(heading):
            text = text[len(heading) :].lstrip()
        hit = hits.setdefault(
            paper_id, PaperHit(paper_id, title, [], "", "", score=1.0 / (1 + rank))
        )
        hit.passages.append(Passage(f"{paper_id}:{rank}", text, 0, len(text)))
    return list(hits.values())


class BaselineSystem:
    """The baseline as an evaluated system (`rag.evaluation.System`); ignores mode and history."""

    def __init__(self, baseline: BaselineRAG) -> None:
        self.baseline = baseline
        self.label = baseline.label

    def run(self, item: QAItem, mode: str) -> QuestionResult:
        ranked = self.baseline.ranking(item.question)
        answer = self.baseline.answer(item.question)
        return QuestionResult(
            item=item,
            ranked=ranked,
            answer=answer.answer,
            refused=answer.refused,
            cited=answer.papers,
            support=self.baseline.support_labels(answer),
            timings_ms=answer.timings_ms,
            mode="tutorial",
            error=answer.error,
        )


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
