"""The BM25 index and the local table of chunks, kept beside the store.

Built from the store's own documents, so it can always be rebuilt; a fingerprint of the store's
chunk ids tells when it is stale. The table also gives the retriever each chunk's paper and
offsets without a round trip to Chroma.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from rag.records import embedding_text
from rag.store.chroma import PaperStore, StoredChunk
from rag.text.names import NameIndex
from rag.text.terms import tokenize

FORMAT_VERSION = 4  # 4: single letters hyphenated to a word are one term


def fingerprint(chunk_ids: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for chunk_id in sorted(chunk_ids):
        digest.update(chunk_id.encode())
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass
class ChunkTable:
    """Chunks in index order, with the metadata of their papers."""

    ids: list[str] = field(default_factory=list)
    paper_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    papers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_chunks(cls, chunks: Iterable[StoredChunk]) -> ChunkTable:
        table = cls()
        for chunk in sorted(chunks, key=lambda c: c.id):
            meta = chunk.metadata
            paper_id = str(meta.get("paper_id", ""))
            table.ids.append(chunk.id)
            table.paper_ids.append(paper_id)
            table.texts.append(chunk.document)
            table.starts.append(int(meta.get("start", 0)))
            table.ends.append(int(meta.get("end", 0)))
            if paper_id not in table.papers:
                table.papers[paper_id] = paper_metadata(meta)
        return table

    def __len__(self) -> int:
        return len(self.ids)


def paper_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """The paper-level fields stored on each of its chunks."""
    authors = str(meta.get("authors", ""))
    return {
        "title": str(meta.get("title", "")),
        "authors": [a for a in authors.split("; ") if a] if authors else [],
        "url": str(meta.get("url", "")),
        "pmlr_url": str(meta.get("pmlr_url", "")),
        "status": str(meta.get("status", "")),
        "venue": str(meta.get("venue", "")),
        "title_derived": bool(meta.get("title_derived", False)),
    }


class LexicalIndex:
    """BM25 over chunk texts (title included) plus the chunk table."""

    def __init__(self, table: ChunkTable, bm25: Any, fingerprint_: str, df: dict[str, int]) -> None:
        self.table = table
        self._bm25 = bm25
        self.fingerprint = fingerprint_
        self.df = df  # document frequency of each stemmed term (for IDF weights)
        self._row = {chunk_id: i for i, chunk_id in enumerate(table.ids)}

    @classmethod
    def build(cls, chunks: Iterable[StoredChunk]) -> LexicalIndex:
        import bm25s  # deferred: imports scipy (slow start)

        table = ChunkTable.from_chunks(chunks)
        bm25 = bm25s.BM25()
        df: Counter[str] = Counter()
        if len(table):
            corpus = [
                embedding_text(table.papers[pid]["title"], text)
                for pid, text in zip(table.paper_ids, table.texts, strict=True)
            ]
            tokens = tokenize(corpus)
            for doc in tokens:
                df.update(set(doc))
            bm25.index(tokens, show_progress=False)
        return cls(table, bm25, fingerprint(table.ids), dict(df))

    @cached_property
    def names(self) -> NameIndex:
        """Short names of the papers (built on first use)."""
        abstracts = {
            pid: " ".join(text for _, text in self.paper_chunks(pid)) for pid in self.table.papers
        }
        return NameIndex(self.table.papers, abstracts)

    def papers_with(self, term: str) -> set[str]:
        """Papers with a chunk (title included) that contains the stemmed `term`, or, for a
        phrase of stemmed terms ("state space"), whose title or abstract writes them in a row."""
        if " " in term:
            needle = f" {term} "
            return {pid for pid, stems in self._paper_stems.items() if needle in stems}
        vocab = self._bm25.vocab_dict if len(self.table) else {}
        if term not in vocab:
            return set()
        scores = np.asarray(self._bm25.get_scores([term]))
        return {self.table.paper_ids[i] for i in np.flatnonzero(scores > 0)}

    def document_frequency(self, term: str) -> int:
        """How many papers use `term` (a stemmed term, or a phrase of them: see `papers_with`)."""
        return len(self.papers_with(term)) if " " in term else self.df.get(term, 0)

    @cached_property
    def _paper_stems(self) -> dict[str, str]:
        """Each paper's title and abstract as its stemmed terms in order, space-separated and
        space-padded (a phrase is then a substring; BM25 indexes single terms only)."""
        stems = {}
        for pid, meta in self.table.papers.items():
            text = " ".join([meta.get("title", ""), *(t for _, t in self.paper_chunks(pid))])
            stems[pid] = " " + " ".join(tokenize([text])[0]) + " "
        return stems

    def rows_of(self, paper_id: str) -> list[int]:
        """The chunk-table rows of a paper, in abstract order."""
        return sorted(self._rows_by_paper.get(paper_id, []), key=lambda i: self.table.starts[i])

    def paper_chunks(self, paper_id: str) -> list[tuple[int, str]]:
        """(offset in the abstract, text) of each stored chunk of a paper, in abstract order."""
        return [(self.table.starts[i], self.table.texts[i]) for i in self.rows_of(paper_id)]

    @cached_property
    def _rows_by_paper(self) -> dict[str, list[int]]:
        rows: dict[str, list[int]] = {}
        for i, paper_id in enumerate(self.table.paper_ids):
            rows.setdefault(paper_id, []).append(i)
        return rows

    def row(self, chunk_id: str) -> int | None:
        return self._row.get(chunk_id)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for `query` (zeros when no query term is indexed)."""
        if not len(self.table):
            return np.zeros(0, dtype=np.float32)
        tokens = tokenize([query])[0]
        vocab = self._bm25.vocab_dict
        known = [t for t in tokens if t in vocab]
        if not known:
            return np.zeros(len(self.table), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    # Persistence -------------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Write atomically: a temp directory renamed over the old one."""
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=directory.parent))
        try:
            if len(self.table):
                self._bm25.save(str(tmp / "bm25"))
            meta = {"format": FORMAT_VERSION, "fingerprint": self.fingerprint}
            (tmp / "table.json").write_text(json.dumps(self.table.__dict__, ensure_ascii=False))
            (tmp / "meta.json").write_text(json.dumps(meta))
            (tmp / "df.json").write_text(json.dumps(self.df, ensure_ascii=False))
            old = directory.with_name(directory.name + ".old")
            if directory.exists():
                shutil.rmtree(old, ignore_errors=True)
                os.replace(directory, old)
            os.replace(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    @classmethod
    def load(cls, directory: Path) -> LexicalIndex | None:
        """The saved index, or None when missing, unreadable or of another format."""
        try:
            meta = json.loads((directory / "meta.json").read_text())
            if meta.get("format") != FORMAT_VERSION:
                return None
            table = ChunkTable(**json.loads((directory / "table.json").read_text()))
            import bm25s  # deferred: imports scipy (slow start)

            bm25 = bm25s.BM25.load(str(directory / "bm25")) if len(table) else bm25s.BM25()
            df = json.loads((directory / "df.json").read_text())
            return cls(table, bm25, str(meta["fingerprint"]), df)
        except (OSError, ValueError, KeyError, TypeError):
            return None


def index_dir(home: Path, store: PaperStore) -> Path:
    """Where the lexical index of `store` lives (one per store location and collection)."""
    location = hashlib.sha256(store.location.encode()).hexdigest()[:8]
    return home / "index" / f"{store.name}-{location}"


def store_fingerprint(store: PaperStore) -> str:
    return fingerprint(store.iter_ids())


def open_lexical_index(home: Path, store: PaperStore, *, rebuild: bool = False) -> LexicalIndex:
    """The lexical index of `store`, rebuilt from the store's documents if missing or stale."""
    directory = index_dir(home, store)
    current = store_fingerprint(store)
    index = None if rebuild else LexicalIndex.load(directory)
    if index is None or index.fingerprint != current:
        index = LexicalIndex.build(store.iter_chunks(documents=True))
        index.save(directory)
    return index
