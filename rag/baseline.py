"""The tutorial LangChain RAG, evaluated beside PaperTalk on the same corpus, embeddings and LLM.

What "the common tutorial" does, and only that:
- one Document per paper (`Title. Abstract`), split by
  `RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)`;
- a `langchain_chroma.Chroma` collection of its own (embedded, under `<home>/baseline`, default
  distance), embedded with PaperTalk's embedding model through a small LangChain `Embeddings`;
- `similarity_search(question, k=4)` on the raw question (no history, no query rewriting);
- the one-paragraph "use the following pieces of context" prompt (prompts/baseline_rag.txt) as
  one user message to the same LLM; citations = the retrieved chunks' papers;
- it refuses only when the LLM says so (`rag.refusal.is_model_refusal`, e.g. "I don't know").
With `extractive` (no LLM) its answer is the first sentence of each retrieved chunk, which is what
the tutorial pipeline amounts to without a generator.

The corpus is read back from PaperTalk's own store (its chunk table), so both systems always see
the same papers. Re-runs only embed chunks the collection lacks and drop those no longer in the
corpus. Answer sentences are labelled supported/weak/unsupported against the retrieved chunks by
the labeller PaperTalk uses, so the support metric compares like with like.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.embeddings import Embeddings

from rag.errors import PaperTalkError
from rag.evaluation import RANK_DEPTH, QAItem, QuestionResult

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
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

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
    from rag.embeddings import model_identity, resolve_model_dir

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


class BaselineRAG:
    """The tutorial pipeline. `generate(messages)` streams text (None = extractive)."""

    def __init__(
        self,
        vectorstore: Any,
        embedder: Any,
        generate: Callable[[list[Any]], Any] | None,
        label: str,
    ) -> None:
        """`label` is the LLM's label (the same LLM as PaperTalk's)."""
        self.vectorstore = vectorstore
        self.embedder = embedder
        self.generate = generate
        self.label = label

    @classmethod
    def open(cls, settings: Any, answerer: Any) -> BaselineRAG:
        """A baseline sharing `answerer`'s embedder and LLM, in `<home>/baseline`."""
        from chromadb.config import Settings as ChromaSettings
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
        generate = None if answerer.is_extractive else answerer.generate
        return cls(store, answerer.searcher.embedder, generate, answerer.llm_label)

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
        from rag.prompts import render
        from rag.refusal import is_model_refusal

        started = time.perf_counter()
        timings: dict[str, float] = {}
        chunks = self.vectorstore.similarity_search(question, k=K)
        timings["retrieve"] = _ms(started)
        papers = list(dict.fromkeys(d.metadata["paper_id"] for d in chunks))
        if self.generate is None:
            text = extractive_answer(chunks)
            timings["first_token"] = timings["total"] = _ms(started)
            return BaselineAnswer(text, False, papers, chunks, timings)
        from langchain_core.messages import HumanMessage

        context = "\n\n".join(d.page_content for d in chunks)
        messages = [
            HumanMessage(content=render("baseline_rag", context=context, question=question))
        ]
        text = ""
        try:
            for piece in self.generate(messages):
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

    def support_labels(self, answer: BaselineAnswer) -> list[str]:
        """Each answer sentence labelled against the retrieved chunks (PaperTalk's labeller)."""
        from rag.chunking import split_sentences
        from rag.citations import EmbeddingSimilarity, resolve_citations

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


def extractive_answer(chunks: Sequence[Any]) -> str:
    """The first sentence of each retrieved chunk (duplicates dropped)."""
    from rag.chunking import split_sentences

    sentences: list[str] = []
    for document in chunks:
        text = " ".join(document.page_content.split())
        spans = split_sentences(text)
        first = text[spans[0].start : spans[0].end] if spans else text
        if first and first not in sentences:
            sentences.append(first)
    return " ".join(sentences)


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
