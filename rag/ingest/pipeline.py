"""Ingestion: papers → chunks → vectors in the store, as an idempotent upsert keyed on paper id.

A paper whose content hash matches what the store holds is not embedded again; a changed paper
is re-embedded and its old chunks removed; an interrupted run is repaired by the next one (a
paper with chunks of mixed hashes or a missing chunk counts as changed).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TextIO

from tqdm import tqdm

from rag.embed.base import Embedder, resolve_model_dir
from rag.embed.base import TokenCounter as ModelTokenCounter
from rag.embed.factory import make_embedder
from rag.errors import PaperTalkError
from rag.ingest.chunking import TokenCounter, chunk_abstract
from rag.ingest.loaders import Problem, load_many
from rag.records import Chunk, Paper, embedding_text
from rag.store.chroma import PaperStore, StoreLayout, describe_location
from rag.store.lexical import LexicalIndex, index_dir, open_lexical_index

PROGRESS_MIN_PAPERS = 50
GROUP_CHUNKS = 256
Progress = bool | Literal["lines"]


@dataclass
class IngestReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    pruned: int = 0
    chunks_embedded: int = 0
    skipped: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    embed_seconds: float = 0.0

    @property
    def total_papers(self) -> int:
        return self.added + self.updated + self.unchanged

    def summary_line(self) -> str:
        line = (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{len(self.skipped)} skipped"
        )
        if self.pruned:
            line += f", {self.pruned} pruned"
        return f"{line} ({self.chunks_embedded} chunks embedded in {self.seconds:.1f} s)"


@dataclass
class _StoredPaper:
    hashes: set[str] = field(default_factory=set)
    chunk_ids: list[str] = field(default_factory=list)
    expected_chunks: int = 0


def paper_hash(paper: Paper) -> str:
    """Hash of everything about a paper that ends up in its chunks."""
    digest = hashlib.sha256()
    for value in (
        paper.id,
        paper.title,
        paper.abstract,
        "; ".join(paper.authors),
        paper.url,
        paper.pmlr_url,
        paper.status,
        str(paper.title_derived),
        *([paper.venue] if paper.venue else []),  # absent venues keep earlier hashes valid
    ):
        digest.update(value.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def chunk_id(paper_id: str, content_hash: str, index: int) -> str:
    return f"{paper_id}:{content_hash}:{index}"


def chunk_metadata(paper: Paper, chunk: Chunk, content_hash: str, n_chunks: int) -> dict[str, Any]:
    return {
        "paper_id": paper.id,
        "paper_hash": content_hash,
        "chunk_index": chunk.index,
        "n_chunks": n_chunks,
        "title": paper.title,
        "title_derived": paper.title_derived,
        "authors": "; ".join(paper.authors),
        "url": paper.url,
        "pmlr_url": paper.pmlr_url,
        "status": paper.status,
        "venue": paper.venue,
        "start": chunk.start,
        "end": chunk.end,
    }


def _stored_papers(store: PaperStore) -> dict[str, _StoredPaper]:
    papers: dict[str, _StoredPaper] = {}
    for chunk in store.iter_chunks(documents=False):
        meta = chunk.metadata
        entry = papers.setdefault(str(meta.get("paper_id", "")), _StoredPaper())
        entry.hashes.add(str(meta.get("paper_hash", "")))
        entry.chunk_ids.append(chunk.id)
        entry.expected_chunks = int(meta.get("n_chunks", 0))
    return papers


@contextmanager
def ingest_lock(home: Path, location: str) -> Iterator[None]:
    """One ingest at a time per home directory; a second one is refused with a clear message."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "ingest.lock"
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PaperTalkError(
                f"another `papertalk ingest` is writing to {location}; "
                "wait for it to finish and run this one again"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ingest_papers(
    papers: Sequence[Paper],
    store: PaperStore,
    embedder: Embedder,
    count_tokens: TokenCounter,
    *,
    home: Path,
    chunk_tokens: int,
    overlap_sentences: int = 0,
    prune: bool = False,
    progress: Progress = True,
    on_progress: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Upsert `papers` into `store`, then bring the lexical index up to date.

    `progress`: a bar (True), plain lines for logs ("lines") or nothing (False), shown for runs
    of at least PROGRESS_MIN_PAPERS papers. `on_progress(done_chunks, total_chunks)` is called
    after each stored group (for UIs).
    """
    started = time.perf_counter()
    report = IngestReport()
    stored = _stored_papers(store)

    pending: list[tuple[Paper, str, list[Chunk]]] = []
    for paper in papers:
        content_hash = paper_hash(paper)
        existing = stored.get(paper.id)
        if (
            existing is not None
            and existing.hashes == {content_hash}
            and len(existing.chunk_ids) == existing.expected_chunks
        ):
            report.unchanged += 1
            continue
        if existing is None:
            report.added += 1
        else:
            report.updated += 1
        chunks = chunk_abstract(
            paper.id,
            paper.title,
            paper.abstract,
            count_tokens=count_tokens,
            max_tokens=chunk_tokens,
            overlap_sentences=overlap_sentences,
        )
        pending.append((paper, content_hash, chunks))

    total_chunks = sum(len(chunks) for _, _, chunks in pending)
    bar = _progress_bar(
        total_chunks, enabled=progress if len(pending) >= PROGRESS_MIN_PAPERS else False
    )
    try:
        for group in _groups(pending, GROUP_CHUNKS):
            ids: list[str] = []
            texts: list[str] = []
            documents: list[str] = []
            metadatas: list[dict[str, Any]] = []
            stale: list[str] = []
            for paper, content_hash, chunks in group:
                for chunk in chunks:
                    ids.append(chunk_id(paper.id, content_hash, chunk.index))
                    texts.append(embedding_text(paper.title, chunk.text))
                    documents.append(chunk.text)
                    metadatas.append(chunk_metadata(paper, chunk, content_hash, len(chunks)))
                old = stored.get(paper.id)
                if old is not None:
                    keep = set(ids)
                    stale.extend(cid for cid in old.chunk_ids if cid not in keep)
            t0 = time.perf_counter()
            vectors = embedder.embed_documents(texts)
            report.embed_seconds += time.perf_counter() - t0
            store.upsert(ids, vectors, documents, metadatas)
            if stale:
                store.delete(stale)
            report.chunks_embedded += len(ids)
            if bar is not None:
                bar.update(len(ids))
            if on_progress is not None:
                on_progress(report.chunks_embedded, total_chunks)
    finally:
        if bar is not None:
            bar.close()

    if prune:
        keep_ids = {paper.id for paper in papers}
        doomed = [
            cid for pid, entry in stored.items() if pid not in keep_ids for cid in entry.chunk_ids
        ]
        report.pruned = sum(1 for pid in stored if pid not in keep_ids)
        if doomed:
            store.delete(doomed)

    refresh_lexical_index(home, store, force=bool(pending or report.pruned))
    report.seconds = time.perf_counter() - started
    return report


def refresh_lexical_index(home: Path, store: PaperStore, *, force: bool) -> LexicalIndex:
    """Rebuild the BM25 index from the store's documents when the store changed (or forced)."""

    if force:
        index = LexicalIndex.build(store.iter_chunks(documents=True))
        index.save(index_dir(home, store))
        return index
    return open_lexical_index(home, store)


def _groups(
    pending: list[tuple[Paper, str, list[Chunk]]], max_chunks: int
) -> Iterator[list[tuple[Paper, str, list[Chunk]]]]:
    group: list[tuple[Paper, str, list[Chunk]]] = []
    size = 0
    for item in pending:
        group.append(item)
        size += len(item[2])
        if size >= max_chunks:
            yield group
            group, size = [], 0
    if group:
        yield group


class ProgressLines:
    """Progress for logs and pipes: one line per tenth of the work (a bar needs a terminal)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self._stream = stream or sys.stderr
        self._next_tenth = 1
        self._started = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n
        tenth = self.done * 10 // self.total
        if tenth >= self._next_tenth:
            self._next_tenth = tenth + 1
            elapsed = time.perf_counter() - self._started
            print(
                f"embedding: {self.done}/{self.total} chunks ({100 * self.done // self.total}%, "
                f"{elapsed:.0f} s)",
                file=self._stream,
                flush=True,
            )

    def close(self) -> None:
        pass


def _progress_bar(total: int, *, enabled: Progress):  # type: ignore[no-untyped-def]
    if not enabled or total == 0:
        return None
    if enabled == "lines":
        return ProgressLines(total)
    return tqdm(total=total, unit="chunk", desc="embedding", file=sys.stderr, leave=False)


def run_ingest(
    settings: Any,
    paths: Sequence[Path],
    *,
    prune: bool = False,
    strict: bool = False,
    progress: Progress = True,
    embedder: Embedder | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    venue: str = "",
) -> IngestReport:
    """Load `paths` (the bundled corpus when empty) and ingest them into the configured store.
    `venue` is the venue of the papers whose records name none ("ICML 2025")."""

    loaded = load_many(list(paths) or [settings.corpus], strict=strict)
    if not loaded.papers:
        reasons = "; ".join(str(p) for p in loaded.skipped[:3])
        raise PaperTalkError(f"no usable papers in the input{': ' + reasons if reasons else ''}")
    venue = " ".join(venue.split())
    if venue:
        loaded.papers = [p if p.venue else replace(p, venue=venue) for p in loaded.papers]

    layout = StoreLayout.for_settings(settings)
    # The lock comes first: a second ingest must not even open the store another one writes.
    with ingest_lock(settings.home, describe_location(settings)):
        store = PaperStore.open(settings, layout, create=True)
        report = ingest_papers(
            loaded.papers,
            store,
            embedder or make_embedder(settings),
            ModelTokenCounter(resolve_model_dir(settings.embedding_model)),
            home=settings.home,
            chunk_tokens=settings.chunk_tokens,
            overlap_sentences=settings.chunk_overlap_sentences,
            prune=prune,
            progress=progress,
            on_progress=on_progress,
        )
    report.skipped = list(loaded.skipped)
    report.warnings = list(loaded.warnings)
    return report
